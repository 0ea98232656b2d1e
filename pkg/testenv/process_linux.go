package testenv

import "syscall"

// sysProcAttr puts the child in a process group of its own and has the
// kernel kill it when the thread that started it dies, so no child
// outlives a crashed or killed test binary.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
