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

// helper is a bench-only server running beside the stack: benchref, the
// login reference, or benchproxy, the floor of the gateway hop.
type helper struct {
	name string
	URL  string
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
}

// startReference runs benchref on a free loopback port against redisAddr
// with one key pair, and waits until it answers.
func startReference(ctx context.Context, bin, redisAddr, key, secret string, out io.Writer) (*helper, error) {
	// The secret travels in the environment, not on the command line.
	return startHelper(ctx, "benchref", bin, []string{"-redis", redisAddr},
		[]string{"BENCHREF_APP_KEY=" + key, "BENCHREF_APP_SECRET=" + secret}, out)
}

// startProxy runs benchproxy on a free loopback port in front of the
// workspace service at workspaceAddr, and waits until it answers.
func startProxy(ctx context.Context, bin, workspaceAddr string, out io.Writer) (*helper, error) {
	return startHelper(ctx, "benchproxy", bin, []string{"-workspace", workspaceAddr}, nil, out)
}

// startHelper runs bin with -listen on a free loopback port, args and env
// added to ours, and waits until its /healthz answers.
func startHelper(ctx context.Context, name, bin string, args, env []string, out io.Writer) (*helper, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, append([]string{"-listen", addr}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = out, out
	// Die with us even if we are killed without a chance to stop it; stay
	// out of the terminal's process group so Ctrl-C reaches us only.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	h := &helper{name: name, URL: "http://" + addr, cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(h.done)
	}()
	if err := h.waitReady(ctx, 10*time.Second); err != nil {
		_ = h.Close()
		return nil, err
	}
	return h, nil
}

// PID is the process id, for memory and CPU readings.
func (h *helper) PID() int { return h.cmd.Process.Pid }

func (h *helper) waitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := &http.Client{Timeout: time.Second}
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, h.URL+"/healthz", nil)
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-h.done:
			return fmt.Errorf("%s exited before it was ready", h.name)
		case <-ctx.Done():
			return fmt.Errorf("%s was not ready within %s: %w", h.name, timeout, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// Close stops the process (SIGTERM, then SIGKILL after 5 s) and waits for it.
func (h *helper) Close() error {
	select {
	case <-h.done:
		return nil
	default:
	}
	if err := h.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("stop %s: %w", h.name, err)
	}
	select {
	case <-h.done:
		return nil
	case <-time.After(5 * time.Second):
		_ = h.cmd.Process.Kill()
		<-h.done
		return fmt.Errorf("%s did not stop within 5s and was killed", h.name)
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
