//go:build !linux

package testenv

import (
	"syscall"
	"time"
)

// sysProcAttr puts the child in a process group of its own. A parent-death
// signal exists only on Linux: elsewhere a child outlives this process if
// it is killed before it can stop its children.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// waitStopped cannot tell a stopped process here; SIGSTOP is taken as
// effective at once.
func waitStopped(int, time.Duration) error { return nil }
