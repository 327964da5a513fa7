//go:build !linux

package main

import "os/exec"

// dieWithParent does nothing: only Linux can signal a child when its parent
// dies.
func dieWithParent(cmd *exec.Cmd) {}
