package app_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/oauth1"
	"github.com/liveproctor/workspaces/pkg/testenv"
	"github.com/liveproctor/workspaces/services/workspace/internal/app"
	"github.com/liveproctor/workspaces/services/workspace/internal/app/apptest"
	"github.com/liveproctor/workspaces/services/workspace/internal/lti/adapters/ltistate"
	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

const launchURL = "https://lti.test/lti/v1/launch"

// recordingGuard is ltiapp.FailureLimits that remembers the failures
// counted and refuses once told to.
type recordingGuard struct {
	failed []string
	refuse error
}

func (g *recordingGuard) CheckFailures(context.Context, string) error { return g.refuse }
func (g *recordingGuard) Failed(_ context.Context, key string)        { g.failed = append(g.failed, key) }

// downNonces is a nonce store that cannot be reached.
type downNonces struct{}

func (downNonces) Use(context.Context, string, string, time.Duration) (bool, error) {
	return false, fault.New(fault.Unavailable, "nonce store down")
}

type launchFixture struct {
	*fixture
	now    time.Time
	guard  *recordingGuard
	lti    app.LTIKeys
	server app.ServerKeys
	seq    int
}

func newLaunchFixture(t *testing.T, nonces ltiapp.NonceStore) *launchFixture {
	lf := &launchFixture{now: time.Unix(1_800_000_000, 0), guard: &recordingGuard{}}
	if nonces == nil {
		nonces = ltistate.NewMemoryNonces(1000, func() time.Time { return lf.now })
	}
	lf.fixture = newFixture(t, deps{now: func() time.Time { return lf.now }, nonces: nonces, limits: lf.guard})
	res, _ := lf.create(lf.root, app.CreateInput{ID: "school"})
	lf.lti, lf.server = res.LTI, res.Server
	return lf
}

// params returns a basic launch of key, dated now, with a fresh nonce,
// changed by edit (before signing).
func (lf *launchFixture) params(key string, edit func(map[string]string)) map[string]string {
	lf.seq++
	p := map[string]string{
		"oauth_consumer_key":               key,
		"oauth_signature_method":           "HMAC-SHA1",
		"oauth_timestamp":                  strconv.FormatInt(lf.now.Unix(), 10),
		"oauth_nonce":                      fmt.Sprintf("nonce-%d", lf.seq),
		"oauth_version":                    "1.0",
		"lti_message_type":                 "basic-lti-launch-request",
		"lti_version":                      "LTI-1p0",
		"resource_link_id":                 "link-1",
		"user_id":                          "u-42",
		"lis_person_contact_email_primary": "ada@school.edu",
		"launch_presentation_return_url":   "https://lms.example/return",
		"custom_exam_config_id":            "0f8fad5b-d9cb-469f-a165-70867728950e",
	}
	if edit != nil {
		edit(p)
	}
	return p
}

// sign signs p with secret as an LMS would, and returns the request.
func sign(t *testing.T, p map[string]string, secret string) ltiapp.LaunchRequest {
	t.Helper()
	var params []oauth1.Param
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range p {
			if !yield(k) {
				return
			}
		}
	}) {
		params = append(params, oauth1.Param{Name: name, Value: p[name]})
	}
	base, err := oauth1.BaseString("POST", launchURL, params)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := oauth1.Sign(p["oauth_signature_method"], base, secret, "")
	if err != nil {
		sig = "not signed"
	}
	req := ltiapp.LaunchRequest{Method: "POST"}
	for _, q := range append(params, oauth1.Param{Name: "oauth_signature", Value: sig}) {
		req.Params = append(req.Params, ltidomain.LaunchParam{Name: q.Name, Value: q.Value})
	}
	return req
}

func (lf *launchFixture) verify(req ltiapp.LaunchRequest) (ltidomain.Launch, error) {
	return lf.launches11.Verify(context.Background(), lf.root, req)
}

