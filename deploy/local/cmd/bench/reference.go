package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// reference is a running benchref process.
type reference struct {
	URL  string
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
}

// startReference runs the benchref binary on a free loopback port against
// redisAddr with one key pair, and waits until it answers.
func startReference(ctx context.Context, bin, redisAddr, key, secret string, out io.Writer) (*reference, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "-listen", addr, "-redis", redisAddr)
	// The secret travels in the environment, not on the command line.
	cmd.Env = append(os.Environ(), "BENCHREF_APP_KEY="+key, "BENCHREF_APP_SECRET="+secret)
	cmd.Stdout, cmd.Stderr = out, out
	// Die with us even if we are killed without a chance to stop it; stay
	// out of the terminal's process group so Ctrl-C reaches us only.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start benchref: %w", err)
	}
	r := &reference{URL: "http://" + addr, cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(r.done)
	}()
	if err := r.waitReady(ctx, 10*time.Second); err != nil {
		_ = r.Close()
		return nil, err
	}
	return r, nil
}

// PID is the process id, for memory readings.
func (r *reference) PID() int { return r.cmd.Process.Pid }

func (r *reference) waitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, r.URL+"/healthz", nil)
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-r.done:
			return errors.New("benchref exited before it was ready")
		case <-ctx.Done():
			return fmt.Errorf("benchref was not ready within %s: %w", timeout, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Close stops the process (SIGTERM, then SIGKILL after 5 s) and waits for it.
func (r *reference) Close() error {
	select {
	case <-r.done:
		return nil
	default:
	}
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("stop benchref: %w", err)
	}
	select {
	case <-r.done:
		return nil
	case <-time.After(5 * time.Second):
		_ = r.cmd.Process.Kill()
		<-r.done
		return errors.New("benchref did not stop within 5s and was killed")
	}
}

// freeAddr returns a loopback address with a port nobody listens on now.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}
