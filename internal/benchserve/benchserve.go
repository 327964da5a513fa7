// Package benchserve runs a real `subsecond serve` for the benchmarks under
// bench/: started on a free loopback port, its address read from what it
// prints, its memory read from /proc, stopped as systemd would.
package benchserve

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Server is a running `subsecond serve`.
type Server struct {
	Base string // its URL, http://127.0.0.1:PORT
	cmd  *exec.Cmd
	log  *os.File
}

// Start runs bin serve on 127.0.0.1:0 with the flags given, its standard
// error written to dir/serve.log, and returns once it has printed where it
// serves.
func Start(bin, dir string, flags ...string) (*Server, error) {
	log, err := os.Create(filepath.Join(dir, "serve.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, append([]string{"serve", "--addr", "127.0.0.1:0"}, flags...)...)
	cmd.Stderr = log
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(out)
	re := regexp.MustCompile(`serving .* on (http://\S+?)/`)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			go io.Copy(io.Discard, out)
			return &Server{cmd: cmd, Base: m[1], log: log}, nil
		}
	}
	cmd.Process.Kill()
	cmd.Wait()
	return nil, fmt.Errorf("serve printed no address; see %s", log.Name())
}

// Stop interrupts the server and waits for it to exit, killing it after
// 30 s.
func (s *Server) Stop() {
	s.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
	s.log.Close()
}

// ProcStatus returns a field of the server's /proc/PID/status (VmRSS,
// VmHWM) in bytes.
func (s *Server) ProcStatus(field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, s.cmd.Process.Pid)
}

// CPU returns the CPU time, user and system, the server has used so far,
// from /proc/PID/stat.
func (s *Server) CPU() (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	// The fields after the command's name, which is in parentheses.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: too few fields", s.cmd.Process.Pid)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %q %q are not tick counts", s.cmd.Process.Pid, f[11], f[12])
	}
	return time.Duration(utime+stime) * time.Second / 100, nil // USER_HZ
}