func TestVerifyLTILaunchAccepts(t *testing.T) {
	lf := newLaunchFixture(t, nil)
	l, err := lf.verify(sign(t, lf.params(lf.lti.ConsumerKey, nil), lf.lti.SharedSecret))
	if err != nil {
		t.Fatal(err)
	}
	want := ltidomain.Launch{WorkspaceID: "school", ConsumerKey: lf.lti.ConsumerKey, Email: "ada@school.edu", UserID: "u-42",
		ResourceLinkID: "link-1", ReturnURL: "https://lms.example/return",
		Custom: []ltidomain.LaunchParam{{Name: "custom_exam_config_id", Value: "0f8fad5b-d9cb-469f-a165-70867728950e"}}}
	if fmt.Sprint(l) != fmt.Sprint(want) {
		t.Fatalf("launch = %+v, want %+v", l, want)
	}

	// HMAC-SHA256, no oauth_version, a timestamp 299 s either way.
	for _, skew := range []time.Duration{-299 * time.Second, 299 * time.Second} {
		p := lf.params(lf.lti.ConsumerKey, func(p map[string]string) {
			p["oauth_signature_method"] = "HMAC-SHA256"
			delete(p, "oauth_version")
			p["oauth_timestamp"] = strconv.FormatInt(lf.now.Add(skew).Unix(), 10)
		})
		if _, err := lf.verify(sign(t, p, lf.lti.SharedSecret)); err != nil {
			t.Fatalf("skew %v: %v", skew, err)
		}
	}
	if len(lf.guard.failed) != 0 {
		t.Fatalf("failures counted for good launches: %q", lf.guard.failed)
	}
}

// An accepted launch is a use of the LTI pair, which authenticates no API
// call: its lastUsedAt tells whether an LMS still launches over 1.1.
func TestVerifyLTILaunchIsAUseOfThePair(t *testing.T) {
	lf := newLaunchFixture(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); lf.app.RunBackground(ctx, time.Hour) }()
	t.Cleanup(func() { cancel(); <-done })

	if _, err := lf.verify(sign(t, lf.params(lf.lti.ConsumerKey, nil), lf.lti.SharedSecret)); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 5*time.Second, func() error {
		keys, err := lf.app.ListWorkspaceKeys(context.Background(), lf.root, "school")
		if err != nil {
			return err
		}
		for _, k := range keys {
			if k.AppKey == lf.lti.ConsumerKey && !k.LastUsedAt.IsZero() {
				return nil
			}
		}
		return errors.New("the LTI pair's use is not recorded yet")
	}, "the launch is recorded as the LTI pair's use")
}

// Without a usable e-mail address the user is derived from user_id and the
// consumer key, as the README documents.
func TestVerifyLTILaunchDerivesTheUser(t *testing.T) {
	lf := newLaunchFixture(t, nil)
	sum := sha256.Sum256([]byte(lf.lti.ConsumerKey + ":u-42"))
	derived := hex.EncodeToString(sum[:])[:32] + "@lti.invalid"
	for name, email := range map[string]string{"absent": "", "malformed": "Ada <ada@school.edu>", "not an address": "ada"} {
		l, err := lf.verify(sign(t, lf.params(lf.lti.ConsumerKey, func(p map[string]string) {
			if email == "" {
				delete(p, "lis_person_contact_email_primary")
			} else {
				p["lis_person_contact_email_primary"] = email
			}
		}), lf.lti.SharedSecret))
		if err != nil || l.Email != derived || !l.EmailDerived || l.UserID != "u-42" {
			t.Fatalf("%s e-mail: %+v, %v; want %s, derived", name, l, err, derived)
		}
	}
	for name, email := range map[string]string{"absent": "", "malformed": "ada"} {
		_, err := lf.verify(sign(t, lf.params(lf.lti.ConsumerKey, func(p map[string]string) {
			delete(p, "user_id")
			if email == "" {
				delete(p, "lis_person_contact_email_primary")
			} else {
				p["lis_person_contact_email_primary"] = email
			}
		}), lf.lti.SharedSecret))
		apptest.WantKind(t, err, fault.Invalid)
		if name == "absent" && !strings.Contains(err.Error(), "user_id") {
			t.Fatalf("no user at all: %v, want it to name user_id", err)
		}
	}
}

