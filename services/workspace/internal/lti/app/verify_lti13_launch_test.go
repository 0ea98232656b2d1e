package app_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/jose"
	"github.com/liveproctor/workspaces/services/workspace/internal/app"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	"github.com/liveproctor/workspaces/services/workspace/internal/lti/adapters/ltistate"
	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

const (
	platformIssuer = "https://platform.example"
	lti13LaunchURL = "https://lti.test/lti/v1p3/launch"
	examConfig     = "0f8fad5b-d9cb-469f-a165-70867728950e"
)

// launchKeys is ltiapp.PlatformKeys over fixed keys, or down.
type launchKeys struct {
	keys map[string]*rsa.PublicKey
	down bool
}

func (k *launchKeys) Key(_ context.Context, _, _, kid string) (*rsa.PublicKey, error) {
	if k.down {
		return nil, errors.Join(ltiapp.ErrPlatformKeysUnavailable, errors.New("connection refused"))
	}
	if key, ok := k.keys[kid]; ok {
		return key, nil
	}
	return nil, ltiapp.ErrPlatformKeyNotFound
}

type lti13Fixture struct {
	*fixture
	clock   *clock
	guard   *recordingGuard
	logins  *ltistate.MemoryLogins
	records *memoryLaunches
	health  *memoryHealth
	keys    *launchKeys
	signer  *rsa.PrivateKey
	self    domain.Caller          // the workspace school's own key pair
	lti     app.LTIKeys            // school's LTI 1.1 key pair
	reg     ltidomain.Registration // client-1, deployment dep-1
	other   ltidomain.Registration // client-2 of the same workspace
}

func newLTI13Fixture(t *testing.T) *lti13Fixture {
	signer, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	clock := &clock{now: time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)}
	lf := &lti13Fixture{
		clock: clock, guard: &recordingGuard{}, logins: ltistate.NewMemoryLogins(100, clock.Now),
		keys: &launchKeys{keys: map[string]*rsa.PublicKey{"k1": &signer.PublicKey}}, signer: signer, records: &memoryLaunches{},
		health: &memoryHealth{},
	}
	lf.fixture = newFixture(t, deps{now: lf.clock.Now, limits: lf.guard, logins: lf.logins, keys: lf.keys, records: lf.records, health: lf.health})
	created, self := lf.create(lf.root, app.CreateInput{ID: "school"})
	lf.self, lf.lti = self, created.LTI
	for _, r := range []struct {
		dst    *ltidomain.Registration
		client string
	}{{&lf.reg, "client-1"}, {&lf.other, "client-2"}} {
		created, err := lf.regs.Create(context.Background(), self, "school", ltidomain.NewRegistration{
			Issuer: platformIssuer, ClientID: r.client, DeploymentIDs: []string{"dep-1"},
			AuthLoginURL: platformIssuer + "/auth", JWKSURL: platformIssuer + "/jwks",
		})
		if err != nil {
			t.Fatal(err)
		}
		*r.dst = created.Registration
	}
	return lf
}

// login stores a login of reg under state, as StartLTI13Login does.
func (lf *lti13Fixture) login(state string, reg ltidomain.Registration) {
	_ = lf.logins.Put(context.Background(), state, ltiapp.LTI13Login{
		Nonce: "nonce-" + state, WorkspaceID: "school", RegistrationID: reg.ID, CreatedAt: lf.clock.Now(),
	}, ltiapp.LTI13StateTTL)
}

// claims are a resource-link launch's claims answering the login of state.
func (lf *lti13Fixture) claims(state string) map[string]any {
	now := lf.clock.Now().Unix()
	return map[string]any{
		"iss": platformIssuer, "aud": "client-1", "sub": "u-42", "email": "ada@school.edu",
		"iat": now, "exp": now + 300, "nonce": "nonce-" + state,
		"https://purl.imsglobal.org/spec/lti/claim/version":         "1.3.0",
		"https://purl.imsglobal.org/spec/lti/claim/message_type":    ltidomain.MessageResourceLink,
		"https://purl.imsglobal.org/spec/lti/claim/deployment_id":   "dep-1",
		"https://purl.imsglobal.org/spec/lti/claim/target_link_uri": lti13LaunchURL,
		"https://purl.imsglobal.org/spec/lti/claim/roles":           []string{},
		"https://purl.imsglobal.org/spec/lti/claim/resource_link":   map[string]string{"id": "rl-1"},
		"https://purl.imsglobal.org/spec/lti/claim/custom":          map[string]string{"exam_config_id": examConfig},
	}
}

