// Package record is the recorder for the host under investigation: it runs
// perf record system-wide with perf's own file rotation, so that no second
// is lost between captures, and in the background turns each finished file
// into compressed perf script text, hands it to a Sink (the local store or
// a server) and deletes the raw file.
//
//	err := record.Run(ctx, record.Options{Dir: "/var/tmp/subsecond", Sink: sink, Log: os.Stderr})
//
// Files in Dir: perf.data is the capture being written; perf.data.<time>
// are finished captures waiting to be converted; pending/*.perf.txt.zst are
// converted captures not yet accepted by the Sink; sent/*.perf.txt.zst were
// accepted; rejected/ holds what was refused for good: converted captures
// the Sink refused (see ErrRejected), and raw perf.data.<time> files perf
// script could not read (truncated by a full disk or a kill), each tried
// once and set aside with its reason in rejected/<name>.reason. Captures
// older than Keep are deleted, sent or not, which bounds the disk the
// recorder uses.
//
// A capture the Sink failed to take is offered again after a back-off
// (RetryMin doubling up to RetryMax, with jitter, at least a server's
// Retry-After); after ErrDenied nothing more is offered in that run. When
// Run stops with captures left in pending/, its error wraps ErrUnsent and
// names them. A disk with less than MinFree free pauses recording (perf is
// stopped cleanly) until the space is back. perf and perf script get
// SIGTERM if the recorder dies, and a perf.data a killed recorder left
// behind is finished at the next start: converted if perf script reads it,
// else set aside in rejected/.
package record

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/klauspost/compress/zstd"
)

// Sink takes one converted capture: zstd-compressed perf script text named
// name (e.g. "perf.data.2026113017183876.perf.txt.zst").
type Sink func(ctx context.Context, name string, r io.Reader) error

// Options configure Run. Zero fields take the defaults in brackets.
type Options struct {
	Perf    string        // the perf command ["perf", looked up on PATH]
	Dir     string        // working directory for raw and converted files (required)
	Freq    int           // sampling frequency per CPU in Hz [49]
	Switch  time.Duration // length of one capture [2 min]
	Keep    time.Duration // how long converted captures are kept [12 h]
	MinFree int64         // bytes that must be free in Dir to start and to convert [512 MiB]
	// Free returns the bytes free in dir [statfs(2)]; tests fake a full disk.
	Free func(dir string) (int64, error)
	Sink Sink      // where converted captures go (required)
	Log  io.Writer // one line per event [io.Discard]
	// Poll is how often Dir is looked at for finished captures [1 s].
	Poll time.Duration
	// ProcRoot is where the permission check reads perf_event_paranoid and
	// the process's capabilities ["/proc"]; tests point it elsewhere.
	ProcRoot string
	// EUID is the effective user ID the permission check assumes
	// [os.Geteuid()]; tests set it with ProcRoot.
	EUID *int
	// RetryMin and RetryMax bound the wait before a capture the Sink failed
	// to take is offered again: RetryMin after the first failure, doubling
	// with each one after it up to RetryMax, less up to half at random so
	// that recorders do not come back in step [1 s, 5 min].
	RetryMin, RetryMax time.Duration
	// Ready, when set, is called once perf has started, before any capture
	// is offered to Sink; its error stops perf and is Run's. A Sink that
	// creates something (a database) can create it here, so that a
	// recorder that cannot start leaves nothing behind.
	Ready func() error
}

