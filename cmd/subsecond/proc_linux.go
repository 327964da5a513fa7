package main

import (
	"os/exec"
	"syscall"
)

// dieWithParent has cmd sent SIGTERM should subsecond die first, even by
// kill -9, so that no perf script runs on for nobody.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