func TestVerifyLTILaunchRefuses(t *testing.T) {
	lf := newLaunchFixture(t, nil)
	ctx := context.Background()
	_, err := lf.app.DeleteWorkspace(ctx, lf.root, "school", app.Precondition{})
	if err != nil {
		t.Fatal(err)
	}
	deleted := lf.lti
	res, _ := lf.create(lf.root, app.CreateInput{ID: "school2"})
	lf.lti, lf.server = res.LTI, res.Server
	key, secret := lf.lti.ConsumerKey, lf.lti.SharedSecret

	set := func(name, value string) func(map[string]string) {
		return func(p map[string]string) { p[name] = value }
	}
	del := func(name string) func(map[string]string) {
		return func(p map[string]string) { delete(p, name) }
	}
	for _, tc := range []struct {
		name    string
		req     func() ltiapp.LaunchRequest
		want    error // a sentinel, or nil to check only the kind
		kind    fault.Kind
		counted bool // a failed authentication
	}{
		{"tampered", func() ltiapp.LaunchRequest {
			r := sign(t, lf.params(key, nil), secret)
			for i := range r.Params {
				if r.Params[i].Name == "resource_link_id" {
					r.Params[i].Value = "link-2"
				}
			}
			return r
		}, ltidomain.ErrLaunchBadSignature, fault.Unauthenticated, true},
		{"wrong secret", func() ltiapp.LaunchRequest { return sign(t, lf.params(key, nil), secret+"x") }, ltidomain.ErrLaunchBadSignature, fault.Unauthenticated, true},
		{"the server pair's key", func() ltiapp.LaunchRequest {
			return sign(t, lf.params(lf.server.ConsumerKey, nil), lf.server.SharedSecret)
		}, ltidomain.ErrLaunchNotLTIKey, fault.Unauthenticated, true},
		{"unknown key", func() ltiapp.LaunchRequest { return sign(t, lf.params("no-such-key", nil), secret) }, ltidomain.ErrLaunchUnknownKey, fault.Unauthenticated, true},
		{"deleted workspace", func() ltiapp.LaunchRequest {
			return sign(t, lf.params(deleted.ConsumerKey, nil), deleted.SharedSecret)
		}, ltidomain.ErrLaunchWorkspaceDeleted, fault.Unauthenticated, false},
		{"10 minutes old", func() ltiapp.LaunchRequest {
			return sign(t, lf.params(key, set("oauth_timestamp", strconv.FormatInt(lf.now.Add(-10*time.Minute).Unix(), 10))), secret)
		}, ltidomain.ErrLaunchTooOld, fault.Unauthenticated, false},
		{"301 s ahead", func() ltiapp.LaunchRequest {
			return sign(t, lf.params(key, set("oauth_timestamp", strconv.FormatInt(lf.now.Add(301*time.Second).Unix(), 10))), secret)
		}, ltidomain.ErrLaunchInFuture, fault.Unauthenticated, false},
		{"missing resource_link_id", func() ltiapp.LaunchRequest { return sign(t, lf.params(key, del("resource_link_id")), secret) }, nil, fault.Invalid, false},
		{"other message type", func() ltiapp.LaunchRequest {
			return sign(t, lf.params(key, set("lti_message_type", "ContentItemSelectionRequest")), secret)
		}, nil, fault.Invalid, false},
		{"LTI 2", func() ltiapp.LaunchRequest { return sign(t, lf.params(key, set("lti_version", "LTI-2p0")), secret) }, nil, fault.Invalid, false},
		{"oauth_version 2.0", func() ltiapp.LaunchRequest { return sign(t, lf.params(key, set("oauth_version", "2.0")), secret) }, nil, fault.Invalid, false},
		{"PLAINTEXT", func() ltiapp.LaunchRequest {
			return sign(t, lf.params(key, set("oauth_signature_method", "PLAINTEXT")), secret)
		}, nil, fault.Invalid, false},
		{"no nonce", func() ltiapp.LaunchRequest { return sign(t, lf.params(key, del("oauth_nonce")), secret) }, nil, fault.Invalid, false},
		{"timestamp not a number", func() ltiapp.LaunchRequest { return sign(t, lf.params(key, set("oauth_timestamp", "1e9")), secret) }, nil, fault.Invalid, false},
		{"GET", func() ltiapp.LaunchRequest {
			r := sign(t, lf.params(key, nil), secret)
			r.Method = "GET"
			return r
		}, nil, fault.Invalid, false},
		{"two nonces", func() ltiapp.LaunchRequest {
			r := sign(t, lf.params(key, nil), secret)
			r.Params = append(r.Params, ltidomain.LaunchParam{Name: "oauth_nonce", Value: "other"})
			return r
		}, nil, fault.Invalid, false},
		{"too many parameters", func() ltiapp.LaunchRequest {
			return sign(t, lf.params(key, func(p map[string]string) {
				for i := range ltidomain.LaunchMaxParams {
					p[fmt.Sprintf("custom_%d", i)] = "x"
				}
			}), secret)
		}, ltidomain.ErrLaunchTooLarge, fault.Invalid, false},
		{"a value too long", func() ltiapp.LaunchRequest {
			return sign(t, lf.params(key, set("custom_x", strings.Repeat("x", ltidomain.LaunchMaxValueBytes+1))), secret)
		}, ltidomain.ErrLaunchTooLarge, fault.Invalid, false},
		{"no exam configuration", func() ltiapp.LaunchRequest {
			return sign(t, lf.params(key, del("custom_exam_config_id")), secret)
		}, ltidomain.ErrLaunchNoExamConfig, fault.Invalid, false},
		{"exam configuration not a UUID", func() ltiapp.LaunchRequest {
			return sign(t, lf.params(key, set("custom_exam_config_id", "exam-1")), secret)
		}, ltidomain.ErrLaunchExamConfigNotID, fault.Invalid, false},
		{"unknown key and no exam configuration", func() ltiapp.LaunchRequest {
			return sign(t, lf.params("no-such-key", del("custom_exam_config_id")), secret)
		}, ltidomain.ErrLaunchNoExamConfig, fault.Invalid, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lf.guard.failed = nil
			_, err := lf.verify(tc.req())
			apptest.WantKind(t, err, tc.kind)
			if tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("error = %v, want %v", err, tc.want)
			}
			if msg := err.Error(); strings.Contains(msg, secret) || strings.Contains(msg, deleted.SharedSecret) || strings.Contains(msg, lf.server.SharedSecret) {
				t.Fatalf("the message shows a secret: %s", msg)
			}
			if counted := len(lf.guard.failed) == 1; counted != tc.counted {
				t.Fatalf("failures counted: %q; want one: %v", lf.guard.failed, tc.counted)
			}
		})
	}
}

