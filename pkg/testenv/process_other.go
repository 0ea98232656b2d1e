//go:build !linux

package testenv

import "syscall"

// sysProcAttr puts the child in a process group of its own. A parent-death
// signal exists only on Linux: elsewhere a child outlives this process if
// it is killed before it can stop its children.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
