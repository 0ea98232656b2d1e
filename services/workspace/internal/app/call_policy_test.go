package app_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/liveproctor/workspaces/pkg/fault"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/pkg/ratelimit"
	"github.com/liveproctor/workspaces/services/workspace/internal/app"
	"github.com/liveproctor/workspaces/services/workspace/internal/app/apptest"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// recordingLimits is app.Limits that writes down each step it is asked
// for, in order, and refuses the steps it is told to.
type recordingLimits struct {
	steps           []string
	refuseAnonymous error
	refuseCheck     bool
	refuseLimited   bool
}

var errThrottled = fault.New(fault.Throttled, "over the limit")

func (l *recordingLimits) LimitAnonymous(context.Context) error {
	l.steps = append(l.steps, "anonymous")
	return l.refuseAnonymous
}

func (l *recordingLimits) CheckFailures(_ context.Context, key string) error {
	l.steps = append(l.steps, "check "+key)
	if l.refuseCheck {
		return errThrottled
	}
	return nil
}

func (l *recordingLimits) Failed(_ context.Context, key string) {
	l.steps = append(l.steps, "failed "+key)
}

func (l *recordingLimits) LimitKeyPair(_ context.Context, key string, own ratelimit.Limit) error {
	step := "limit " + key + " default"
	if !own.Off() {
		step = fmt.Sprintf("limit %s %d/%d", key, own.Rate, own.Burst)
	}
	l.steps = append(l.steps, step)
	if l.refuseLimited {
		return errThrottled
	}
	return nil
}

// Every call goes through the same steps in the same order: the address's
// failures, the credentials (a failure counted), the REST-access tag, the
// rate limit; each operation's rule says which of them apply.
func TestAdmitChecksInOrderByOperation(t *testing.T) {
	limits := &recordingLimits{}
	f := newFixture(t, app.WithLimits(limits))
	res, server := f.create(f.root, app.CreateInput{ID: "school", RateLimit: &domain.RateLimit{PerSecond: 5, Burst: 7}})
	root := app.Credentials{AppKey: rootKey, AppSecret: rootSecret}
	lti := app.Credentials{AppKey: res.LTI.ConsumerKey, AppSecret: res.LTI.SharedSecret}
	own := app.Credentials{AppKey: res.Server.ConsumerKey, AppSecret: res.Server.SharedSecret}
	for _, tc := range []struct {
		name                string
		op                  string
		creds               app.Credentials
		refuseCheck, refuse bool
		admitted            bool
		wantKind            fault.Kind // of the refusal
		wantCaller          string
		wantSteps           []string
	}{
		{name: "public, credentials not looked at", op: "GetLtiConfiguration", admitted: true,
			creds: app.Credentials{AppKey: "k", AppSecret: "wrong"}, wantSteps: []string{"anonymous"}},
		{name: "no credentials", op: "GetWorkspace", wantKind: fault.Unauthenticated},
		{name: "limited", op: "GetWorkspace", creds: root, admitted: true, wantCaller: "root",
			wantSteps: []string{"check " + rootKey, "limit " + rootKey + " default"}},
		{name: "workspace's own limit", op: "ListWorkspaces", creds: own, admitted: true, wantCaller: server.WorkspaceID,
			wantSteps: []string{"check " + own.AppKey, fmt.Sprintf("limit %s 5/7", own.AppKey)}},
		{name: "wrong secret counted", op: "GetWorkspace", creds: app.Credentials{AppKey: rootKey, AppSecret: "wrong"},
			wantKind: fault.Unauthenticated, wantSteps: []string{"check " + rootKey, "failed " + rootKey}},
		{name: "address refused before credentials", op: "Authenticate", creds: root, refuseCheck: true,
			wantKind: fault.Throttled, wantSteps: []string{"check " + rootKey}},
		{name: "over the rate limit", op: "GetWorkspace", creds: root, refuse: true,
			wantKind: fault.Throttled, wantSteps: []string{"check " + rootKey, "limit " + rootKey + " default"}},
		{name: "no REST access", op: "GetWorkspace", creds: lti,
			wantKind: fault.PermissionDenied, wantSteps: []string{"check " + lti.AppKey}},
		{name: "unknown operation: the strictest rule", op: "NoSuchOperation", creds: lti,
			wantKind: fault.PermissionDenied, wantSteps: []string{"check " + lti.AppKey}},
		{name: "Authenticate: any key pair, unlimited", op: "Authenticate", creds: lti, admitted: true, wantCaller: server.WorkspaceID,
			wantSteps: []string{"check " + lti.AppKey}},
		{name: "status: unlimited", op: "GetWorkspaceStatus", creds: root, admitted: true, wantCaller: "root",
			wantSteps: []string{"check " + rootKey}},
		{name: "launch: unlimited, anonymous", op: "VerifyLtiLaunch", creds: root, admitted: true, wantCaller: "root",
			wantSteps: []string{"anonymous", "check " + rootKey}},
		{name: "revocation: unlimited", op: "RecordSessionRevocation", creds: root, admitted: true, wantCaller: "root",
			wantSteps: []string{"check " + rootKey}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			*limits = recordingLimits{refuseCheck: tc.refuseCheck, refuseLimited: tc.refuse}
			caller, err := f.app.Admit(context.Background(), tc.op, tc.creds)
			if !tc.admitted {
				apptest.WantKind(t, err, tc.wantKind)
			} else if err != nil {
				t.Fatal(err)
			}
			if caller.WorkspaceID != tc.wantCaller {
				t.Errorf("caller %q, want %q", caller.WorkspaceID, tc.wantCaller)
			}
			if !slices.Equal(limits.steps, tc.wantSteps) {
				t.Errorf("steps %q, want %q", limits.steps, tc.wantSteps)
			}
		})
	}
}