func TestVerifyLTILaunchNonceIsSingleUse(t *testing.T) {
	lf := newLaunchFixture(t, nil)
	key, secret := lf.lti.ConsumerKey, lf.lti.SharedSecret
	p := lf.params(key, nil)
	// A launch refused before its nonce is checked does not use it up.
	if _, err := lf.verify(sign(t, p, secret+"x")); !errors.Is(err, ltidomain.ErrLaunchBadSignature) {
		t.Fatalf("wrong secret: %v", err)
	}
	// Nor does one that opens no exam.
	noExam := maps.Clone(p)
	delete(noExam, "custom_exam_config_id")
	if _, err := lf.verify(sign(t, noExam, secret)); !errors.Is(err, ltidomain.ErrLaunchNoExamConfig) {
		t.Fatalf("no exam configuration: %v", err)
	}
	req := sign(t, p, secret)
	if _, err := lf.verify(req); err != nil {
		t.Fatalf("first use: %v", err)
	}
	_, err := lf.verify(req)
	if !errors.Is(err, ltidomain.ErrLaunchReplayed) || !strings.Contains(err.Error(), "already used") {
		t.Fatalf("replay: %v, want ErrLaunchReplayed", err)
	}
	// The same nonce from another LMS registration is its own.
	res, _ := lf.create(lf.root, app.CreateInput{ID: "other-school"})
	other := lf.params(res.LTI.ConsumerKey, func(q map[string]string) { q["oauth_nonce"] = p["oauth_nonce"] })
	if _, err := lf.verify(sign(t, other, res.LTI.SharedSecret)); err != nil {
		t.Fatalf("same nonce, other key: %v", err)
	}
}

func TestVerifyLTILaunchGuards(t *testing.T) {
	ctx := context.Background()

	lf := newLaunchFixture(t, nil)
	_, school := lf.create(lf.root, app.CreateInput{ID: "not-root"})
	req := sign(t, lf.params(lf.lti.ConsumerKey, nil), lf.lti.SharedSecret)
	_, err := lf.launches11.Verify(ctx, school, req)
	apptest.WantKind(t, err, fault.PermissionDenied)

	noExam := sign(t, lf.params(lf.lti.ConsumerKey, func(p map[string]string) { delete(p, "custom_exam_config_id") }), lf.lti.SharedSecret)
	_, err = lf.launches11.Verify(ctx, school, noExam)
	apptest.WantKind(t, err, fault.PermissionDenied)

	// The exam configuration is the teacher's to fix: it is answered even
	// past the failure limit or without a nonce store.
	lf.guard.refuse = fault.New(fault.Throttled, "too many failed authentications from your address")
	_, err = lf.verify(req)
	apptest.WantKind(t, err, fault.Throttled)
	if _, err = lf.verify(noExam); !errors.Is(err, ltidomain.ErrLaunchNoExamConfig) {
		t.Fatalf("no exam configuration past the failure limit: %v", err)
	}
	lf.guard.refuse = nil

	down := newLaunchFixture(t, downNonces{})
	_, err = down.verify(sign(t, down.params(down.lti.ConsumerKey, nil), down.lti.SharedSecret))
	apptest.WantKind(t, err, fault.Unavailable)
}
