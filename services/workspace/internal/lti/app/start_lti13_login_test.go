package app_test

import (
	"context"
	"encoding/base64"
	"errors"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/workspace/internal/app"
	"github.com/liveproctor/workspaces/services/workspace/internal/app/apptest"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	"github.com/liveproctor/workspaces/services/workspace/internal/lti/adapters/ltistate"
	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

const loginMoodleIssuer = "https://moodle.example.edu"

// recordingLogins is a memory login store that also notes the TTLs it was
// given.
type recordingLogins struct {
	*ltistate.MemoryLogins
	mu   sync.Mutex
	ttls []time.Duration
}

func (r *recordingLogins) Put(ctx context.Context, state string, l ltiapp.LTI13Login, ttl time.Duration) error {
	r.mu.Lock()
	r.ttls = append(r.ttls, ttl)
	r.mu.Unlock()
	return r.MemoryLogins.Put(ctx, state, l, ttl)
}

// loginFixture is an app with LTI 1.3 logins in memory and a workspace "w"
// registered with Canvas (client 100, deployment 1:a).
type loginFixture struct {
	*fixture
	logins *recordingLogins
	health *memoryHealth
	self   domain.Caller
	reg    ltidomain.Registration
}

func newLoginFixture(t *testing.T) *loginFixture {
	t.Helper()
	logins := &recordingLogins{MemoryLogins: ltistate.NewMemoryLogins(100, nil)}
	health := &memoryHealth{}
	f := newFixture(t, deps{logins: logins, health: health})
	_, self := f.create(f.root, app.CreateInput{ID: "w"})
	reg, err := f.regs.Create(context.Background(), self, "w", canvas("100", "1:a"))
	if err != nil {
		t.Fatal(err)
	}
	return &loginFixture{fixture: f, logins: logins, health: health, self: self, reg: reg.Registration}
}

func canvasLogin() ltidomain.LTI13LoginInitiation {
	return ltidomain.LTI13LoginInitiation{
		Issuer: "https://canvas.instructure.com", LoginHint: "535fa085", TargetLinkURI: lti13LaunchURL,
		LTIMessageHint: "eyJhbGciOiJIUzI1NiJ9.e30.sig", ClientID: "100", DeploymentID: "1:a",
	}
}

// A login sends the browser to the registration's authorization endpoint
// with exactly the authentication request's parameters, and stores a fresh
// nonce under a fresh state for an hour, for the launch to take.
func TestStartLTI13LoginRedirectsWithAStoredState(t *testing.T) {
	f := newLoginFixture(t)
	ctx := context.Background()
	got, err := f.logins13.Start(ctx, "req-login", canvasLogin())
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(got.URL)
	if err != nil || u.Scheme+"://"+u.Host+u.Path != "https://sso.canvaslms.com/api/lti/authorize_redirect" {
		t.Fatalf("redirect %q, %v", got.URL, err)
	}
	q := u.Query()
	want := url.Values{
		"scope": {"openid"}, "response_type": {"id_token"}, "response_mode": {"form_post"}, "prompt": {"none"},
		"client_id": {"100"}, "redirect_uri": {lti13LaunchURL}, "login_hint": {"535fa085"},
		"lti_message_hint": {"eyJhbGciOiJIUzI1NiJ9.e30.sig"}, "state": {got.State}, "nonce": {q.Get("nonce")},
	}
	if q.Encode() != want.Encode() {
		t.Fatalf("query:\n got %s\nwant %s", q.Encode(), want.Encode())
	}
	for _, secret := range []string{got.State, q.Get("nonce")} {
		if b, err := base64.RawURLEncoding.DecodeString(secret); err != nil || len(b) != 32 {
			t.Fatalf("%q is not 32 bytes in base64url: %v", secret, err)
		}
	}
	if got.StateTTL != 10*time.Minute || len(f.logins.ttls) != 1 || f.logins.ttls[0] != ltiapp.LTI13StateTTL {
		t.Fatalf("state TTL %v, stored for %v", got.StateTTL, f.logins.ttls)
	}
	login, ok, err := f.logins.Take(ctx, got.State)
	if !ok || err != nil || login.Nonce != q.Get("nonce") || login.WorkspaceID != "w" || login.RegistrationID != f.reg.ID || login.CreatedAt.IsZero() {
		t.Fatalf("stored login %+v, %v, %v", login, ok, err)
	}

	// Another login of the same user: another state and nonce.
	again, err := f.logins13.Start(ctx, "req-login", canvasLogin())
	if err != nil {
		t.Fatal(err)
	}
	next, _ := url.Parse(again.URL)
	if again.State == got.State || next.Query().Get("nonce") == q.Get("nonce") || again.State == next.Query().Get("nonce") {
		t.Fatal("a second login reused a state or nonce")
	}
}

// A login with lti_storage_target answers what its page puts in the
// platform's storage, and the frame and origin to put it in; its state
// names them (for the launch), and its stored login says that its launch
// must prove itself through that storage.
func TestStartLTI13LoginWithPlatformStorage(t *testing.T) {
	f := newLoginFixture(t)
	ctx := context.Background()
	in := canvasLogin()
	in.StorageTarget = "post_message_forwarding"
	got, err := f.logins13.Start(ctx, "req-login", in)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(got.URL)
	if u.Query().Get("state") != got.State || u.Query().Get("nonce") != got.Nonce || got.Nonce == "" {
		t.Fatalf("redirect %s, state %q, nonce %q", got.URL, got.State, got.Nonce)
	}
	if got.StorageTarget != "post_message_forwarding" || got.PlatformOrigin != "https://sso.canvaslms.com" {
		t.Fatalf("storage %q at %q", got.StorageTarget, got.PlatformOrigin)
	}
	parts := strings.Split(got.State, ".")
	enc := base64.RawURLEncoding.EncodeToString
	if len(parts) != 3 || len(parts[0]) != 43 || parts[1] != enc([]byte(got.StorageTarget)) || parts[2] != enc([]byte(got.PlatformOrigin)) {
		t.Fatalf("state %q does not name the storage", got.State)
	}
	login, ok, err := f.logins.Take(ctx, got.State)
	if !ok || err != nil || login.StorageTarget != "post_message_forwarding" || login.Nonce != got.Nonce {
		t.Fatalf("stored login %+v, %v, %v", login, ok, err)
	}

	// Without it, the state is a bare secret and the login a cookie's.
	plain, err := f.logins13.Start(ctx, "req-login", canvasLogin())
	if err != nil || strings.Contains(plain.State, ".") || plain.StorageTarget != "" || plain.PlatformOrigin != "" {
		t.Fatalf("a login without storage: %+v, %v", plain, err)
	}
	if login, _, _ := f.logins.Take(ctx, plain.State); login.StorageTarget != "" {
		t.Fatalf("stored login %+v", login)
	}

	// A target that is no frame's name is refused, and stores nothing.
	in.StorageTarget = "<x>"
	stored := len(f.logins.ttls)
	if _, err := f.logins13.Start(ctx, "req-login", in); fault.KindOf(err) != fault.Invalid || len(f.logins.ttls) != stored {
		t.Fatalf("a target %q: %v", in.StorageTarget, err)
	}
}

// client_id and lti_deployment_id are optional: without client_id the
// issuer's only registration is used, and without a deployment id the
// launch's claim is what gets checked.
func TestStartLTI13LoginWithoutOptionalParameters(t *testing.T) {
	f := newLoginFixture(t)
	in := canvasLogin()
	in.ClientID, in.DeploymentID, in.LTIMessageHint = "", "", ""
	got, err := f.logins13.Start(context.Background(), "req-login", in)
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(got.URL)
	if u.Query().Get("client_id") != "100" || u.Query().Has("lti_message_hint") {
		t.Fatalf("redirect %s", got.URL)
	}
}

// A login without client_id is resolved among the registrations that can
// own it: another workspace registering the same issuer, with deployments
// of its own, leaves the victim's logins that name their deployment as
// they were. Only a second claim of the same (issuer, deployment), which
// LTI Core says cannot both be genuine, or a login naming neither
// client_id nor deployment, is ambiguous; a deleted workspace's
// registration never counts.
func TestStartLTI13LoginWithoutClientIDIgnoresOtherTenants(t *testing.T) {
	f := newLoginFixture(t)
	ctx := context.Background()
	in := canvasLogin()
	in.ClientID = ""
	wantOwner := func(what string) {
		t.Helper()
		got, err := f.logins13.Start(ctx, "req-login", in)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		u, _ := url.Parse(got.URL)
		login, ok, err := f.logins.Take(ctx, got.State)
		if u.Query().Get("client_id") != "100" || !ok || err != nil || login.WorkspaceID != "w" || login.RegistrationID != f.reg.ID {
			t.Fatalf("%s: redirect %s, login %+v, %v, %v; want w's registration", what, got.URL, login, ok, err)
		}
	}
	wantOwner("alone")

	_, other := f.create(f.root, app.CreateInput{ID: "x"})
	if _, err := f.regs.Create(ctx, other, "x", canvas("made-up", "2:b")); err != nil {
		t.Fatal(err)
	}
	wantOwner("with another workspace registering the issuer")
	// That workspace's own deployment finds its registration.
	theirs := in
	theirs.DeploymentID = "2:b"
	if got, err := f.logins13.Start(ctx, "req-login", theirs); err != nil || !strings.Contains(got.URL, "client_id=made-up") {
		t.Fatalf("the other workspace's deployment: %+v, %v", got, err)
	}
	unknown := in
	unknown.DeploymentID = "3:c"
	if _, err := f.logins13.Start(ctx, "req-login", unknown); !errors.Is(err, ltidomain.ErrLTI13LoginRegistration) {
		t.Fatalf("a deployment no registration holds: %v, want %v", err, ltidomain.ErrLTI13LoginRegistration)
	}
	neither := in
	neither.DeploymentID = ""
	if _, err := f.logins13.Start(ctx, "req-login", neither); !errors.Is(err, ltidomain.ErrLTI13LoginAmbiguous) {
		t.Fatalf("neither client_id nor deployment, two registrations: %v, want %v", err, ltidomain.ErrLTI13LoginAmbiguous)
	}

	// A second claim of the victim's deployment is ambiguous, until its
	// workspace is deleted.
	_, third := f.create(f.root, app.CreateInput{ID: "y"})
	if _, err := f.regs.Create(ctx, third, "y", canvas("copy", "1:a")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.logins13.Start(ctx, "req-login", in); !errors.Is(err, ltidomain.ErrLTI13LoginAmbiguous) {
		t.Fatalf("two registrations holding the deployment: %v, want %v", err, ltidomain.ErrLTI13LoginAmbiguous)
	}
	if _, err := f.app.DeleteWorkspace(ctx, f.root, "y", app.Precondition{}); err != nil {
		t.Fatal(err)
	}
	wantOwner("after the second claim's workspace is deleted")
}

// Refusals: malformed parameters and an issuer with several registrations
// but no client_id are INVALID_ARGUMENT; an unknown registration or
// deployment, or a deleted workspace's, UNAUTHENTICATED. None stores a
// login.
func TestStartLTI13LoginRefusals(t *testing.T) {
	f := newLoginFixture(t)
	ctx := context.Background()
	moodle := func(clientID string) ltidomain.NewRegistration {
		return ltidomain.NewRegistration{Issuer: loginMoodleIssuer, ClientID: clientID,
			AuthLoginURL: loginMoodleIssuer + "/mod/lti/auth.php", JWKSURL: loginMoodleIssuer + "/mod/lti/certs.php"}
	}
	for _, id := range []string{"m1", "m2"} {
		if _, err := f.regs.Create(ctx, f.self, "w", moodle(id)); err != nil {
			t.Fatal(err)
		}
	}
	change := func(edit func(*ltidomain.LTI13LoginInitiation)) ltidomain.LTI13LoginInitiation {
		in := canvasLogin()
		edit(&in)
		return in
	}
	cases := []struct {
		name string
		in   ltidomain.LTI13LoginInitiation
		want error // a sentinel, or a kind
		kind fault.Kind
	}{
		{"no login_hint", change(func(in *ltidomain.LTI13LoginInitiation) { in.LoginHint = "" }), nil, fault.Invalid},
		{"another target link", change(func(in *ltidomain.LTI13LoginInitiation) { in.TargetLinkURI = "https://lti.test/lti/v1/launch" }), nil, fault.Invalid},
		{"an unknown client_id", change(func(in *ltidomain.LTI13LoginInitiation) { in.ClientID = "999" }), ltidomain.ErrLTI13LoginRegistration, 0},
		{"an issuer differing by a slash", change(func(in *ltidomain.LTI13LoginInitiation) { in.Issuer += "/" }), ltidomain.ErrLTI13LoginRegistration, 0},
		{"an unknown issuer without client_id", change(func(in *ltidomain.LTI13LoginInitiation) {
			in.Issuer, in.ClientID = "https://lms.example.org", ""
		}), ltidomain.ErrLTI13LoginRegistration, 0},
		{"an unregistered deployment", change(func(in *ltidomain.LTI13LoginInitiation) { in.DeploymentID = "2:b" }), ltidomain.ErrLTI13LoginDeployment, 0},
		{"several registrations and no client_id", change(func(in *ltidomain.LTI13LoginInitiation) {
			in.Issuer, in.ClientID, in.DeploymentID = loginMoodleIssuer, "", ""
		}), ltidomain.ErrLTI13LoginAmbiguous, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := f.logins13.Start(ctx, "req-login", c.in)
			if c.want != nil && !errors.Is(err, c.want) {
				t.Fatalf("error %v, want %v", err, c.want)
			}
			if c.want == nil {
				apptest.WantKind(t, err, c.kind)
			}
		})
	}
	if got := fault.KindOf(ltidomain.ErrLTI13LoginAmbiguous); got != fault.Invalid || !strings.Contains(ltidomain.ErrLTI13LoginAmbiguous.Message, "client_id") {
		t.Fatalf("the ambiguous issuer's refusal: %v", ltidomain.ErrLTI13LoginAmbiguous)
	}
	// With client_id, one of the issuer's several registrations is fine.
	in := change(func(in *ltidomain.LTI13LoginInitiation) {
		in.Issuer, in.ClientID, in.DeploymentID = loginMoodleIssuer, "m2", ""
	})
	if _, err := f.logins13.Start(ctx, "req-login", in); err != nil {
		t.Fatalf("with client_id m2: %v", err)
	}
	if len(f.logins.ttls) != 1 {
		t.Fatalf("%d logins stored, want only the last one's", len(f.logins.ttls))
	}

	// A deleted workspace's registrations launch nothing.
	if _, err := f.app.DeleteWorkspace(ctx, f.root, "w", app.Precondition{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.logins13.Start(ctx, "req-login", canvasLogin()); !errors.Is(err, ltidomain.ErrLTI13LoginRegistration) {
		t.Fatalf("a deleted workspace: %v", err)
	}
}
