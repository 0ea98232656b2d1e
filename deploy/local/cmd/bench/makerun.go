package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/liveproctor/workspaces/deploy/local/stack"
)

// measureMakeRun drives the login load at a second stack started as make
// run starts it, where users meet it: Redis persisting (appendonly, fsync
// every second) and the services' default logging (an access-log line per
// request). Its rounds alternate with the floor's, so the make-run stack's
// p99 is held against a floor measured in the same minutes. The bench's
// rate-limit settings apply, so the one benchmark key pair is not
// throttled. The CPU figures of these rounds count the first stack's
// processes, idle here, and are not reported.
func measureMakeRun(ctx context.Context, cfg config, e *env, rep *report) error {
	progress("starting a stack as make run does (Redis persisting)")
	var logs bytes.Buffer
	s, err := stack.Start(ctx, stack.Options{
		BinDir: filepath.Join(e.tmp, "bin"), DataDir: filepath.Join(e.tmp, "makerun"), PersistRedis: true,
		Env: stackEnv(cfg), Output: &logs,
	})
	if err != nil {
		return fmt.Errorf("start the make-run stack: %w\n%s", err, logs.String())
	}
	defer func() {
		if err := s.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "stop the make-run stack:", err)
		}
	}()
	rounds, err := alternate(ctx, cfg, e, cfg.Conns, []side{
		loginSide(e, "login, floor (beside make run's stack)", e.proxy.URL),
		loginSide(e, "login, make run's stack", s.GatewayURL),
	}, nil)
	if err != nil {
		return err
	}
	rep.MakeRunFloor, rep.MakeRunStack = rounds[0], rounds[1]
	return nil
}
