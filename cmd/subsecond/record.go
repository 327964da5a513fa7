package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/subsecond/subsecond"
	"github.com/subsecond/subsecond/hoststate"
	"github.com/subsecond/subsecond/link"
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
	stateEvery := fs.Duration("state-interval", time.Second, "how often the host's state (per-CPU time, cgroups, interrupts, network, memory) is sampled beside perf, from 100ms to 10s; 0 for never")
	marks := fs.String("markers", hoststate.DefaultMarkerPattern, "kernel-log lines that become markers, a regular `expression`; empty for none")
	kmsg := fs.String("kmsg", "/dev/kmsg", "the kernel log followed for markers")
	labels := labelsFlag(fs, "a label key=value set on the host with each capture (zone=us-east-1a); repeat for more")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), `Usage: subsecond record [--dir DIR] [--upload URL [--token TOKEN] | --db PATH] [--host HOST] [--label KEY=VALUE…] [--keep 12h]

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

Beside perf, every --state-interval, record samples the host's state on the
same clock: per-CPU time as mpstat shows it (/proc/stat), cgroup counts
(/proc/cgroups; cgroup.stat's live and dying cgroups on cgroup v2),
interrupts and NET_RX/NET_TX softirqs per CPU, network devices' packets,
errors and drops, available memory and load; and it follows the kernel log
(--kmsg), each line matching --markers (by default NIC watchdogs and
resets, hung tasks, lockups and OOM kills) becoming a marker at once. Both
go where the captures go; what the server could not take is kept (up to an
hour of a 96-CPU host) and sent with the next batch, every 10 s.

Each capture carries the host's --label flags, set on the host as it is
stored (the fleet's views group and filter hosts by them), and its boot
time, read from /proc/stat's btime, from which the fleet reckons uptimes.

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
	if *stateEvery != 0 && (*stateEvery < hoststate.MinInterval || *stateEvery > hoststate.MaxInterval) {
		return fmt.Errorf("record: --state-interval %v: want 0 (never) or from %v to %v", *stateEvery, hoststate.MinInterval, hoststate.MaxInterval)
	}
	ls, err := labels.labels("record")
	if err != nil {
		return err
	}
	// The host's boot time goes with each capture, for the fleet's
	// uptimes; a host without /proc/stat sends none.
	boot, err := bootTime("/proc/stat")
	if err != nil {
		boot = 0
	}
	meta := captureMeta{host: *host, labels: ls, boot: boot}
	var match *regexp.Regexp
	if *marks != "" {
		var err error
		if match, err = regexp.Compile(*marks); err != nil {
			return fmt.Errorf("record: --markers: %w", err)
		}
	}
	stateHost := *host
	if stateHost == "" {
		// perf's header names the host by uname's nodename, as this does.
		h, err := os.Hostname()
		if err != nil {
			return fmt.Errorf("record: the host's name: %w (give --host)", err)
		}
		stateHost = h
	}
	state := record.StateOptions{Log: e.stderr}
	if *stateEvery != 0 {
		sampler, err := hoststate.New(hoststate.Options{Interval: *stateEvery})
		if err != nil {
			return fmt.Errorf("record: %w", err)
		}
		state.Sample = sampler.Run
	}
	if match != nil {
		state.Follow = func(ctx context.Context, emit func(subsecond.Marker) error) error {
			return hoststate.FollowKmsg(ctx, *kmsg, match, emit)
		}
	}
	opt := record.Options{Perf: *perf, Dir: *dir, Freq: *freq, Switch: *every, Keep: *keep, Log: e.stderr}
	if *upload != "" {
		u, err := url.Parse(*upload)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("record: --upload %q is not an http:// or https:// URL", *upload)
		}
		opt.Sink = uploadSink(u, *token, meta, uploadTimeout)
		state.SendSeries, state.SendMarkers = uploadState(u, *token, stateHost, uploadTimeout)
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
			s, err = openStore(ctx, e, *db, importOnly)
			return err
		}
		opt.Sink = func(ctx context.Context, name string, r io.Reader) error {
			return storeSink(s, meta, e.stdout)(ctx, name, r)
		}
		state.SendSeries = func(ctx context.Context, ss []subsecond.Series) (subsecond.SeriesAdded, error) {
			return s.AddSeries(ctx, stateHost, ss)
		}
		state.SendMarkers = func(ctx context.Context, ms []subsecond.Marker) error {
			_, err := s.AddMarkers(ctx, stateHost, ms)
			return err
		}
	}
	if state.Sample == nil && state.Follow == nil {
		return record.Run(ctx, opt)
	}
	// The host's state is recorded once perf runs (and the database is
	// open), until perf's recording ends.
	stateCtx, stopState := context.WithCancel(ctx)
	var stateDone sync.WaitGroup
	ready := opt.Ready
	opt.Ready = func() error {
		if ready != nil {
			if err := ready(); err != nil {
				return err
			}
		}
		if state.Sample == nil {
			state.Sample = func(ctx context.Context, _ func([]subsecond.Series) error) error { <-ctx.Done(); return nil }
		}
		stateDone.Add(1)
		go func() {
			defer stateDone.Done()
			record.RunState(stateCtx, state)
		}()
		return nil
	}
	err = record.Run(ctx, opt)
	stopState()
	stateDone.Wait()
	return err
}

// uploadState returns the senders of the host's series and markers to the
// server at base, each request within timeout (see post).
func uploadState(base *url.URL, token, host string, timeout time.Duration) (func(context.Context, []subsecond.Series) (subsecond.SeriesAdded, error), func(context.Context, []subsecond.Marker) error) {
	client := &http.Client{}
	send := func(ctx context.Context, route link.Route, body, answer any) error {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		return post(ctx, client, base, base.JoinPath(route.Path(host)), token, "application/json", bytes.NewReader(b), timeout, answer)
	}
	series := func(ctx context.Context, ss []subsecond.Series) (subsecond.SeriesAdded, error) {
		var a subsecond.SeriesAdded
		err := send(ctx, link.SeriesAPI, map[string]any{"series": ss}, &a)
		return a, err
	}
	marks := func(ctx context.Context, ms []subsecond.Marker) error {
		return send(ctx, link.MarkersAPI, map[string]any{"markers": ms}, nil)
	}
	return series, marks
}

// captureMeta is what record sends with each capture: the host (""
// for perf's), its labels and its boot time (Unix ns, 0 when unknown).
type captureMeta struct {
	host   string
	labels []subsecond.Label
	boot   int64
}

// storeSink imports each capture into s and prints its summary line.
func storeSink(s *store.Store, m captureMeta, out io.Writer) record.Sink {
	return func(ctx context.Context, name string, r io.Reader) error {
		p, existed, err := s.Import(ctx, r, store.ImportOptions{FileName: name, Host: m.host, Labels: m.labels, Boot: m.boot})
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
func uploadSink(base *url.URL, token string, m captureMeta, timeout time.Duration) record.Sink {
	client := &http.Client{}
	return func(ctx context.Context, name string, r io.Reader) error {
		u := base.JoinPath("api", "profiles")
		q := url.Values{"name": {strings.TrimSuffix(name, ".zst")}}
		if m.host != "" {
			q.Set("host", m.host)
		}
		for _, l := range m.labels {
			q.Add("label", l.String())
		}
		if m.boot != 0 {
			q.Set("boot", query.FormatWallTime(m.boot))
		}
		u.RawQuery = q.Encode()
		return post(ctx, client, base, u, token, "application/octet-stream", r, timeout, nil)
	}
}

// post sends body to u, on the server at base, within timeout, and reads
// the answer as the recorder's senders need it: 200 or 201 is nil, its
// JSON read into answer unless that is nil; 400, 413 or 415 (the server
// will refuse these bytes however often they come) wraps
// record.ErrRejected; 401 or 403 wraps record.ErrDenied; 429 or 503 with
// Retry-After is a *record.RetryAfterError; every error carries the
// server's own message.
func post(ctx context.Context, client *http.Client, base, u *url.URL, token, contentType string, body io.Reader, timeout time.Duration, answer any) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), body)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Content-Type", contentType)
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
	msg, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	if res.StatusCode == http.StatusOK || res.StatusCode == http.StatusCreated {
		if answer != nil {
			// What the answer says is told, not needed: one the
			// server wrote otherwise leaves answer as it was.
			_ = json.Unmarshal(msg, answer)
		}
		return nil
	}
	err = fmt.Errorf("upload: %s", res.Status)
	var e struct{ Error string }
	if json.Unmarshal(msg, &e) == nil && e.Error != "" {
		err = fmt.Errorf("upload: %s: %s", res.Status, e.Error)
	}
	switch res.StatusCode {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType:
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