func (o *Options) defaults() {
	if o.Perf == "" {
		o.Perf = "perf"
	}
	if o.Freq <= 0 {
		o.Freq = 49
	}
	if o.Switch <= 0 {
		o.Switch = 2 * time.Minute
	}
	if o.Keep <= 0 {
		o.Keep = 12 * time.Hour
	}
	if o.MinFree <= 0 {
		o.MinFree = 512 << 20
	}
	if o.Free == nil {
		o.Free = statfsFree
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.RetryMin <= 0 {
		o.RetryMin = time.Second
	}
	if o.RetryMax < o.RetryMin {
		o.RetryMax = max(o.RetryMin, 5*time.Minute)
	}
	if o.ProcRoot == "" {
		o.ProcRoot = "/proc"
	}
	if o.EUID == nil {
		euid := os.Geteuid()
		o.EUID = &euid
	}
}

// ErrRejected marks a Sink's refusal of a capture that offering it again
// cannot change (not perf text, too large): Run moves the capture to
// rejected/ and goes on with the next one. Any other Sink error keeps the
// capture in pending/ to be offered again.
var ErrRejected = errors.New("capture rejected")

// ErrDenied marks a Sink's refusal of every capture for as long as Run
// runs (the server refused the credentials): Run says so once, offers
// nothing more, and keeps the captures in pending/ for a later run.
var ErrDenied = errors.New("not permitted to send")

// ErrUnsent is wrapped by Run's error when it stops with captures left in
// pending/; the error names them.
var ErrUnsent = errors.New("captures not sent")

// RetryAfterError is a Sink error that asks for a wait before the next
// offer, as a server's Retry-After does; Run waits at least After (capped
// at an hour).
type RetryAfterError struct {
	After time.Duration
	Err   error
}

func (e *RetryAfterError) Error() string { return fmt.Sprintf("%v (retry after %v)", e.Err, e.After) }
func (e *RetryAfterError) Unwrap() error { return e.Err }

// Errors Run returns before it starts perf, so a wrapper can tell them apart.
var (
	ErrNoPerf     = errors.New("perf not found")
	ErrPermission = errors.New("not permitted to record every CPU")
	ErrDiskFull   = errors.New("not enough free disk")
)

// Args returns the perf record command line Run uses, without the perf
// command itself.
func Args(o Options) []string {
	o.defaults()
	return []string{"record", "-F", strconv.Itoa(o.Freq), "-a", "-g", "--all-cgroups", "-k", "CLOCK_REALTIME",
		"--switch-output=" + switchSpec(o.Switch), "-o", filepath.Join(o.Dir, "perf.data")}
}

// scriptArgs returns the perf script arguments that convert a capture:
// --header, and -F +cgroup when this perf can print each sample's cgroup
// (recorded by --all-cgroups; perf script gained the field after 6.1,
// which answers "Invalid field requested" for it).
func scriptArgs(ctx context.Context, perf string) []string {
	args := []string{"script", "--header"}
	probe := exec.CommandContext(ctx, perf, "script", "-F", "+cgroup", "-i", "/nonexistent/subsecond-probe")
	probe.SysProcAttr = procAttr()
	out, _ := probe.CombinedOutput()
	if !strings.Contains(string(out), "Invalid field") {
		args = append(args, "-F", "+cgroup")
	}
	return args
}

// switchSpec writes d as perf's --switch-output time ("2m", "90s").
func switchSpec(d time.Duration) string {
	if d%time.Minute == 0 {
		return strconv.FormatInt(int64(d/time.Minute), 10) + "m"
	}
	return strconv.FormatInt(int64(max(d/time.Second, 1)), 10) + "s"
}

// Run records until ctx ends, then stops perf, converts the last capture,
// hands it to the Sink (unless the Sink was failing) and returns. A
// capture the Sink fails to take stays in pending/ and is offered again
// after a back-off until Keep has passed; an ended ctx stops a send in
// flight. Run returns at once with an error wrapping ErrNoPerf,
// ErrPermission or ErrDiskFull when recording cannot start, with perf's own
// message when perf stops by itself (other than on a full disk, which
// pauses recording), and with an error wrapping ErrUnsent when captures are
// left in pending/.
func Run(ctx context.Context, o Options) error {
	o.defaults()
	if o.Dir == "" || o.Sink == nil {
		return errors.New("record: Options.Dir and Options.Sink are required")
	}
	perf, err := lookPerf(o.Perf)
	if err != nil {
		return fmt.Errorf("record: %w", err)
	}
	if err := CheckPermission(o.ProcRoot, *o.EUID); err != nil {
		return fmt.Errorf("record: %w", err)
	}
	for _, d := range []string{o.Dir, filepath.Join(o.Dir, "pending"), filepath.Join(o.Dir, "sent"), filepath.Join(o.Dir, "rejected")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fmt.Errorf("record: %w", err)
		}
	}
	if err := checkFree(o.Free, o.Dir, o.MinFree); err != nil {
		return fmt.Errorf("record: %w", err)
	}
	r := &recorder{o: o, perf: perf, script: scriptArgs(ctx, perf)}
	if err := r.finalise(); err != nil {
		return err
	}

	p, err := r.start()
	if err != nil {
		return err
	}
	if o.Ready != nil {
		if err := o.Ready(); err != nil {
			p.stop()
			return err
		}
	}

	tick := time.NewTicker(o.Poll)
	defer tick.Stop()
	var perfErr error
loop:
	for {
		var exited <-chan error // nil while recording is paused
		if p != nil {
			exited = p.exited
		}
		select {
		case <-ctx.Done():
			if p != nil {
				p.stop()
			}
			break loop
		case err := <-exited:
			if low := checkFree(o.Free, o.Dir, o.MinFree); low != nil {
				fmt.Fprintf(o.Log, "perf stopped: %v: %s\nrecording paused: %v; it resumes when %d MiB are free\n",
					err, p.stderr.String(), low, o.MinFree>>20)
				p = nil
				continue
			}
			perfErr = fmt.Errorf("record: perf stopped: %v: %s", err, p.stderr.String())
			break loop
		case <-tick.C:
			if ctx.Err() != nil {
				continue // stop first, then convert what is left
			}
			low := checkFree(o.Free, o.Dir, o.MinFree)
			switch {
			case low != nil && p != nil:
				fmt.Fprintf(o.Log, "recording paused: %v; it resumes when %d MiB are free\n", low, o.MinFree>>20)
				p.stop()
				p = nil
			case low == nil && p == nil:
				if err := r.finalise(); err != nil {
					return err
				}
				if p, err = r.start(); err != nil {
					return err
				}
				fmt.Fprintf(o.Log, "recording resumed: %d MiB free in %s\n", o.MinFree>>20, o.Dir)
			}
			// A conversion under way is finished even if ctx ends meanwhile:
			// perf goes on recording, and nothing is converted twice. A send
			// in flight is stopped.
			r.cycle(context.WithoutCancel(ctx), ctx, false)
		}
	}
	// The last capture is converted even though ctx has ended, and sent
	// unless the Sink was failing.
	final, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Minute)
	defer cancel()
	r.cycle(final, final, true)
	left, _ := filepath.Glob(filepath.Join(o.Dir, "pending", "*.perf.txt.zst"))
	if len(left) == 0 {
		return perfErr
	}
	names := make([]string, len(left))
	for i, f := range left {
		names[i] = filepath.Base(f)
	}
	unsent := fmt.Errorf("record: %w: %d left in %s: %s", ErrUnsent, len(left), filepath.Join(o.Dir, "pending"), strings.Join(names, ", "))
	if r.denied != nil {
		unsent = fmt.Errorf("%w; %w", unsent, r.denied)
	}
	return errors.Join(perfErr, unsent)
}

