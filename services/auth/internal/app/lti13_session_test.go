package app_test

import (
	"context"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/auth/internal/adapters/memstore"
	"github.com/liveproctor/workspaces/services/auth/internal/app"
)

// lti13Launches stands in for the workspace service's LTI 1.3 launch
// verification.
type lti13Launches struct {
	gotAuthz, gotToken, gotState string
	gotBrowser                   app.LTI13BrowserProof
	launch                       app.LTI13Launch
	err                          error
}

func (l *lti13Launches) VerifyLTI13Launch(_ context.Context, authz, idToken, state string, browser app.LTI13BrowserProof) (app.LTI13Launch, error) {
	l.gotAuthz, l.gotToken, l.gotState, l.gotBrowser = authz, idToken, state, browser
	return l.launch, l.err
}

// An LTI 1.3 launch opens the ordinary 8-hour session of its workspace and
// user, which shows the launch's id, and hands on what the page needs of
// the launch.
func TestLTI13SessionIsAnOrdinarySession(t *testing.T) {
	f := newFixture(t)
	clock := func() time.Time { return f.now }
	l := &lti13Launches{launch: app.LTI13Launch{
		Launch: app.Launch{
			WorkspaceID: "w1", Email: "ada@example.com",
			CustomParameters: []app.LaunchParameter{{Name: "custom_exam_config_id", Value: "0f8fad5b-d9cb-469f-a165-70867728950e"}},
		},
		MessageType: "LtiResourceLinkRequest", RegistrationID: "r1", DeploymentID: "d1", LaunchID: "launch-1",
	}}
	a := app.New(memstore.New(clock), f.ws, app.Settings{ServiceAuthorization: service, AccessCacheTTL: time.Second},
		app.WithClock(clock), app.WithLTI13Launches(l))
	ctx := context.Background()
	token, s, launch, err := a.CreateLTI13Session(ctx, "", "jwt", "state-1", app.LTI13BrowserProof{State: "state-1"})
	if err != nil {
		t.Fatal(err)
	}
	if l.gotAuthz != service || l.gotToken != "jwt" || l.gotState != "state-1" || l.gotBrowser != (app.LTI13BrowserProof{State: "state-1"}) {
		t.Fatalf("verified with %+v: want the service's key pair and the launch as posted", l)
	}
	if s.Email != "ada@example.com" || s.WorkspaceID != "w1" || !s.ExpiresAt.Equal(f.now.Add(8*time.Hour)) {
		t.Fatalf("session %+v", s)
	}
	if launch.RegistrationID != "r1" || launch.MessageType != "LtiResourceLinkRequest" || len(launch.CustomParameters) != 1 {
		t.Fatalf("launch %+v", launch)
	}
	got, err := a.Session(ctx, asBearer(token))
	if err != nil || got.Email != "ada@example.com" || got.WorkspaceID != "w1" || got.LTILaunchID != "launch-1" {
		t.Fatalf("the token's session: %+v, %v", got, err)
	}

	l.err = fault.New(fault.Unauthenticated, "the launch's state is not this browser's")
	_, _, _, err = a.CreateLTI13Session(ctx, "", "jwt", "state-1", app.LTI13BrowserProof{State: "other"})
	wantKind(t, err, fault.Unauthenticated)

	// A launch the workspace service vouched for with no user is its bug.
	l.err, l.launch.Email = nil, ""
	_, _, _, err = a.CreateLTI13Session(ctx, "", "jwt", "state-1", app.LTI13BrowserProof{State: "state-1"})
	wantKind(t, err, fault.Internal)

	none := app.New(memstore.New(clock), f.ws, app.Settings{ServiceAuthorization: service})
	_, _, _, err = none.CreateLTI13Session(ctx, "", "jwt", "state-1", app.LTI13BrowserProof{State: "state-1"})
	wantKind(t, err, fault.Unavailable)
}
