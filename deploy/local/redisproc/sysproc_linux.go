//go:build linux

package redisproc

import "syscall"

// sysProcAttr makes the kernel kill redis-server when the process that
// started it dies, so no server outlives a crashed test binary.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