// perfProcess is a running perf record.
type perfProcess struct {
	cmd    *exec.Cmd
	exited chan error // receives Wait's result once perf has exited
	stderr tail
}

// start starts perf record.
func (r *recorder) start() (*perfProcess, error) {
	p := &perfProcess{exited: make(chan error, 1)}
	p.cmd = exec.Command(r.perf, Args(r.o)...)
	p.cmd.SysProcAttr = procAttr()
	p.cmd.Stderr = &p.stderr
	p.cmd.Stdout = io.Discard
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("record: start perf: %w", err)
	}
	fmt.Fprintf(r.o.Log, "recording: %s %s\n", r.perf, strings.Join(Args(r.o), " "))
	go func() { p.exited <- p.cmd.Wait() }()
	return p, nil
}

// stop interrupts perf, on which it writes out and renames its last file,
// and waits for it to exit, killing it after 30 s.
func (p *perfProcess) stop() {
	p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		p.cmd.Process.Kill()
		<-p.exited
	}
}

// lookPerf returns the path of the perf command name: a path as it is,
// when it is an executable file, or else name looked up on PATH. The error
// wraps ErrNoPerf and says what is wrong.
func lookPerf(name string) (string, error) {
	if !strings.Contains(name, "/") {
		p, err := exec.LookPath(name)
		if err != nil {
			return "", fmt.Errorf("%w: %q is not on PATH; install it (Debian: apt install linux-perf; Ubuntu: apt install linux-tools-$(uname -r))", ErrNoPerf, name)
		}
		return p, nil
	}
	fi, err := os.Stat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", fmt.Errorf("%w: %q does not exist", ErrNoPerf, name)
	case err != nil:
		return "", fmt.Errorf("%w: %v", ErrNoPerf, err)
	case !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0:
		return "", fmt.Errorf("%w: %q is not an executable file", ErrNoPerf, name)
	}
	return name, nil
}

