package app_test

import (
	"context"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/auth/internal/adapters/memstore"
	"github.com/liveproctor/workspaces/services/auth/internal/app"
)

// launches stands in for the workspace service's launch verification.
type launches struct {
	gotAuthz string
	got      []app.LaunchParameter
	launch   app.Launch
	err      error
}

func (l *launches) VerifyLaunch(_ context.Context, authz, method string, params []app.LaunchParameter) (app.Launch, error) {
	l.gotAuthz, l.got = authz, params
	if method != "POST" {
		return app.Launch{}, fault.New(fault.Invalid, "method")
	}
	return l.launch, l.err
}

func TestLTISessionIsAnOrdinarySession(t *testing.T) {
	f := newFixture(t)
	clock := func() time.Time { return f.now }
	l := &launches{launch: app.Launch{
		WorkspaceID: "w1", Email: "ada@example.com",
		CustomParameters: []app.LaunchParameter{{Name: "custom_exam_config_id", Value: "0f8fad5b-d9cb-469f-a165-70867728950e"}},
	}}
	a := app.New(memstore.New(clock), f.ws, app.Settings{ServiceAuthorization: service, AccessCacheTTL: time.Second},
		app.WithClock(clock), app.WithLaunches(l))
	params := []app.LaunchParameter{{Name: "oauth_consumer_key", Value: "k"}, {Name: "a", Value: "1"}, {Name: "a", Value: "2"}}
	token, s, launch, err := a.CreateLTISession(context.Background(), "", "POST", params)
	if err != nil {
		t.Fatal(err)
	}
	if l.gotAuthz != service || len(l.got) != 3 {
		t.Fatalf("verified with %q, %v: want the service's key pair and every parameter", l.gotAuthz, l.got)
	}
	if s.Email != "ada@example.com" || s.WorkspaceID != "w1" || !s.ExpiresAt.Equal(f.now.Add(8*time.Hour)) {
		t.Fatalf("session %+v", s)
	}
	if len(launch.CustomParameters) != 1 {
		t.Fatalf("launch %+v", launch)
	}
	got, err := a.Session(context.Background(), asBearer(token))
	if err != nil || got.Email != "ada@example.com" {
		t.Fatalf("the token's session: %+v, %v", got, err)
	}

	l.err = fault.New(fault.Unauthenticated, "the launch's signature does not match")
	_, _, _, err = a.CreateLTISession(context.Background(), "", "POST", params)
	wantKind(t, err, fault.Unauthenticated)

	none := app.New(memstore.New(clock), f.ws, app.Settings{ServiceAuthorization: service})
	_, _, _, err = none.CreateLTISession(context.Background(), "", "POST", params)
	wantKind(t, err, fault.Unavailable)
}