func (lf *lti13Fixture) sign(claims map[string]any, kid string) string {
	lf.t.Helper()
	token, err := jose.Sign(claims, kid, lf.signer)
	if err != nil {
		lf.t.Fatal(err)
	}
	return token
}

// launch verifies a launch as the auth service does, in the request
// "req-launch".
func (lf *lti13Fixture) launch(token, state, browserState string) (ltidomain.LTI13Launch, error) {
	caller := lf.root
	caller.RequestID = "req-launch"
	return lf.launches13.Verify(context.Background(), caller, token, state, ltiapp.LTI13BrowserProof{State: browserState})
}

func TestLTI13LaunchIsAccepted(t *testing.T) {
	lf := newLTI13Fixture(t)
	lf.login("s1", lf.reg)
	l, err := lf.launch(lf.sign(lf.claims("s1"), "k1"), "s1", "s1")
	if err != nil {
		t.Fatal(err)
	}
	if l.WorkspaceID != "school" || l.RegistrationID != lf.reg.ID || l.DeploymentID != "dep-1" || l.Email != "ada@school.edu" ||
		l.MessageType != ltidomain.MessageResourceLink || len(l.Custom) != 1 || l.Custom[0].Value != examConfig {
		t.Fatalf("launch %+v", l)
	}
	if len(lf.guard.failed) != 0 {
		t.Fatalf("an accepted launch counted failures: %q", lf.guard.failed)
	}
	if h := lf.health.of(lf.reg.ID); !h.LastLaunchAt.Equal(lf.clock.Now()) || len(h.Failures) != 0 {
		t.Fatalf("the registration's launch health after an accepted launch: %+v", h)
	}

	// A deep-linking launch names no exam: the teacher picks one.
	lf.login("s2", lf.reg)
	c := lf.claims("s2")
	delete(c, "https://purl.imsglobal.org/spec/lti/claim/custom")
	delete(c, "https://purl.imsglobal.org/spec/lti/claim/resource_link")
	c["https://purl.imsglobal.org/spec/lti/claim/message_type"] = ltidomain.MessageDeepLinking
	c["https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"] = map[string]any{
		"deep_link_return_url": platformIssuer + "/deep-link-return", "accept_types": []string{"ltiResourceLink"}, "data": "opaque",
	}
	l, err = lf.launch(lf.sign(c, "k1"), "s2", "s2")
	if err != nil || l.DeepLinking == nil || l.DeepLinking.Data != "opaque" || len(l.DeepLinking.ID) != 43 {
		t.Fatalf("deep-linking launch %+v: %v", l, err)
	}
}