// recorder holds Run's state between cycles.
type recorder struct {
	o      Options
	perf   string
	script []string // perf script's arguments before -i (see scriptArgs)
	mu     sync.Mutex

	failures int       // failed offers since the Sink last answered
	retryAt  time.Time // no offer before; zero when the Sink answered last
	denied   error     // the Sink's ErrDenied, which ends sending for the run
}

// cycle converts every finished capture while MinFree is free (with
// ctx), offers every pending one to the Sink (with sendCtx) once the
// back-off allows and deletes converted captures older than Keep. The last
// cycle offers only if the Sink took the last offer, so that stopping does
// not wait on a server that is failing.
func (r *recorder) cycle(ctx, sendCtx context.Context, last bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	raw, _ := filepath.Glob(filepath.Join(r.o.Dir, "perf.data.*"))
	slices.Sort(raw) // perf names them by time
	for _, f := range raw {
		if strings.HasSuffix(f, ".tmp") {
			continue
		}
		if checkFree(r.o.Free, r.o.Dir, r.o.MinFree) != nil {
			break // converted later; Run pauses recording meanwhile
		}
		err := r.convert(ctx, f)
		var bad *unreadableError
		switch {
		case err == nil:
		case errors.As(err, &bad):
			r.reject(f, bad)
		default:
			fmt.Fprintf(r.o.Log, "convert %s: %v\n", filepath.Base(f), err)
		}
		if errors.Is(err, syscall.ENOSPC) {
			break
		}
	}
	if r.denied == nil && (last && r.retryAt.IsZero() || !last && !time.Now().Before(r.retryAt)) {
		r.sendPending(sendCtx)
	}
	r.prune(time.Now())
}

// convert runs perf script --header on the finished capture raw, writes its
// output zstd-compressed to pending/ and deletes raw. A capture perf script
// prints nothing for is left as it is, to be converted in a later cycle; one
// perf script fails on is an *unreadableError.
func (r *recorder) convert(ctx context.Context, raw string) error {
	out := filepath.Join(r.o.Dir, "pending", filepath.Base(raw)+".perf.txt.zst")
	tmp := out + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	defer f.Close()
	zw, err := zstd.NewWriter(f, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, max(10*time.Minute, 3*r.o.Switch))
	defer cancel()
	cmd := exec.CommandContext(ctx, r.perf, append(r.script, "-i", raw)...)
	cmd.SysProcAttr = procAttr()
	// perf prints "# captured on" in local time; UTC keeps it unambiguous.
	cmd.Env = append(os.Environ(), "TZ=UTC")
	var stderr tail
	text := &counter{w: zw}
	cmd.Stdout, cmd.Stderr = text, &stderr
	if runErr := cmd.Run(); runErr != nil {
		zw.Close()
		err := fmt.Errorf("perf script: %v: %s", runErr, stderr.String())
		var exit *exec.ExitError
		switch fi, statErr := os.Stat(raw); {
		case text.err != nil:
			return fmt.Errorf("write %s: %w", filepath.Base(tmp), text.err) // not the capture's fault
		case ctx.Err() != nil, !errors.As(runErr, &exit), statErr != nil:
			return err
		case fi.Size() == 0:
			return fmt.Errorf("%v: the file is not written yet; kept, retried next cycle", err)
		}
		// perf wrote and renamed the file before this cycle saw it: what it
		// cannot read now (truncated by a full disk or a kill) it never will.
		return &unreadableError{err}
	}
	if text.n == 0 {
		// perf script --header prints a header for any whole perf.data,
		// even one without samples: this file is not written yet.
		zw.Close()
		return errors.New("perf script printed nothing: the file is not written yet; kept, retried next cycle")
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, out); err != nil {
		return err
	}
	fmt.Fprintf(r.o.Log, "converted %s\n", filepath.Base(out))
	return os.Remove(raw)
}

