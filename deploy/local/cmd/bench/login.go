package main

import (
	"context"
	"fmt"
	"net/http"
)

// loginUsers is how many different users the login load cycles through,
// on both servers alike.
const loginUsers = 1000

// measureLogin alternates reference, floor and stack rounds of SDK login
// (A B C A B C…), driven by wrk at cfg.Conns connections, and reads every
// process's peak RSS and each redis-server's command statistics over those
// rounds. The floor is benchproxy in front of benchauth: the least the
// stack's architecture (an HTTP front, one gRPC hop to a token service,
// Redis) can do for a login, between the bare reference and the stack.
func measureLogin(ctx context.Context, cfg config, e *env, rep *report) error {
	procs, err := e.serverProcesses()
	if err != nil {
		return err
	}
	resetPeaks := func() error {
		for _, p := range procs {
			if err := resetPeak(p.PID); err != nil {
				return err
			}
		}
		for _, addr := range []string{e.stack.RedisAddr, e.refRedis.Addr(), e.floorRedis.Addr()} {
			if err := resetCommandStats(ctx, addr); err != nil {
				return err
			}
		}
		return nil
	}
	// The stack goes last: -profile samples the last side.
	rounds, err := alternate(ctx, cfg, e, cfg.Conns, []side{loginSide(e, "login, reference", e.ref.URL),
		loginSide(e, "login, floor", e.proxy.URL), loginSide(e, "login, stack", e.stack.GatewayURL)}, resetPeaks)
	if err != nil {
		return err
	}
	rep.LoginRef, rep.LoginFloor, rep.LoginStack = rounds[0], rounds[1], rounds[2]
	if rep.RedisLoginStack, err = readCommandStats(ctx, e.stack.RedisAddr); err != nil {
		return err
	}
	if rep.RedisLoginRef, err = readCommandStats(ctx, e.refRedis.Addr()); err != nil {
		return err
	}
	if rep.RedisLoginFloor, err = readCommandStats(ctx, e.floorRedis.Addr()); err != nil {
		return err
	}
	for _, r := range []struct {
		addr string
		into *keyspace
	}{{e.refRedis.Addr(), &rep.KeysRef}, {e.floorRedis.Addr(), &rep.KeysFloor}, {e.stack.RedisAddr, &rep.KeysStack}} {
		if *r.into, err = readKeyspace(ctx, r.addr); err != nil {
			return err
		}
	}
	rep.MemoryLogin, err = readAll(e)
	return err
}

// loginSide is wrk's login load at the server at base: the root key pair
// logging in loginUsers users in turn.
func loginSide(e *env, name, base string) side {
	return side{Name: name, Wrk: &wrkLoad{Method: http.MethodPost, URL: base + "/api/login/sdk", Header: e.basic, Bodies: loginBodies}}
}

// loginBodies are the login's bodies, one per user: the same for every
// side.
var loginBodies = func() [][]byte {
	bodies := make([][]byte, loginUsers)
	for i := range bodies {
		bodies[i] = fmt.Appendf(nil, `{"email":"user%04d@bench.example","workspaceId":%q}`, i, rootWorkspace)
	}
	return bodies
}()

// readAll reads the memory of every measured process.
func readAll(e *env) ([]processMemory, error) {
	procs, err := e.serverProcesses()
	if err != nil {
		return nil, err
	}
	var ms []processMemory
	for _, p := range procs {
		m, err := readMemory(p.PID)
		if err != nil {
			return nil, err
		}
		ms = append(ms, processMemory{Name: p.Name, memory: m})
	}
	return ms, nil
}
