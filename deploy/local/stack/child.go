package stack

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// stopTimeout is how long a child gets to drain after SIGTERM.
const stopTimeout = 20 * time.Second

// child is one of the project's binaries running as a child process, its
// output copied line by line to a shared writer with its name in front.
type child struct {
	name string
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	err  error         // Wait's result; read after done
}

// Process is a program run as the stack runs its services: it dies with
// this process even when this one is killed, stays out of the terminal's
// process group, and its output goes line by line to a writer with its name
// in front. Benchmarks use it for their own servers beside the stack.
type Process struct{ c *child }

// StartProcess runs bin with args and env (added to this process's
// environment), its output going to out as "name | line".
func StartProcess(name, bin string, args, env []string, out io.Writer) (*Process, error) {
	c, err := startChild(name, bin, args, append(os.Environ(), env...), &lockedWriter{w: out})
	if err != nil {
		return nil, err
	}
	return &Process{c}, nil
}

// PID is the process id, for measurements.
func (p *Process) PID() int { return p.c.cmd.Process.Pid }

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.c.done }

// Stop asks the process to finish (SIGTERM) and kills it if it takes longer
// than stopTimeout (20 s). A process that already exited is left as it is.
func (p *Process) Stop() error { return p.c.stop() }

// startChild runs bin with args and exactly env. Each output line goes to
// out as "name | line".
func startChild(name, bin string, args, env []string, out *lockedWriter) (*child, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	// Die with the parent even if it is killed without a chance to stop us,
	// and stay out of the terminal's process group: Ctrl-C reaches the
	// parent only, which then stops the children in order.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	c := &child{name: name, cmd: cmd, done: make(chan struct{})}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		s := bufio.NewScanner(stdout)
		s.Buffer(make([]byte, 64*1024), 1024*1024)
		for s.Scan() {
			out.line(name, s.Text())
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	go func() {
		<-copied
		c.err = cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

// stop asks the child to finish (SIGTERM) and kills it if it takes longer
// than stopTimeout. A child that already exited is left as it is.
func (c *child) stop() error {
	select {
	case <-c.done:
		return nil
	default:
	}
	if err := c.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("stop %s: %w", c.name, err)
	}
	select {
	case <-c.done:
		return nil
	case <-time.After(stopTimeout):
		_ = c.cmd.Process.Kill()
		<-c.done
		return fmt.Errorf("%s did not stop within %s and was killed", c.name, stopTimeout)
	}
}

// exitError describes how a child ended on its own.
func (c *child) exitError() error {
	if c.err == nil {
		return fmt.Errorf("%s exited", c.name)
	}
	return fmt.Errorf("%s exited: %w", c.name, c.err)
}

// lockedWriter serializes lines from several children.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) line(name, text string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, "%-9s | %s\n", name, text)
}