// An accepted resource-link launch is remembered under a new launch id,
// with its course, roles and services, and read back by its workspace's
// server pair (or a manager's) only; a deep-linking launch is not; a
// launch that cannot be remembered is refused, Unavailable.
func TestLTI13LaunchIsRemembered(t *testing.T) {
	lf := newLTI13Fixture(t)
	lf.login("s1", lf.reg)
	c := lf.claims("s1")
	c["https://purl.imsglobal.org/spec/lti/claim/roles"] = []string{"http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"}
	c["https://purl.imsglobal.org/spec/lti/claim/context"] = map[string]string{"id": "course-9"}
	c["https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"] = map[string]any{
		"scope": []string{"https://purl.imsglobal.org/spec/lti-ags/scope/score"}, "lineitem": platformIssuer + "/lineitems/4?x=1",
	}
	c["https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"] = map[string]any{"context_memberships_url": platformIssuer + "/members"}
	l, err := lf.launch(lf.sign(c, "k1"), "s1", "s1")
	if err != nil || len(l.ID) != 43 {
		t.Fatalf("launch %+v: %v", l, err)
	}
	ctx := context.Background()
	r, err := lf.launches.Get(ctx, lf.self, "school", l.ID)
	if err != nil || r.ID != l.ID || r.WorkspaceID != "school" || r.RegistrationID != lf.reg.ID || r.DeploymentID != "dep-1" ||
		r.ContextID != "course-9" || r.ResourceLinkID != "rl-1" || r.Subject != "u-42" || r.Email != "ada@school.edu" ||
		fmt.Sprint(r.Roles) != "[http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor]" ||
		r.Services.LineItem != platformIssuer+"/lineitems/4?x=1" || r.Services.MembershipsURL != platformIssuer+"/members" ||
		r.ExamConfigID != examConfig || !r.LaunchedAt.Equal(lf.clock.Now()) {
		t.Fatalf("record %+v: %v", r, err)
	}
	if _, err := lf.launches.Get(ctx, lf.root, "school", l.ID); err != nil {
		t.Fatalf("the root workspace, which manages every workspace: %v", err)
	}
	_, stranger := lf.create(lf.root, app.CreateInput{ID: "stranger"})
	for _, c := range []struct {
		caller  domain.Caller
		id, lid string
	}{{stranger, "school", l.ID}, {stranger, "stranger", l.ID}, {lf.self, "school", "nope"}, {lf.self, "school", strings.Repeat("A", 43)}} {
		if _, err := lf.launches.Get(ctx, c.caller, c.id, c.lid); fault.KindOf(err) != fault.NotFound {
			t.Fatalf("%s's launch %q: %v, want not found", c.id, c.lid, err)
		}
	}

	lf.login("s2", lf.reg)
	dl := lf.claims("s2")
	delete(dl, "https://purl.imsglobal.org/spec/lti/claim/resource_link")
	dl["https://purl.imsglobal.org/spec/lti/claim/message_type"] = ltidomain.MessageDeepLinking
	dl["https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"] = map[string]any{
		"deep_link_return_url": platformIssuer + "/deep-link-return", "accept_types": []string{"ltiResourceLink"},
	}
	if l, err := lf.launch(lf.sign(dl, "k1"), "s2", "s2"); err != nil || l.ID != "" || lf.records.count() != 1 {
		t.Fatalf("deep-linking launch %+v, %v; %d records", l, err, lf.records.count())
	}

	lf.records.down = true
	lf.login("s3", lf.reg)
	if _, err := lf.launch(lf.sign(lf.claims("s3"), "k1"), "s3", "s3"); fault.KindOf(err) != fault.Unavailable || !strings.Contains(err.Error(), "recorded") {
		t.Fatalf("with the store down: %v, want Unavailable", err)
	}
}

