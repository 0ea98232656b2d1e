package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/liveproctor/workspaces/pkg/testenv"
)

// helper is a bench-only server running beside the stack: benchref, the
// login reference, benchproxy, the floor of the gateway hop and the HTTP
// half of the login floor, or benchauth, its token service.
type helper struct {
	*testenv.Process
	Addr string // where it listens
	URL  string // http://Addr, for an HTTP server
}

// startReference runs benchref on a free loopback port against redisAddr
// with one key pair, and waits until it answers.
func startReference(ctx context.Context, bin, redisAddr, key, secret string, out io.Writer) (*helper, error) {
	// The secret travels in the environment, not on the command line.
	return startHelper(ctx, "benchref", bin, []string{"-redis", redisAddr},
		[]string{"BENCHREF_APP_KEY=" + key, "BENCHREF_APP_SECRET=" + secret}, out)
}

// startTokenService runs benchauth, the login floor's token service, on a
// free loopback port against redisAddr with one key pair, and waits until
// its port is open (it answers Redis before it listens). It speaks gRPC
// only, so it has no URL.
func startTokenService(ctx context.Context, bin, redisAddr, key, secret string, out io.Writer) (*helper, error) {
	h, err := startHelperReady(ctx, "benchauth", bin, []string{"-redis", redisAddr},
		[]string{"BENCHAUTH_APP_KEY=" + key, "BENCHAUTH_APP_SECRET=" + secret}, out, tcpOpen)
	if h != nil {
		h.URL = ""
	}
	return h, err
}

// startProxy runs benchproxy on a free loopback port in front of the
// workspace service at workspaceAddr and the token service at authAddr,
// and waits until it answers.
func startProxy(ctx context.Context, bin, workspaceAddr, authAddr string, out io.Writer) (*helper, error) {
	return startHelper(ctx, "benchproxy", bin, []string{"-workspace", workspaceAddr, "-auth", authAddr}, nil, out)
}

// startHelper runs bin with -listen on a free loopback port, args and env
// added to ours, as the stack runs its services, and waits until its
// /healthz answers.
func startHelper(ctx context.Context, name, bin string, args, env []string, out io.Writer) (*helper, error) {
	return startHelperReady(ctx, name, bin, args, env, out, func(addr string) func(context.Context) error {
		return testenv.HTTPOK("http://" + addr + "/healthz")
	})
}

// startHelperReady is startHelper with its own readiness check of the
// address it listens on.
func startHelperReady(ctx context.Context, name, bin string, args, env []string, out io.Writer,
	ready func(addr string) func(context.Context) error) (*helper, error) {
	addr, err := testenv.FreeAddr()
	if err != nil {
		return nil, err
	}
	p, err := testenv.StartProcess(testenv.Command{
		Name: name, Path: bin, Args: append([]string{"-listen", addr}, args...), Env: env, Output: out,
	})
	if err != nil {
		return nil, err
	}
	h := &helper{Process: p, Addr: addr, URL: "http://" + addr}
	if err := h.waitReady(ctx, 10*time.Second, ready(addr)); err != nil {
		_ = h.Stop()
		return nil, err
	}
	return h, nil
}

// waitReady waits until check passes, for at most timeout.
func (h *helper) waitReady(ctx context.Context, timeout time.Duration, check func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := testenv.WaitReady(ctx, check, h.Process)
	if err != nil {
		return fmt.Errorf("%s was not ready within %s: %w", h.Name(), timeout, err)
	}
	return nil
}

// tcpOpen checks that addr accepts a TCP connection.
func tcpOpen(addr string) func(context.Context) error {
	return func(ctx context.Context) error {
		var d net.Dialer
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return err
		}
		return conn.Close()
	}
}
