package redisproc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

const (
	// readyTimeout bounds how long a new process may take to answer PING
	// when the caller's context has no earlier deadline.
	readyTimeout = 10 * time.Second

	// stopTimeout is how long Stop waits after SIGTERM before SIGKILL.
	stopTimeout = 5 * time.Second
)

// errAddrInUse marks a start that failed because the port was taken.
var errAddrInUse = errors.New("address already in use")

// process is one running redis-server.
type process struct {
	cmd  *exec.Cmd
	out  *output
	done chan struct{} // closed when Wait returned
	err  error         // Wait's result; read only after done is closed
}

// startProcess runs bin with args and waits until the server answers PING
// at addr. On failure the process is gone and the error
// carries the tail of its output.
func startProcess(ctx context.Context, bin string, args []string, addr string, logger *slog.Logger) (*process, error) {
	out := &output{logger: logger}

	// Not CommandContext: ctx bounds the start only, not the server's life.
	cmd := exec.Command(bin, args...)
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.SysProcAttr = sysProcAttr()

	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}

	p := &process{cmd: cmd, out: out, done: make(chan struct{})}

	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()

	if err := p.waitReady(ctx, addr); err != nil {
		_ = p.stop() // the start failed already; that error is the one to report
		return nil, p.failure(err)
	}

	return p, nil
}

// waitReady pings the server until it answers, exits, or time runs out.
func (p *process) waitReady(ctx context.Context, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()

	for {
		err := ping(ctx, addr)
		if err == nil {
			return nil
		}

		select {
		case <-p.done:
			if strings.Contains(p.out.Tail(), "Address already in use") {
				return errAddrInUse
			}

			return fmt.Errorf("redis-server exited before answering PING: %w", p.err)
		case <-ctx.Done():
			return fmt.Errorf("redis-server did not answer PING: %w (last error: %w)", ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// failure wraps err with the tail of the server's output.
func (p *process) failure(err error) error {
	tail := strings.TrimSpace(p.out.Tail())
	if tail == "" {
		return err
	}

	return fmt.Errorf("%w\nredis-server output:\n%s", err, tail)
}

// stop sends SIGTERM, waits up to stopTimeout, then kills the process.
func (p *process) stop() error {
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("send SIGTERM: %w", err)
	}

	timer := time.NewTimer(stopTimeout)
	defer timer.Stop()

	select {
	case <-p.done:
		return p.exitError()
	case <-timer.C:
	}

	if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("send SIGKILL: %w", err)
	}
	<-p.done

	return p.failure(fmt.Errorf("redis-server ignored SIGTERM for %s and was killed", stopTimeout))
}

// exitError reports an unclean exit. Exiting on our SIGTERM, with status 0
// or through the signal itself, is clean.
func (p *process) exitError() error {
	var exitErr *exec.ExitError
	if !errors.As(p.err, &exitErr) {
		return p.err
	}

	if ws, ok := exitErr.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGTERM {
		return nil
	}

	return p.failure(fmt.Errorf("redis-server exited: %w", p.err))
}
