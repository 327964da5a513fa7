package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/query"
	"github.com/subsecond/subsecond/record"
	"github.com/subsecond/subsecond/store"
)

// runRecord implements `subsecond record [--dir DIR] [--upload URL --token
// TOKEN | --db PATH] [--host HOST] [--keep 12h] [--switch 2m] [--freq 49]`:
// perf records every CPU in captures of --switch, rotated by perf itself so
// no second is lost between them; each finished capture is converted,
// compressed and imported or uploaded in the background until SIGINT or
// SIGTERM, which finishes the last capture too.
func runRecord(ctx context.Context, e env) error {
	fs := flag.NewFlagSet("record", flag.ContinueOnError)
	db := dbFlag(fs)
	dir := fs.String("dir", "/var/tmp/subsecond-record", "working `directory` for perf's files and the converted captures")
	upload := fs.String("upload", "", "send each capture to the Subsecond server at this `URL` instead of the local database")
	token := fs.String("token", os.Getenv("SUBSECOND_TOKEN"), "bearer `token` for --upload ($SUBSECOND_TOKEN)")
	host := fs.String("host", "", "the host the captures are from (default: the hostname perf records)")
	keep := fs.Duration("keep", 12*time.Hour, "delete converted captures older than this, sent or not")
	every := fs.Duration("switch", 2*time.Minute, "length of one capture (perf record --switch-output)")
	freq := fs.Int("freq", 49, "sampling frequency per CPU, in Hz")
	perf := fs.String("perf", "perf", "the perf `command`")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), `Usage: subsecond record [--dir DIR] [--upload URL [--token TOKEN] | --db PATH] [--host HOST] [--keep 12h]

Records every CPU of this host with perf (as root, or with CAP_PERFMON, or
kernel.perf_event_paranoid <= 0) until interrupted:

  perf record -F 49 -a -g --all-cgroups -k CLOCK_REALTIME --switch-output=2m -o DIR/perf.data

perf starts a new file every two minutes without losing a sample; each
finished file is converted with 'perf script --header' (and -F +cgroup where
perf can print it) in the background,
compressed with zstd, imported into the local database (or uploaded with
--upload) and deleted. Converted captures stay in DIR for --keep, which
bounds the disk used. A file perf script cannot read (truncated by a full
disk or a kill) is tried once and set aside in DIR/rejected/, its reason in
DIR/rejected/NAME.reason.

One the server could not take (down, busy) waits in DIR/pending/ and is
offered again after a back-off (1 s doubling up to 5 min, with jitter, at
least the server's Retry-After); each upload must be answered within 2 min.
A 401 or 403 (wrong token) is said once and nothing more is sent in this
run. One the server refuses for good (not perf text, too large) is set
aside in DIR/rejected/. On SIGINT an upload in flight stops; record exits
non-zero naming the captures left in DIR/pending/, which the next run sends.

Less than 512 MiB free in DIR pauses recording (perf is stopped cleanly)
until the space is back. perf gets SIGTERM if record dies, and a perf.data
left by a killed record is finished at the next start. The database is
created only once perf runs.

Flags:`)
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, e, e.args); err != nil {
		return err
	}
	if err := checkArgs(fs, 0, 0, ""); err != nil {
		return err
	}
	if *host != "" {
		if err := query.CheckHost(*host); err != nil {
			return fmt.Errorf("record: %w", err)
		}
	}
	if *every < time.Second || *keep < *every || *freq < 1 || *freq > 100000 {
		return errors.New("record: --switch must be at least 1s, --keep at least --switch, --freq from 1 to 100000")
	}
	opt := record.Options{Perf: *perf, Dir: *dir, Freq: *freq, Switch: *every, Keep: *keep, Log: e.stderr}
	if *upload != "" {
		u, err := url.Parse(*upload)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("record: --upload %q is not an http:// or https:// URL", *upload)
		}
		opt.Sink = uploadSink(u, *token, *host, uploadTimeout)
	} else {
		// The database is opened once perf runs: a recorder that cannot
		// start leaves no empty one behind.
		var s *store.Store
		defer func() {
			if s != nil {
				s.Close()
			}
		}()
		opt.Ready = func() (err error) {
			s, err = openStore(ctx, e, *db, store.Options{})
			return err
		}
		opt.Sink = func(ctx context.Context, name string, r io.Reader) error {
			return storeSink(s, *host, e.stdout)(ctx, name, r)
		}
	}
	return record.Run(ctx, opt)
}

// storeSink imports each capture into s and prints its summary line.
func storeSink(s *store.Store, host string, out io.Writer) record.Sink {
	return func(ctx context.Context, name string, r io.Reader) error {
		p, existed, err := s.Import(ctx, r, store.ImportOptions{FileName: name, Host: host})
		if errors.Is(err, subsecond.ErrNotPerf) || errors.Is(err, subsecond.ErrInvalid) || errors.Is(err, subsecond.ErrTooLarge) {
			return fmt.Errorf("%w: %w", record.ErrRejected, err)
		}
		if err != nil {
			return err
		}
		fmt.Fprintln(out, summary(p, existed))
		return nil
	}
}

// uploadTimeout bounds one upload, from connecting to the server's answer:
// a server that takes the connection and never answers holds up the
// captures behind it no longer than this.
const uploadTimeout = 2 * time.Minute

// uploadSink posts each capture to the server at base, as curl would, each
// request within timeout. A 401 or 403 wraps record.ErrDenied; a 429 or 503
// with Retry-After is a *record.RetryAfterError.
func uploadSink(base *url.URL, token, host string, timeout time.Duration) record.Sink {
	client := &http.Client{}
	return func(ctx context.Context, name string, r io.Reader) error {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		u := base.JoinPath("api", "profiles")
		q := url.Values{"name": {strings.TrimSuffix(name, ".zst")}}
		if host != "" {
			q.Set("host", host)
		}
		u.RawQuery = q.Encode()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), r)
		if err != nil {
			return err
		}
		req.Header.Set("Accept", "application/json")
		req.Header.Set("Content-Type", "application/octet-stream")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := client.Do(req)
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("upload: no answer from %s within %v", base.Host, timeout)
		}
		if err != nil {
			return fmt.Errorf("upload: %w", err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
		if res.StatusCode == http.StatusOK || res.StatusCode == http.StatusCreated {
			return nil
		}
		err = fmt.Errorf("upload: %s", res.Status)
		var e struct{ Error string }
		if json.Unmarshal(body, &e) == nil && e.Error != "" {
			err = fmt.Errorf("upload: %s: %s", res.Status, e.Error)
		}
		switch res.StatusCode {
		case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType:
			// The server will refuse these bytes however often they come.
			return fmt.Errorf("%w: %w", record.ErrRejected, err)
		case http.StatusUnauthorized, http.StatusForbidden:
			return fmt.Errorf("%w: %w (check --token or $SUBSECOND_TOKEN)", record.ErrDenied, err)
		case http.StatusTooManyRequests, http.StatusServiceUnavailable:
			if d, ok := retryAfter(res.Header.Get("Retry-After"), time.Now()); ok {
				return &record.RetryAfterError{After: d, Err: err}
			}
		}
		return err
	}
}

// retryAfter parses a Retry-After header, seconds or an HTTP date, as the
// wait from now.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return time.Duration(n) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}
