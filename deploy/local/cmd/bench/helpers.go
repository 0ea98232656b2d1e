package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/liveproctor/workspaces/pkg/testenv"
)

// helper is a bench-only server running beside the stack: benchref, the
// login reference, or benchproxy, the floor of the gateway hop.
type helper struct {
	*testenv.Process
	URL string
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
// added to ours, as the stack runs its services, and waits until its
// /healthz answers.
func startHelper(ctx context.Context, name, bin string, args, env []string, out io.Writer) (*helper, error) {
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
	h := &helper{Process: p, URL: "http://" + addr}
	if err := h.waitReady(ctx, 10*time.Second); err != nil {
		_ = h.Stop()
		return nil, err
	}
	return h, nil
}

func (h *helper) waitReady(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err := testenv.WaitReady(ctx, testenv.HTTPOK(h.URL+"/healthz"), h.Process)
	if err != nil {
		return fmt.Errorf("%s was not ready within %s: %w", h.Name(), timeout, err)
	}
	return nil
}
