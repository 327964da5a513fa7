package record

import "syscall"

// procAttr is how perf record and perf script are started: in their own
// process group, so that a terminal's Ctrl-C reaches only subsecond, which
// stops them in order, and sent SIGTERM should subsecond die first (even by
// kill -9), so that no perf records on with nobody to convert its files.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
