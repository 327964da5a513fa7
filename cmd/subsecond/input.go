package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
)

// perfDataMagic starts every perf.data file, and perf's pipe output.
const perfDataMagic = "PERFILE2"

// emptyInputError is the error of every command given an empty capture
// (no bytes at all): one sentence that names it and says what was wanted.
func emptyInputError(name string) error {
	return fmt.Errorf("%s is empty: a capture is the text perf script prints (perf script > FILE)", name)
}

// input is a capture opened for reading as perf script text (plain, gzip
// or zstd: the readers decompress it).
type input struct {
	io.Reader
	name  string // the file name, or "stdin"
	size  int64  // bytes on disk; 0 when unknown (standard input, a converted perf.data)
	close func() error
}

// Close releases the file, or stops perf script if it is still running.
func (in *input) Close() error { return in.close() }

// openInput opens capture name ("-" for standard input) as perf script
// text. A perf.data file (perf's binary recording, recognised by its
// PERFILE2 magic) is converted on the fly when perf is installed: `perf
// script --header -i FILE` runs with its output streamed to the reader, no
// temporary copy, and a note on standard error says so. perf script runs
// with TZ=UTC, so that the times it prints do not depend on the local zone. Without perf the
// error gives that command.
func openInput(ctx context.Context, e env, name string) (*input, error) {
	in := &input{name: name}
	var f io.ReadCloser
	if name == "-" {
		f, in.name = io.NopCloser(e.stdin), "stdin"
	} else {
		file, err := os.Open(name)
		if err != nil {
			return nil, err
		}
		if fi, err := file.Stat(); err == nil && fi.Mode().IsRegular() {
			in.size = fi.Size()
		}
		f = file
	}
	br := bufio.NewReaderSize(f, 64<<10)
	head, _ := br.Peek(len(perfDataMagic))
	if len(head) == 0 {
		f.Close()
		return nil, emptyInputError(in.name)
	}
	if string(head) != perfDataMagic {
		in.Reader, in.close = br, f.Close
		return in, nil
	}
	cmdline := "perf script --header -i " + shellQuote(name)
	perf, err := exec.LookPath("perf")
	if err != nil {
		f.Close()
		out := "perf.txt"
		if name != "-" {
			out = shellQuote(name + ".txt")
		}
		return nil, fmt.Errorf("%s is a perf.data file, not perf script text, and perf is not installed here; convert it where perf is with:\n    %s > %s", in.name, cmdline, out)
	}
	fmt.Fprintf(e.stderr, "subsecond: %s is a perf.data file; reading it through %s\n", in.name, cmdline)
	cmd := exec.CommandContext(ctx, perf, "script", "--header", "-i", name)
	// perf prints "# captured on" and the reference time in the local time
	// zone, which the parser reads as UTC: in UTC, TZ cannot move a capture.
	cmd.Env = append(os.Environ(), "TZ=UTC")
	dieWithParent(cmd)
	if name == "-" {
		cmd.Stdin = br // perf's pipe mode reads it from us
	}
	stderr := &tail{max: 4 << 10}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		f.Close()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", cmdline, err)
	}
	if name != "-" {
		f.Close() // perf reads the file itself
	}
	pr := &perfReader{r: out, cmd: cmd, stderr: stderr, cmdline: cmdline}
	in.Reader, in.size, in.close = pr, 0, pr.stop
	return in, nil
}

// perfReader reads the output of perf script, reporting its failure (exit
// status and the end of its standard error) once the output ends.
type perfReader struct {
	r       io.Reader
	cmd     *exec.Cmd
	stderr  *tail
	cmdline string
	once    sync.Once
	err     error
}

func (p *perfReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if err == io.EOF {
		if werr := p.wait(); werr != nil {
			return n, werr
		}
	}
	return n, err
}

// wait waits for perf to exit, once, and describes a failure.
func (p *perfReader) wait() error {
	p.once.Do(func() {
		if err := p.cmd.Wait(); err != nil {
			msg := strings.TrimSpace(p.stderr.String())
			if msg != "" {
				msg = ": " + msg
			}
			p.err = fmt.Errorf("%s failed (%v)%s", p.cmdline, err, msg)
			if p.cmd.Stdin != nil {
				p.err = fmt.Errorf("%w; perf reads standard input only in pipe mode (perf record -o -): give the perf.data file's name instead", p.err)
			}
		}
	})
	return p.err
}

// stop ends perf script if it still runs (a reader that stopped early) and
// reaps it. A failure was reported by Read, if anyone read to the end.
func (p *perfReader) stop() error {
	if p.cmd.ProcessState == nil {
		p.cmd.Process.Kill()
	}
	p.wait()
	return nil
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = t.b[len(t.b)-t.max:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// shellQuote quotes s for a POSIX shell when it holds more than letters,
// digits and ./_-+:@%,=.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("./_-+:@%,=", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
