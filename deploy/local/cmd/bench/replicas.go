package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/liveproctor/workspaces/deploy/local/stack"
)

// loginMethod is the auth service's method a login calls.
const loginMethod = "/auth.v1.AuthService/CreateSdkToken"

// productionGRPCEnv are production's connection settings (the defaults,
// and deploy/kubernetes's), in place of the short ones the stack gives
// replicas for tests: a new replica's wait is measured as operators see it.
var productionGRPCEnv = []string{
	"GRPC_MAX_CONNECTION_AGE=30s",
	"GRPC_MAX_CONNECTION_AGE_GRACE=10s",
	"GRPC_DNS_MIN_RESOLUTION_INTERVAL=30s",
}

// newReplicaWait bounds the wait for an added replica's share.
const newReplicaWait = 3 * time.Minute

// replicaLogins is one auth replica's part of a login load.
type replicaLogins struct {
	Name   string
	Logins int
	CPU    time.Duration
}

// newReplica is how a replica added under load came to take its share.
type newReplica struct {
	// FirstCall is the time from its name's publication in DNS to its
	// first login; Share, to the first half second in which it served at
	// least half of an even share of the logins (1/6 with three replicas).
	FirstCall, Share time.Duration
	Settled          bool // Share was reached within newReplicaWait
}

// measureReplicas starts a stack with two auth replicas behind one name
// (with production's connection settings), drives logins through its
// gateway for one round and reads how many each replica served and the CPU
// each used; then, under the same load, adds a third replica and measures
// how long it takes to get its share.
func measureReplicas(ctx context.Context, cfg config, e *env, rep *report) error {
	progress("starting a stack with two auth replicas")
	var logs bytes.Buffer
	s, err := stack.Start(ctx, stack.Options{
		BinDir: filepath.Join(e.tmp, "bin"), DataDir: filepath.Join(e.tmp, "replicas"),
		Env: append(stackEnv(cfg), productionGRPCEnv...), Output: &logs,
		Replicas: stack.Replicas{Auth: 2},
	})
	if err != nil {
		return fmt.Errorf("start the replicated stack: %w\n%s", err, logs.String())
	}
	defer func() {
		if err := s.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "stop the replicated stack:", err)
		}
	}()
	load := loginSide(e, "", s.GatewayURL).Wrk
	if _, _, err := runWrk(ctx, e.tmp, *load, cfg.Conns, cfg.Warmup); err != nil {
		return err
	}

	auths := s.Replicas("auth")
	before, err := loginsServed(ctx, auths)
	if err != nil {
		return err
	}
	pids := make([]namedPID, len(auths))
	for i, r := range auths {
		pids[i] = namedPID{r.Name, r.PID()}
	}
	cpu, err := startCPU(pids)
	if err != nil {
		return err
	}
	res, _, err := runWrk(ctx, e.tmp, *load, cfg.Conns, cfg.Round)
	if err != nil {
		return err
	}
	// A failed login counts on a replica's metrics as a served one: a
	// spread is only a spread of logins when none failed.
	rep.ReplicaLoginErrors = res.Errors
	used, err := cpu.stop()
	if err != nil {
		return err
	}
	after, err := loginsServed(ctx, auths)
	if err != nil {
		return err
	}
	for i, r := range auths {
		rep.ReplicaLogins = append(rep.ReplicaLogins, replicaLogins{Name: r.Name, Logins: after[i] - before[i], CPU: used[i].Used})
	}

	progress("adding a third auth replica under load (production's connection settings: up to a minute)")
	rep.NewReplica, err = addUnderLoad(ctx, e, s, *load, cfg.Conns)
	return err
}

// addUnderLoad adds an auth replica while wrk drives load, and measures
// when it takes its share.
func addUnderLoad(ctx context.Context, e *env, s *stack.Stack, load wrkLoad, conns int) (*newReplica, error) {
	loadCtx, stopLoad := context.WithCancel(ctx)
	loaded := make(chan error, 1)
	go func() {
		_, _, err := runWrk(loadCtx, e.tmp, load, conns, newReplicaWait+time.Minute)
		loaded <- err
	}()
	defer func() {
		stopLoad()
		<-loaded // wrk killed: its error says so, and is not a failure
	}()

	added, err := s.AddReplica(ctx, "auth")
	if err != nil {
		return nil, err
	}
	published := time.Now()
	replicas := s.Replicas("auth")
	last, err := loginsServed(ctx, replicas)
	if err != nil {
		return nil, err
	}
	got := &newReplica{}
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for time.Since(published) < newReplicaWait {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case err := <-loaded:
			return nil, fmt.Errorf("the load stopped before the new replica took its share: %v", err)
		case <-tick.C:
		}
		now, err := loginsServed(ctx, replicas)
		if err != nil {
			return nil, err
		}
		total, mine := 0, 0
		for i, r := range replicas {
			total += now[i] - last[i]
			if r == added {
				mine = now[i] - last[i]
				if got.FirstCall == 0 && now[i] > 0 {
					got.FirstCall = time.Since(published)
				}
			}
		}
		last = now
		if total > 0 && 2*len(replicas)*mine >= total {
			got.Share, got.Settled = time.Since(published), true
			return got, nil
		}
	}
	got.Share = newReplicaWait
	return got, nil
}

// loginsServed reads how many logins each replica has served.
func loginsServed(ctx context.Context, replicas []*stack.Replica) ([]int, error) {
	out := make([]int, len(replicas))
	for i, r := range replicas {
		n, err := r.Served(ctx, loginMethod)
		if err != nil {
			return nil, err
		}
		out[i] = n
	}
	return out, nil
}
