package testenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

const (
	// pollInterval is the pause between two checks.
	pollInterval = 100 * time.Millisecond
	// checkTimeout bounds one check, so a server that accepts a connection
	// and never answers cannot hold the wait past its deadline for long.
	checkTimeout = 2 * time.Second
)

// WaitReady calls check until it returns nil. It gives up when ctx ends or
// when one of procs exits, and then says why, with check's last error.
func WaitReady(ctx context.Context, check func(context.Context) error, procs ...*Process) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	for _, p := range procs {
		go func() {
			select {
			case <-p.Done():
				err := p.Err()
				if err == nil {
					err = fmt.Errorf("%s exited", p.Name())
				}
				cancel(err)
			case <-ctx.Done():
			}
		}()
	}
	if last := poll(ctx, check); last != nil {
		return fmt.Errorf("%w (last check: %v)", context.Cause(ctx), last)
	}
	return nil
}

// TB is the part of testing.TB that Eventually uses.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
}

// Eventually calls condition until it returns nil, and fails the test with
// the message and condition's last error if that takes longer than
// timeout. It waits for what a test needs to be true, instead of sleeping
// for a time that is too long on a fast machine and too short on a slow one.
func Eventually(t TB, timeout time.Duration, condition func() error, format string, args ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if last := poll(ctx, func(context.Context) error { return condition() }); last != nil {
		t.Fatalf("%s: not within %s: %v", fmt.Sprintf(format, args...), timeout, last)
	}
}

// poll calls check every pollInterval until it returns nil (poll returns
// nil) or ctx ends (poll returns check's last error).
func poll(ctx context.Context, check func(context.Context) error) error {
	for {
		checkCtx, cancel := context.WithTimeout(ctx, checkTimeout)
		err := check(checkCtx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(pollInterval):
		}
	}
}

// FreeAddr returns a loopback address whose port nobody listens on now.
// Another process may take the port before the caller binds it; the
// servers this package starts retry on another port when that happens.
func FreeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// errAddrInUse marks a server that could not bind its address.
var errAddrInUse = errors.New("address already in use")

// HTTPOK is a WaitReady check: a GET of url answers 200.
func HTTPOK(url string) func(context.Context) error {
	return func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s answered %s", url, resp.Status)
		}
		return nil
	}
}
