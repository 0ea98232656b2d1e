package testenv

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

// defaultStopTimeout is how long Stop waits after SIGTERM when the Command
// sets no StopTimeout.
const defaultStopTimeout = 20 * time.Second

// tailSize is how much of a process's latest output it keeps for errors.
const tailSize = 8 << 10

// Command is a program to run as a child process.
type Command struct {
	// Name prefixes each output line and names the process in errors.
	Name string
	Path string
	Args []string
	// Env is added to this process's environment; a later entry wins.
	Env []string
	// Output receives each line of the process's stdout and stderr as
	// "name | line"; nil discards them (the latest are kept for errors).
	Output io.Writer
	// StopTimeout is how long Stop waits after SIGTERM before it kills the
	// process; zero means 20 seconds.
	StopTimeout time.Duration
}

// Process is a running child process. It dies with this process (on Linux
// even when this one is killed), and it is in a process group of its own,
// so a Ctrl-C in the terminal reaches only this process, which then stops
// its children in order.
type Process struct {
	name        string
	cmd         *exec.Cmd
	stopTimeout time.Duration
	tail        *tail
	done        chan struct{} // closed once the process has exited
	err         error         // Wait's result; read after done is closed
}

// StartProcess starts c.
func StartProcess(c Command) (*Process, error) {
	cmd := exec.Command(c.Path, c.Args...)
	cmd.Env = append(os.Environ(), c.Env...)
	cmd.SysProcAttr = sysProcAttr()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", c.Name, err)
	}
	p := &Process{
		name:        c.Name,
		cmd:         cmd,
		stopTimeout: c.StopTimeout,
		tail:        &tail{},
		done:        make(chan struct{}),
	}
	if p.stopTimeout == 0 {
		p.stopTimeout = defaultStopTimeout
	}
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		p.copyLines(stdout, c.Output)
	}()
	go func() {
		<-copied // Wait closes the pipe: read everything first
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// copyLines passes the output on line by line and keeps its tail.
func (p *Process) copyLines(r io.Reader, out io.Writer) {
	s := bufio.NewScanner(r)
	s.Buffer(make([]byte, 64<<10), 1<<20)
	for s.Scan() {
		p.tail.add(s.Text())
		if out != nil {
			writeLine(out, p.name, s.Text())
		}
	}
	_, _ = io.Copy(io.Discard, r) // a line over 1 MiB ends the scan
}

// Name is the name the process was started with.
func (p *Process) Name() string { return p.name }

// PID is the process id, for measurements.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Signal sends sig to the process.
func (p *Process) Signal(sig os.Signal) error { return p.cmd.Process.Signal(sig) }

// Done is closed once the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Err says how the process ended (nil: status 0). Call it once Done is
// closed.
func (p *Process) Err() error {
	if p.err == nil {
		return nil
	}
	return fmt.Errorf("%s exited: %w", p.name, p.err)
}

// Output returns the last few KiB the process printed.
func (p *Process) Output() string { return p.tail.String() }

// Stop asks the process to finish (SIGTERM) and kills it if it is still
// running after the Command's StopTimeout. It reports an exit other than
// status 0 or by that SIGTERM. A process that had already exited is left
// as it is: Done and Err tell how it ended.
func (p *Process) Stop() error {
	select {
	case <-p.done:
		return nil
	default:
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("stop %s: %w", p.name, err)
	}
	// A paused (SIGSTOPped) process only acts on the SIGTERM once it runs.
	_ = p.cmd.Process.Signal(syscall.SIGCONT)
	timer := time.NewTimer(p.stopTimeout)
	defer timer.Stop()
	select {
	case <-p.done:
	case <-timer.C:
		_ = p.cmd.Process.Kill()
		<-p.done
		return p.withOutput(fmt.Errorf("%s did not stop within %s of SIGTERM and was killed", p.name, p.stopTimeout))
	}
	var exit *exec.ExitError
	if errors.As(p.err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGTERM {
			return nil
		}
	}
	if p.err != nil {
		return p.withOutput(p.Err())
	}
	return nil
}

// Kill ends the process at once (SIGKILL), as a crash would, and waits
// until it has exited. A process that had already exited is left as it is.
func (p *Process) Kill() error {
	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("kill %s: %w", p.name, err)
	}
	<-p.done
	return nil
}

// withOutput adds the tail of the process's output to err.
func (p *Process) withOutput(err error) error {
	if out := p.Output(); out != "" {
		return fmt.Errorf("%w\n%s output:\n%s", err, p.name, out)
	}
	return err
}

// writeMu serializes output lines, which several processes may write to
// one writer.
var writeMu sync.Mutex

func writeLine(w io.Writer, name, line string) {
	writeMu.Lock()
	defer writeMu.Unlock()
	fmt.Fprintf(w, "%-9s | %s\n", name, line)
}

// tail keeps the latest tailSize bytes of output lines.
type tail struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tail) add(line string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(append(t.buf, line...), '\n')
	if over := len(t.buf) - tailSize; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
