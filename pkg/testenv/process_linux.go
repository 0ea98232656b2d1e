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

// waitStopped waits until every thread of process pid is stopped (state T
// in /proc/<pid>/task/*/stat), for at most timeout.
func waitStopped(pid int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	for {
		tasks, err := os.ReadDir(dir)
		if err != nil {
			return fmt.Errorf("read the state of process %d: %w", pid, err)
		}
		stopped := true
		for _, t := range tasks {
			stat, err := os.ReadFile(dir + "/" + t.Name() + "/stat")
			if err != nil {
				continue // the thread ended
			}
			// The state follows the command name, which is in parentheses.
			if i := bytes.LastIndexByte(stat, ')'); i < 0 || i+2 >= len(stat) || (stat[i+2] != 'T' && stat[i+2] != 't') {
				stopped = false
				break
			}
		}
		if stopped {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("process %d did not stop within %s", pid, timeout)
		}
		time.Sleep(time.Millisecond)
	}
}
