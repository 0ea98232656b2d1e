package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"google.golang.org/grpc/metadata"

	"github.com/liveproctor/workspaces/deploy/local/loadgen"
	"github.com/liveproctor/workspaces/pkg/basicauth"
	authv1 "github.com/liveproctor/workspaces/pkg/gen/auth/v1"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
)

// hopBlock is how many calls of one path the one-caller hop makes in a row.
// Within a block a path is called back to back, as by one caller; turning
// paths call by call instead leaves each server idle through the other
// paths' calls, and a server woken from idle on this kind of machine is
// slower (in four paired runs the hop read 0.61 ms on average that way,
// 0.46 ms in blocks). 50 calls take about 0.1 s, far shorter than the
// machine's slow and fast phases, which last seconds, so every path still
// meets each phase alike.
const hopBlock = 50

// measureHop calls GetWorkspace on the root workspace through the gateway
// (REST) and directly on the workspace service (gRPC): the difference is
// what the gateway hop costs. With one caller the two take turns in blocks
// of hopBlock calls (see loadgen.Interleave), since the difference of two
// medians taken seconds apart on a shared machine is mostly noise, and so
// does the same call through benchproxy, the floor any HTTP front pays on
// this machine; with cfg.Conns connections wrk drives the gateway and
// benchproxy in alternating rounds, so neither loads the other.
func measureHop(ctx context.Context, cfg config, e *env, rep *report) error {
	rest := loadgen.HTTPRequest{Client: e.http, Method: http.MethodGet,
		URL: e.stack.GatewayURL + "/api/workspace/" + rootWorkspace, Header: e.basic}.Op()
	md := metadata.Pairs("authorization", basicauth.Header(rootKey, rootSecret))
	direct := grpcOp(func(ctx context.Context) error {
		_, err := e.workspace.GetWorkspace(metadata.NewOutgoingContext(ctx, md),
			&workspacev1.GetWorkspaceRequest{Id: rootWorkspace})
		return err
	})
	floor := loadgen.HTTPRequest{Client: e.http, Method: http.MethodGet,
		URL: e.proxy.URL + "/api/workspace/" + rootWorkspace, Header: e.basic}.Op()
	grpcSide, restSide := side{Name: "GetWorkspace, direct gRPC", Op: direct}, side{Name: "GetWorkspace, REST via gateway", Op: rest}
	floorName := "GetWorkspace, REST via benchproxy"

	// At 1 caller the three paths take turns in one run, so the gateway
	// and its floor are both compared with the direct call of the same
	// moments.
	if err := warmUp(ctx, cfg, "GetWorkspace, all three paths", 1, interleaved(direct, rest, floor)); err != nil {
		return err
	}
	opts := loadgen.Options{Workers: 1, Duration: 3 * time.Duration(cfg.Rounds) * cfg.Round, Block: hopBlock}
	rs, err := loadgen.Interleave(ctx, opts, direct, rest, floor)
	if err != nil {
		return fmt.Errorf("GetWorkspace interleaved: %w", err)
	}
	for i, name := range []string{grpcSide.Name, restSide.Name, floorName} {
		progress("  %-40s %3d caller:  %s", name+" (interleaved)", 1, rs[i])
	}
	rep.Hop = append(rep.Hop, hop{Callers: 1, Interleaved: true,
		GRPC:  measurement{Scenario: grpcSide.Name, Callers: 1, Result: rs[0]},
		REST:  measurement{Scenario: restSide.Name, Callers: 1, Result: rs[1]},
		Floor: &measurement{Scenario: floorName, Callers: 1, Result: rs[2]}})

	// At cfg.Conns connections wrk drives the gateway and benchproxy in
	// alternating rounds: what each front spends per call, beside the
	// other, is the gateway's cost over the floor.
	get := func(name, base string) side {
		return side{Name: name, Wrk: &wrkLoad{Method: http.MethodGet, URL: base + "/api/workspace/" + rootWorkspace, Header: e.basic}}
	}
	// The gateway goes second: -profile samples the second side.
	fronts, err := alternate(ctx, cfg, e, cfg.Conns,
		[]side{get(floorName, e.proxy.URL), get(restSide.Name, e.stack.GatewayURL)}, nil)
	if err != nil {
		return err
	}
	rep.FrontProxy, rep.FrontGateway = fronts[0], fronts[1]
	return nil
}

// interleaved is one op that calls each of ops in turn, for warming them
// all up.
func interleaved(ops ...loadgen.Op) loadgen.Op {
	return func(ctx context.Context) error {
		var errs []error
		for _, op := range ops {
			errs = append(errs, op(ctx))
		}
		return errors.Join(errs...)
	}
}

// measureIntrospection logs one user in through the gateway, then
// introspects that token over gRPC on the auth service at cfg.Conns.
func measureIntrospection(ctx context.Context, cfg config, e *env, rep *report) error {
	var login struct {
		Auth string `json:"auth"`
	}
	if err := e.postJSON(ctx, "/api/login/sdk",
		fmt.Sprintf(`{"email":"introspect@bench.example","workspaceId":%q}`, rootWorkspace), &login); err != nil {
		return fmt.Errorf("log in for introspection: %w", err)
	}
	md := metadata.Pairs("authorization", basicauth.Header(rootKey, rootSecret))
	req := &authv1.IntrospectSdkTokenRequest{Token: login.Auth}
	op := grpcOp(func(ctx context.Context) error {
		got, err := e.auth.IntrospectSdkToken(metadata.NewOutgoingContext(ctx, md), req)
		if err != nil {
			return err
		}
		if !got.GetActive() {
			return errInactive
		}
		return nil
	})
	if err := warmUp(ctx, cfg, "IntrospectSdkToken", cfg.Conns, op); err != nil {
		return err
	}
	m, err := measure(ctx, cfg, "IntrospectSdkToken, direct gRPC", cfg.Conns, op)
	rep.Introspect = m
	return err
}

// errInactive is an introspection answer that says the token is not valid.
var errInactive = errors.New("introspection: token not active")