// finalise turns a perf.data left in Dir by a recorder that was killed
// into a finished capture, perf.data.<its modification time>, for the next
// cycle to convert or, if perf script cannot read it, to set aside; perf
// record would otherwise move it to perf.data.old. It refuses to go on when
// a process still has the file open: another perf is recording into Dir.
func (r *recorder) finalise() error {
	f := filepath.Join(r.o.Dir, "perf.data")
	fi, err := os.Stat(f)
	if err != nil {
		return nil
	}
	if pid := openedBy(r.o.ProcRoot, f); pid != "" {
		return fmt.Errorf("record: %s is open in process %s: another perf is recording into %s; stop it or choose another --dir", f, pid, r.o.Dir)
	}
	t := fi.ModTime()
	name := fmt.Sprintf("%s.%s%02d", f, t.Format("20060102150405"), t.Nanosecond()/1e7)
	if err := os.Rename(f, name); err != nil {
		return fmt.Errorf("record: %w", err)
	}
	fmt.Fprintf(r.o.Log, "found %s left by a recorder that was stopped abruptly; finishing it as %s\n", f, filepath.Base(name))
	return nil
}

// openedBy returns the ID of a process that has the file f open, read from
// procRoot (normally /proc), or "" when none has that this process may see.
func openedBy(procRoot, f string) string {
	f, _ = filepath.Abs(f)
	fds, _ := filepath.Glob(filepath.Join(procRoot, "[0-9]*", "fd", "*"))
	for _, fd := range fds {
		if target, err := os.Readlink(fd); err == nil && target == f {
			return filepath.Base(filepath.Dir(filepath.Dir(fd)))
		}
	}
	return ""
}

// unreadableError is perf script's failure on a whole capture file: trying
// again cannot help.
type unreadableError struct{ err error }

func (e *unreadableError) Error() string { return e.err.Error() }
func (e *unreadableError) Unwrap() error { return e.err }

// reject moves the raw capture f, which perf script could not read, to
// rejected/ and writes why beside it, in rejected/<name>.reason.
func (r *recorder) reject(f string, why error) {
	name := filepath.Base(f)
	dst := filepath.Join(r.o.Dir, "rejected", name)
	if err := os.Rename(f, dst); err != nil {
		fmt.Fprintf(r.o.Log, "convert %s: %v; and it cannot be set aside: %v\n", name, why, err)
		return
	}
	reason := fmt.Sprintf("%s: perf script could not read this capture (tried once, %s):\n%v\n",
		name, time.Now().UTC().Format(time.RFC3339), why)
	os.WriteFile(dst+".reason", []byte(reason), 0o600)
	fmt.Fprintf(r.o.Log, "convert %s: %v (moved to rejected/, reason in rejected/%s.reason)\n", name, why, name)
}

// sendPending offers the pending captures to the Sink in order, until one
// fails: that one waits for the back-off, and the ones after it with it.
func (r *recorder) sendPending(ctx context.Context) {
	pending, _ := filepath.Glob(filepath.Join(r.o.Dir, "pending", "*.perf.txt.zst"))
	slices.Sort(pending)
	for _, f := range pending {
		name := filepath.Base(f)
		err := r.send(ctx, f)
		var ra *RetryAfterError
		switch {
		case err == nil:
			r.failures, r.retryAt = 0, time.Time{}
		case errors.Is(err, ErrRejected):
			r.failures, r.retryAt = 0, time.Time{}
			fmt.Fprintf(r.o.Log, "send %s: %v (moved to rejected/)\n", name, err)
			os.Rename(f, filepath.Join(r.o.Dir, "rejected", name))
		case errors.Is(err, ErrDenied):
			r.denied = err
			fmt.Fprintf(r.o.Log, "send %s: %v (kept in pending/): no capture will be sent in this run; "+
				"recording goes on into pending/, which the next run with the right credentials sends\n", name, err)
			return
		default:
			r.failures++
			wait := r.backoff()
			if errors.As(err, &ra) {
				wait = max(wait, min(ra.After, time.Hour))
			}
			r.retryAt = time.Now().Add(wait)
			fmt.Fprintf(r.o.Log, "send %s: %v (kept in pending/, retried next cycle) once %v have passed\n",
				name, err, wait.Round(time.Millisecond))
			return // keep the order: the next offer starts from here
		}
	}
}

