//go:build !linux

package record

import "syscall"

// procAttr starts perf in its own process group; only Linux can have it
// signalled when subsecond dies.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