// unsigned is claims as a token with alg none.
func unsigned(t testing.TB, claims map[string]any) string {
	t.Helper()
	payload, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"none","kid":"k1"}`)) + "." + enc(payload) + "."
}

func TestLTI13LaunchRefusals(t *testing.T) {
	type setup struct {
		lf    *lti13Fixture
		token string
	}
	for _, tc := range []struct {
		name    string
		prepare func(s *setup) (state, browserState string)
		kind    fault.Kind
		words   string
		counted string // the failure key counted; "" for none
	}{
		{"another browser's state", func(s *setup) (string, string) { return "s1", "s-other" }, fault.Unauthenticated, "not this browser's", "client-1"},
		{"no browser state", func(s *setup) (string, string) { return "s1", "" }, fault.Unauthenticated, "not this browser's", "client-1"},
		{"a state no login issued", func(s *setup) (string, string) { return "s9", "s9" }, fault.Unauthenticated, "unknown, already used or expired", "client-1"},
		{"another registration's token", func(s *setup) (string, string) {
			c := s.lf.claims("s1")
			c["aud"] = "client-2"
			s.token = s.lf.sign(c, "k1")
			return "s1", "s1"
		}, fault.Unauthenticated, "not those of the login", "client-2"},
		{"an unknown kid", func(s *setup) (string, string) {
			s.token = s.lf.sign(s.lf.claims("s1"), "k-rotated")
			return "s1", "s1"
		}, fault.Unauthenticated, "key not found", "client-1"},
		{"the platform's keys unreachable", func(s *setup) (string, string) { s.lf.keys.down = true; return "s1", "s1" },
			fault.Unavailable, "could not be fetched", ""},
		{"another key under the kid", func(s *setup) (string, string) {
			s.lf.keys.keys["k1"] = &otherSigner(s.lf.t).PublicKey
			return "s1", "s1"
		}, fault.Unauthenticated, "signature does not verify", "client-1"},
		{"expired", func(s *setup) (string, string) {
			s.lf.clock.Add(6*time.Minute + ltidomain.LTI13Leeway)
			return "s1", "s1"
		},
			fault.Unauthenticated, "expired", "client-1"},
		{"a foreign aud", func(s *setup) (string, string) {
			c := s.lf.claims("s1")
			c["aud"] = "another-tool"
			s.token = s.lf.sign(c, "k1")
			return "s1", "s1"
		}, fault.Unauthenticated, "match no registration", "another-tool"},
		{"a foreign azp", func(s *setup) (string, string) {
			c := s.lf.claims("s1")
			c["aud"], c["azp"] = []string{"client-1", "another-tool"}, "another-tool"
			s.token = s.lf.sign(c, "k1")
			return "s1", "s1"
		}, fault.Unauthenticated, "match no registration", "another-tool"},
		{"several aud, no azp", func(s *setup) (string, string) {
			c := s.lf.claims("s1")
			c["aud"] = []string{"client-1", "another-tool"}
			s.token = s.lf.sign(c, "k1")
			return "s1", "s1"
		}, fault.Unauthenticated, "not for this tool", "lti13"},
		{"alg none", func(s *setup) (string, string) { s.token = unsigned(s.lf.t, s.lf.claims("s1")); return "s1", "s1" },
			fault.Unauthenticated, "alg none", "lti13"},
		{"no exam configuration", func(s *setup) (string, string) {
			c := s.lf.claims("s1")
			delete(c, "https://purl.imsglobal.org/spec/lti/claim/custom")
			s.token = s.lf.sign(c, "k1")
			return "s1", "s1"
		}, fault.Invalid, "exam_config_id", ""},
		{"not a JWT", func(s *setup) (string, string) { s.token = "a.b"; return "s1", "s1" }, fault.Invalid, "well-formed", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lf := newLTI13Fixture(t)
			lf.login("s1", lf.reg)
			s := &setup{lf: lf, token: lf.sign(lf.claims("s1"), "k1")}
			state, browser := tc.prepare(s)
			_, err := lf.launch(s.token, state, browser)
			if fault.KindOf(err) != tc.kind || !strings.Contains(err.Error(), tc.words) {
				t.Fatalf("%v (%s), want %s saying %q", err, fault.KindOf(err), tc.kind, tc.words)
			}
			switch {
			case tc.counted == "" && len(lf.guard.failed) != 0:
				t.Fatalf("counted %q, want no failure", lf.guard.failed)
			case tc.counted != "" && (len(lf.guard.failed) != 1 || !strings.HasSuffix(lf.guard.failed[0], tc.counted)):
				t.Fatalf("counted %q, want one failure of %s", lf.guard.failed, tc.counted)
			}
			// The login's registration is told, in the words of the
			// refusal page, with the request's id; a state that names no
			// login is nobody's.
			failures := lf.health.of(lf.reg.ID).Failures
			shown, _ := fault.As(err)
			nobodys := tc.name == "a state no login issued"
			switch {
			case len(lf.health.of(lf.other.ID).Failures) != 0:
				t.Fatal("recorded on another registration")
			case nobodys && len(failures) != 0:
				t.Fatalf("recorded %+v, want nothing", failures)
			case !nobodys && (len(failures) != 1 || failures[0].Reason != shown.Message || failures[0].RequestID != "req-launch" ||
				!failures[0].At.Equal(lf.clock.Now())):
				t.Fatalf("recorded %+v, want %q in req-launch", failures, shown.Message)
			}
		})
	}
}

func otherSigner(t testing.TB) *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// A launch opens once: the same form posted again (a reload, a replay)
// finds its login taken.
func TestLTI13LaunchIsSingleUse(t *testing.T) {
	lf := newLTI13Fixture(t)
	lf.login("s1", lf.reg)
	token := lf.sign(lf.claims("s1"), "k1")
	if _, err := lf.launch(token, "s1", "s1"); err != nil {
		t.Fatal(err)
	}
	_, err := lf.launch(token, "s1", "s1")
	if fault.KindOf(err) != fault.Unauthenticated || !strings.Contains(err.Error(), "already used") {
		t.Fatalf("replayed: %v", err)
	}
	// A refused launch uses its login up as well.
	lf.login("s2", lf.reg)
	c := lf.claims("s2")
	c["nonce"] = "another login's nonce"
	if _, err := lf.launch(lf.sign(c, "k1"), "s2", "s2"); !errors.Is(err, ltidomain.ErrLTI13Nonce) {
		t.Fatalf("wrong nonce: %v", err)
	}
	if _, err := lf.launch(lf.sign(lf.claims("s2"), "k1"), "s2", "s2"); fault.KindOf(err) != fault.Unauthenticated {
		t.Fatalf("after a refused launch: %v", err)
	}
}

// A login with platform storage is proven by the state and nonce its
// launch page read back from there, and by nothing else; a login with a
// cookie by its cookie only. A wrong proof leaves the login usable.
func TestLTI13LaunchProvenThroughPlatformStorage(t *testing.T) {
	lf := newLTI13Fixture(t)
	store := func(state string) {
		_ = lf.logins.Put(context.Background(), state, ltiapp.LTI13Login{
			Nonce: "nonce-" + state, WorkspaceID: "school", RegistrationID: lf.reg.ID, CreatedAt: lf.clock.Now(), StorageTarget: "_parent",
		}, ltiapp.LTI13StateTTL)
	}
	verify := func(state string, proof ltiapp.LTI13BrowserProof) error {
		_, err := lf.launches13.Verify(context.Background(), lf.root, lf.sign(lf.claims(state), "k1"), state, proof)
		return err
	}
	store("s1")
	if err := verify("s1", ltiapp.LTI13BrowserProof{State: "s1", Nonce: "nonce-s1", FromStorage: true}); err != nil {
		t.Fatalf("read back from storage: %v", err)
	}
	if err := verify("s1", ltiapp.LTI13BrowserProof{State: "s1", Nonce: "nonce-s1", FromStorage: true}); fault.KindOf(err) != fault.Unauthenticated {
		t.Fatalf("replayed: %v", err)
	}
	cases := []struct {
		name    string
		storage bool // the login's
		proof   ltiapp.LTI13BrowserProof
		want    string
	}{
		{"a cookie for a storage login", true, ltiapp.LTI13BrowserProof{State: "s"}, "did not read it back"},
		{"another nonce from storage", true, ltiapp.LTI13BrowserProof{State: "s", Nonce: "nonce-other", FromStorage: true}, "nonce read back"},
		{"no nonce from storage", true, ltiapp.LTI13BrowserProof{State: "s", FromStorage: true}, "nonce read back"},
		{"another state from storage", true, ltiapp.LTI13BrowserProof{State: "t", Nonce: "nonce-s", FromStorage: true}, "not this browser's"},
		{"storage for a cookie login", false, ltiapp.LTI13BrowserProof{State: "s", Nonce: "nonce-s", FromStorage: true}, "did not keep it there"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.storage {
				store("s")
			} else {
				lf.login("s", lf.reg)
			}
			err := verify("s", c.proof)
			if fault.KindOf(err) != fault.Unauthenticated || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want a refusal with %q", err, c.want)
			}
			if _, left, _ := lf.logins.Take(context.Background(), "s"); !left {
				t.Fatal("a wrong proof used the login up")
			}
		})
	}
}

// Whoever learns a login's state (it travels in URLs to the platform) and
// posts it with a proof of their own is refused, counted as a failed
// launch, and leaves the login to the browser it belongs to, whose launch
// then opens.
func TestLTI13LaunchStolenStateLeavesTheLogin(t *testing.T) {
	lf := newLTI13Fixture(t)
	storage := func(state string) {
		_ = lf.logins.Put(context.Background(), state, ltiapp.LTI13Login{
			Nonce: "nonce-" + state, WorkspaceID: "school", RegistrationID: lf.reg.ID, CreatedAt: lf.clock.Now(), StorageTarget: "_parent",
		}, ltiapp.LTI13StateTTL)
	}
	cases := []struct {
		name   string
		login  func(state string)
		thief  ltiapp.LTI13BrowserProof
		victim ltiapp.LTI13BrowserProof
		want   string
	}{
		{"storage fields for a cookie login", func(s string) { lf.login(s, lf.reg) },
			ltiapp.LTI13BrowserProof{State: "s1", Nonce: "a guess", FromStorage: true}, ltiapp.LTI13BrowserProof{State: "s1"}, "did not keep it there"},
		{"a guessed nonce for a storage login", storage,
			ltiapp.LTI13BrowserProof{State: "s1", Nonce: "a guess", FromStorage: true},
			ltiapp.LTI13BrowserProof{State: "s1", Nonce: "nonce-s1", FromStorage: true}, "nonce read back"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lf.guard.failed = nil
			c.login("s1")
			// The thief has no token the platform signed: one with alg none,
			// whose failures count under "lti13".
			forged := unsigned(t, lf.claims("s1"))
			_, err := lf.launches13.Verify(context.Background(), lf.root, forged, "s1", c.thief)
			if fault.KindOf(err) != fault.Unauthenticated || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("the thief's launch: %v, want a refusal with %q", err, c.want)
			}
			if len(lf.guard.failed) != 1 || lf.guard.failed[0] != "lti13" {
				t.Fatalf("failures counted %q, want one of lti13", lf.guard.failed)
			}
			token := lf.sign(lf.claims("s1"), "k1")
			if _, err := lf.launches13.Verify(context.Background(), lf.root, token, "s1", c.victim); err != nil {
				t.Fatalf("the browser's own launch after the thief's: %v", err)
			}
			if _, err := lf.launches13.Verify(context.Background(), lf.root, token, "s1", c.victim); !strings.Contains(fmt.Sprint(err), "already used") {
				t.Fatalf("the launch again: %v, want its login taken", err)
			}
		})
	}
}

func TestLTI13LaunchPolicy(t *testing.T) {
	lf := newLTI13Fixture(t)
	lf.login("s1", lf.reg)
	token := lf.sign(lf.claims("s1"), "k1")
	_, self := lf.create(lf.root, app.CreateInput{ID: "vendor"})
	if _, err := lf.launches13.Verify(context.Background(), self, token, "s1", ltiapp.LTI13BrowserProof{State: "s1"}); fault.KindOf(err) != fault.PermissionDenied {
		t.Fatalf("a workspace's own key pair: %v", err)
	}
	lf.guard.refuse = fault.New(fault.Throttled, "too many failed authentications")
	if _, err := lf.launch(token, "s1", "s1"); fault.KindOf(err) != fault.Throttled {
		t.Fatalf("past the failure limit: %v", err)
	}
	lf.guard.refuse = nil
	if _, err := lf.launch(token, "s1", "s1"); err != nil {
		t.Fatalf("the refusals before took the login: %v", err)
	}
}

// The tool's keys: none before the first rotation, one after it, served as
// a JWKS document.
func TestRotateToolKeysPublishes(t *testing.T) {
	lf := newLTI13Fixture(t)
	ctx := context.Background()
	jwks, err := lf.toolKeys.JWKS(ctx)
	if err != nil || string(jwks) != `{"keys":[]}` {
		t.Fatalf("before a rotation: %s, %v", jwks, err)
	}
	if err := lf.toolKeys.Rotate(ctx); err != nil {
		t.Fatal(err)
	}
	lf.clock.Add(2 * time.Minute) // past the reread interval
	if jwks, err = lf.toolKeys.JWKS(ctx); err != nil {
		t.Fatal(err)
	}
	var set struct {
		Keys []struct {
			KID string `json:"kid"`
		} `json:"keys"`
	}
	if err := json.Unmarshal(jwks, &set); err != nil || len(set.Keys) != 1 {
		t.Fatalf("after a rotation: %s, %v", jwks, err)
	}
	if _, err := jose.ParseKeySet(jwks); err != nil {
		t.Fatal(err)
	}
}

// A launch carrying an lti1p1 claim signed with the workspace's LTI 1.1
// secret is the user its 1.1 launches were (when the platform withholds
// the e-mail, the address derived from the consumer key and the 1.1
// user_id); one signed with another secret, or naming another consumer
// key, is refused.
func TestLTI13LaunchKeepsTheLTI11Identity(t *testing.T) {
	lf := newLTI13Fixture(t)
	for i, c := range []struct {
		consumerKey, secret string
		wantErr             bool
	}{
		{lf.lti.ConsumerKey, lf.lti.SharedSecret, false},
		{lf.lti.ConsumerKey, "another secret", true},
		{"another-consumer-key", lf.lti.SharedSecret, true},
	} {
		state := fmt.Sprintf("m%d", i)
		lf.login(state, lf.reg)
		claims := lf.claims(state)
		delete(claims, "email")
		exp := strconv.FormatInt(claims["exp"].(int64), 10)
		claims["https://purl.imsglobal.org/spec/lti/claim/lti1p1"] = map[string]string{
			"user_id": "legacy-7", "oauth_consumer_key": c.consumerKey,
			"oauth_consumer_key_sign": ltidomain.LTI1p1Sign(c.secret, c.consumerKey, "dep-1", platformIssuer, "client-1", exp, "nonce-"+state),
		}
		l, err := lf.launch(lf.sign(claims, "k1"), state, state)
		switch {
		case c.wantErr && !errors.Is(err, ltidomain.ErrLTI1p1Sign):
			t.Fatalf("case %d: err = %v, want ErrLTI1p1Sign", i, err)
		case !c.wantErr && (err != nil || l.Email != ltidomain.DerivedEmail(lf.lti.ConsumerKey, "legacy-7")):
			t.Fatalf("case %d: email %q, %v; want the LTI 1.1 identity %q", i, l.Email, err, ltidomain.DerivedEmail(lf.lti.ConsumerKey, "legacy-7"))
		}
	}
}
