package main

import (
	"context"
	"fmt"
	"net/http"

	"github.com/liveproctor/workspaces/deploy/local/loadgen"
)

// loginUsers is how many different users the login load cycles through,
// on both servers alike.
const loginUsers = 1000

// measureLogin alternates reference and stack rounds of SDK login at
// cfg.Conns callers, and reads every process's peak RSS over those rounds.
func measureLogin(ctx context.Context, cfg config, e *env, rep *report) error {
	bodies := make([][]byte, loginUsers)
	for i := range bodies {
		bodies[i] = fmt.Appendf(nil, `{"email":"user%04d@bench.example","workspaceId":%q}`, i, rootWorkspace)
	}
	login := func(base string) loadgen.Op {
		return loadgen.HTTPRequest{Client: e.http, Method: http.MethodPost, URL: base + "/api/login/sdk",
			Header: e.basic, Bodies: bodies}.Op()
	}
	procs, err := e.processes()
	if err != nil {
		return err
	}
	resetPeaks := func() error {
		for _, p := range procs {
			if err := resetPeak(p.PID); err != nil {
				return err
			}
		}
		return nil
	}
	rep.LoginRef, rep.LoginStack, err = alternate(ctx, cfg, e, cfg.Conns,
		side{"login, reference", login(e.ref.URL)}, side{"login, stack", login(e.stack.GatewayURL)}, resetPeaks)
	if err != nil {
		return err
	}
	rep.MemoryLogin, err = readAll(e)
	return err
}

// readAll reads the memory of every measured process.
func readAll(e *env) ([]processMemory, error) {
	procs, err := e.processes()
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
