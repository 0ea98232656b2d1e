package testenv

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
)

// sysProcAttr puts the child in a process group of its own and has the
// kernel kill it when the thread that started it dies, so no child
// outlives a crashed or killed test binary.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// waitStopped returns once every thread of the process is stopped (state T
// in /proc/<pid>/stat), or after within.
func (p *Process) waitStopped(within time.Duration) error {
	pid := p.cmd.Process.Pid
	deadline := time.Now().Add(within)
	for {
		stopped, err := threadsStopped(pid)
		if err != nil || stopped {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s (pid %d) did not stop within %v", p.name, pid, within)
		}
		time.Sleep(time.Millisecond) // polling the kernel's state, not waiting for time to pass
	}
}

// threadsStopped reports whether every thread of pid is stopped.
func threadsStopped(pid int) (bool, error) {
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, err := os.ReadDir(dir)
	if err != nil {
		return false, fmt.Errorf("read the threads of pid %d: %w", pid, err)
	}
	for _, t := range tasks {
		stat, err := os.ReadFile(dir + "/" + t.Name() + "/stat")
		if err != nil {
			return false, nil // a thread that ended meanwhile: look again
		}
		// The state follows the command name, which is in parentheses.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 || i+2 >= len(stat) || stat[i+2] != 'T' {
			return false, nil
		}
	}
	return true, nil
}
