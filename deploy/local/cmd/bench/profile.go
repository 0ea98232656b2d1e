package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/liveproctor/workspaces/pkg/testenv"
)

// pprofEnv gives each service its own PPROF_ADDR, on free loopback ports,
// and returns the addresses by service.
func pprofEnv() (map[string][]string, map[string]string, error) {
	env, addrs := map[string][]string{}, map[string]string{}
	for _, name := range services {
		addr, err := testenv.FreeAddr()
		if err != nil {
			return nil, nil, err
		}
		env[name] = []string{"PPROF_ADDR=" + addr}
		addrs[name] = addr
	}
	return env, addrs, nil
}

// profileCapture is a set of CPU profiles being taken, one per service.
type profileCapture struct {
	wg   sync.WaitGroup
	mu   sync.Mutex
	errs []error
}

// traceSeconds bounds an execution trace: a few seconds of a loaded
// service are tens of MiB.
const traceSeconds = 3

// startProfiles starts taking a CPU profile, a mutex and a block profile
// (of the contention and blocking in that time) and an allocation profile
// of every service for most of the coming round, an execution trace of its
// first seconds and a heap profile as it starts, written to
// <dir>/<scenario>-<callers>-<service>.pprof, -mutex.pprof, -block.pprof,
// -allocs.pprof, -heap.pprof and .trace (for `go tool trace`). It returns
// nil when profiling is off.
func (e *env) startProfiles(ctx context.Context, cfg config, scenario string, callers int) *profileCapture {
	if cfg.ProfileDir == "" || len(e.pprofAddrs) == 0 {
		return nil
	}
	// The profile endpoint takes whole seconds; stop a little before the
	// round does, so only loaded time is sampled.
	seconds := max(int((cfg.Round-time.Second)/time.Second), 1)
	prefix := fileName(fmt.Sprintf("%s-%d", scenario, callers))
	c := &profileCapture{}
	kinds := []struct{ endpoint, suffix string }{
		{fmt.Sprintf("profile?seconds=%d", seconds), ".pprof"},
		{fmt.Sprintf("mutex?seconds=%d", seconds), "-mutex.pprof"},
		{fmt.Sprintf("block?seconds=%d", seconds), "-block.pprof"},
		{fmt.Sprintf("trace?seconds=%d", min(seconds, traceSeconds)), ".trace"},
		// What the load allocates in the round, and what is live (as of
		// the last collection) as it starts: the resident set follows
		// the live heap times 1 + GOGC/100.
		{fmt.Sprintf("allocs?seconds=%d", seconds), "-allocs.pprof"},
		{"heap", "-heap.pprof"},
	}
	for _, name := range services {
		for _, k := range kinds {
			url := fmt.Sprintf("http://%s/debug/pprof/%s", e.pprofAddrs[name], k.endpoint)
			path := filepath.Join(cfg.ProfileDir, prefix+"-"+name+k.suffix)
			c.wg.Go(func() {
				if err := fetchTo(ctx, url, path); err != nil {
					c.mu.Lock()
					c.errs = append(c.errs, fmt.Errorf("profile %s: %w", name, err))
					c.mu.Unlock()
				}
			})
		}
	}
	progress("  taking %ds CPU, mutex, block and allocation profiles, heap profiles and %ds traces of %s into %s",
		seconds, min(seconds, traceSeconds), strings.Join(services, ", "), cfg.ProfileDir)
	return c
}

// wait waits for the profiles and reports what failed; nil waits for none.
func (c *profileCapture) wait() error {
	if c == nil {
		return nil
	}
	c.wg.Wait()
	return errors.Join(c.errs...)
}

func fetchTo(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %s", url, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// fileName turns a scenario's name into a file name: lower case, words
// joined by dashes.
func fileName(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
			continue
		}
		dash = true
	}
	return b.String()
}