// Exactly the operations made on behalf of a client no credentials admit
// count against the anonymous limits, first of all: the public ones, and
// the launches the auth service verifies for a browser. A refusal (per
// address or in total) is the answer, whatever the credentials.
func TestAdmitLimitsExactlyTheAnonymousOperations(t *testing.T) {
	limits := &recordingLimits{}
	f := newFixture(t, app.WithLimits(limits))
	root := app.Credentials{AppKey: rootKey, AppSecret: rootSecret}
	anonymous := []string{
		"GetLtiConfiguration", "StartLti13Login", "GetLtiToolKeys", "CreateLtiDeepLinkingResponse",
		"RegisterLtiPlatform", "VerifyLtiLaunch", "VerifyLti13Launch", "OpenPortalLink",
	}
	var limited []string
	for _, m := range workspacev1.WorkspaceService_ServiceDesc.Methods {
		*limits = recordingLimits{}
		// GetPortalSession takes a portal session only: a key pair is
		// refused once its checks are done.
		if _, err := f.app.Admit(context.Background(), m.MethodName, root); err != nil && m.MethodName != "GetPortalSession" {
			t.Fatalf("%s: %v", m.MethodName, err)
		}
		if slices.Contains(limits.steps, "anonymous") {
			if limits.steps[0] != "anonymous" {
				t.Errorf("%s: steps %q; the anonymous limits come first", m.MethodName, limits.steps)
			}
			limited = append(limited, m.MethodName)
		}
	}
	slices.Sort(limited)
	slices.Sort(anonymous)
	if !slices.Equal(limited, anonymous) {
		t.Errorf("operations under the anonymous limits %q, want %q", limited, anonymous)
	}
	for _, refusal := range []error{errThrottled, fault.New(fault.Unavailable, "busy")} {
		for _, op := range []string{"StartLti13Login", "VerifyLti13Launch"} {
			*limits = recordingLimits{refuseAnonymous: refusal}
			_, err := f.app.Admit(context.Background(), op, root)
			apptest.WantKind(t, err, fault.KindOf(refusal))
			if !slices.Equal(limits.steps, []string{"anonymous"}) {
				t.Errorf("%s refused: steps %q, want nothing after the anonymous limits", op, limits.steps)
			}
		}
	}
}