// backoff returns the wait after the latest of r.failures failed offers:
// RetryMin doubled per failure up to RetryMax, less up to half at random.
func (r *recorder) backoff() time.Duration {
	d := r.o.RetryMax
	if n := r.failures - 1; n < 32 && r.o.RetryMin<<n > 0 && r.o.RetryMin<<n < d {
		d = r.o.RetryMin << n
	}
	return d - rand.N(d/2+1)
}

// send offers the converted capture f to the Sink and moves it to sent/
// once accepted.
func (r *recorder) send(ctx context.Context, f string) error {
	in, err := os.Open(f)
	if err != nil {
		return err
	}
	err = r.o.Sink(ctx, filepath.Base(f), in)
	in.Close()
	if err != nil {
		return err
	}
	fmt.Fprintf(r.o.Log, "sent %s\n", filepath.Base(f))
	return os.Rename(f, filepath.Join(r.o.Dir, "sent", filepath.Base(f)))
}

// prune deletes captures last written more than Keep before now: converted
// ones, sent, pending or rejected, and raw ones, set aside in rejected/ with
// their reasons or not yet converted.
func (r *recorder) prune(now time.Time) {
	for _, pattern := range []string{"sent/*.perf.txt.zst", "pending/*.perf.txt.zst", "rejected/*", "perf.data.*"} {
		files, _ := filepath.Glob(filepath.Join(r.o.Dir, pattern))
		for _, f := range files {
			if fi, err := os.Stat(f); err == nil && now.Sub(fi.ModTime()) > r.o.Keep {
				if os.Remove(f) == nil {
					fmt.Fprintf(r.o.Log, "deleted %s, older than %v\n", f, r.o.Keep)
				}
			}
		}
	}
}

// statfsFree returns the bytes free in dir for an unprivileged user.
func statfsFree(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

// checkFree returns an error wrapping ErrDiskFull when free says fewer than
// min bytes are free in dir.
func checkFree(free func(string) (int64, error), dir string, min int64) error {
	n, err := free(dir)
	if err != nil {
		return fmt.Errorf("free space in %s: %w", dir, err)
	}
	if free := n; free < min {
		return fmt.Errorf("%w: %d MiB free in %s, and recording needs at least %d MiB for perf's files: free some space or choose another --dir",
			ErrDiskFull, free>>20, dir, min>>20)
	}
	return nil
}

// CheckPermission reports whether a process with effective user ID euid may
// record every CPU, reading the kernel's settings under procRoot (normally
// /proc): root, CAP_PERFMON or CAP_SYS_ADMIN, or kernel.perf_event_paranoid
// at most 0. The error wraps ErrPermission and says what to change.
func CheckPermission(procRoot string, euid int) error {
	if euid == 0 {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(procRoot, "sys", "kernel", "perf_event_paranoid"))
	if err != nil {
		return fmt.Errorf("%w: cannot read perf_event_paranoid: %v", ErrPermission, err)
	}
	paranoid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return fmt.Errorf("%w: perf_event_paranoid is %q", ErrPermission, strings.TrimSpace(string(b)))
	}
	if paranoid <= 0 {
		return nil
	}
	const capSysAdmin, capPerfmon = 21, 38
	if status, err := os.ReadFile(filepath.Join(procRoot, "self", "status")); err == nil {
		for _, line := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
				caps, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
				if err == nil && caps&(1<<capPerfmon|1<<capSysAdmin) != 0 {
					return nil
				}
			}
		}
	}
	return fmt.Errorf("%w: kernel.perf_event_paranoid is %d and this process has neither CAP_PERFMON nor CAP_SYS_ADMIN; "+
		"run as root, or `sudo sysctl kernel.perf_event_paranoid=0`, or `sudo setcap cap_perfmon,cap_sys_ptrace+ep` on perf and subsecond",
		ErrPermission, paranoid)
}

// counter counts the bytes written through it to w and keeps the first
// error w returned.
type counter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *counter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	if err != nil && c.err == nil {
		c.err = err
	}
	return n, err
}

// tail keeps the last 2 KB written to it: perf's last words.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2048 {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-2048:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(string(t.buf))
}
