package lti

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/liveproctor/workspaces/gateway/internal/httperr"
	"github.com/liveproctor/workspaces/pkg/fault"
	authv1 "github.com/liveproctor/workspaces/pkg/gen/auth/v1"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/pkg/grpcfault"
)

const exam13 = "0f8fad5b-d9cb-469f-a165-70867728950e"

// lti13Sessions answers every launch with session, or err, and keeps the
// last request.
type lti13Sessions struct {
	session *authv1.LtiSession
	err     error
	got     *authv1.CreateLti13SessionRequest
}

func (s *lti13Sessions) CreateLti13Session(_ context.Context, in *authv1.CreateLti13SessionRequest, _ ...grpc.CallOption) (*authv1.LtiSession, error) {
	s.got = in
	return s.session, s.err
}

func noMetadata13(context.Context, *http.Request) metadata.MD { return nil }

func quiet13() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// post sends a launch form with the cookies given and returns the answer.
func post13(s *lti13Sessions, contentType, body string, cookies ...*http.Cookie) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, LTI13LaunchPath, strings.NewReader(body))
	r.Header.Set("Content-Type", contentType)
	for _, c := range cookies {
		r.AddCookie(c)
	}
	w := httptest.NewRecorder()
	LTI13Launch(s, noMetadata13, 32<<10, quiet13())(w, r, nil)
	return w
}

const formType13 = "application/x-www-form-urlencoded"

func TestStateCookieName(t *testing.T) {
	// base64url(SHA-256("abc")) starts ungWv48Bz-pBQUDe.
	if got := StateCookieName("abc"); got != "lti1p3_state_ungWv48Bz-pBQUDe" {
		t.Fatalf("StateCookieName(abc) = %s", got)
	}
	c := StateCookie("abc", 3600)
	if c.Value != "abc" || c.Path != LTI13LaunchPath || !c.Secure || !c.HttpOnly || c.SameSite != http.SameSiteNoneMode || !c.Partitioned {
		t.Fatalf("cookie %+v", c)
	}
}

// A resource-link launch sends the state the browser kept with the posted
// one, answers the LTI 1.1 page with the session's exam, and removes the
// cookie.
func TestLTI13LaunchOpensTheComponent(t *testing.T) {
	s := &lti13Sessions{session: &authv1.LtiSession{
		Auth: "dG9rZW4=", Email: "ada@example.com", MessageType: "LtiResourceLinkRequest",
		CustomParameters: []*authv1.LtiParameter{{Name: "custom_exam_config_id", Value: exam13}},
	}}
	w := post13(s, formType13, "id_token=a.b.c&state=abc&state=abc&other=1", &http.Cookie{Name: StateCookieName("abc"), Value: "abc"},
		&http.Cookie{Name: StateCookieName("other"), Value: "other"})
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `data-exam-config-id="`+exam13+`"`) ||
		!strings.Contains(w.Body.String(), `data-auth="dG9rZW4="`) {
		t.Fatalf("%d:\n%s", w.Code, w.Body)
	}
	if s.got.GetIdToken() != "a.b.c" || s.got.GetState() != "abc" || s.got.GetBrowserState() != "abc" {
		t.Fatalf("asked %v", s.got)
	}
	set := w.Result().Cookies()
	if len(set) != 1 || set[0].Name != StateCookieName("abc") || set[0].MaxAge >= 0 || !set[0].Partitioned {
		t.Fatalf("Set-Cookie %v: want the state's cookie removed", w.Header().Values("Set-Cookie"))
	}
	if w.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("headers %v", w.Header())
	}

	// Without the cookie the service is asked with no browser state (and
	// refuses).
	s.err = grpcfault.Status(fault.New(fault.Unauthenticated, "the launch's state is not this browser's (open the link again from the LMS)"))
	w = post13(s, formType13, "id_token=a.b.c&state=abc")
	if w.Code != http.StatusUnauthorized || s.got.GetBrowserState() != "" || !strings.Contains(w.Body.String(), "not this browser&#39;s") {
		t.Fatalf("%d, asked %v:\n%s", w.Code, s.got, w.Body)
	}
	if len(w.Result().Cookies()) != 0 {
		t.Fatalf("a refused launch set %v", w.Header().Values("Set-Cookie"))
	}
}

// A deep-linking launch answers a page whose form names the exam in
// exam_config_id and carries the request's id, posting to DeepLinkingPath.
func TestLTI13DeepLinkingPage(t *testing.T) {
	s := &lti13Sessions{session: &authv1.LtiSession{
		Auth: "dG9rZW4=", Email: "ada@example.com", MessageType: "LtiDeepLinkingRequest", DeepLinkId: "dl-id-1",
	}}
	w := post13(s, formType13, "id_token=a.b.c&state=abc", &http.Cookie{Name: StateCookieName("abc"), Value: "abc"})
	body := w.Body.String()
	if w.Code != http.StatusOK || !strings.Contains(body, `name="exam_config_id"`) || !strings.Contains(body, `action="`+DeepLinkingPath+`"`) ||
		!strings.Contains(body, `<input type="hidden" name="deep_link_id" value="dl-id-1">`) ||
		strings.Contains(body, "dG9rZW4=") || !strings.Contains(w.Header().Get("Content-Security-Policy"), "form-action 'self'") {
		t.Fatalf("%d %v:\n%s", w.Code, w.Header(), body)
	}
}

func TestLTI13LaunchRefusals(t *testing.T) {
	s := &lti13Sessions{session: &authv1.LtiSession{}}
	for _, tc := range []struct {
		name, contentType, body string
		status                  int
		words                   string
	}{
		{"JSON", "application/json", `{"id_token":"a.b.c"}`, http.StatusUnsupportedMediaType, "form post"},
		{"bad escapes", formType13, "id_token=%zz&state=abc", http.StatusBadRequest, "percent-encoded"},
		{"two states", formType13, "id_token=a.b.c&state=abc&state=abd", http.StatusBadRequest, "two different values of state"},
		{"not UTF-8", formType13, "id_token=%ff&state=abc", http.StatusBadRequest, "id_token is not valid UTF-8"},
		{"the platform's error", formType13, "error=login_required&error_description=Sign+in+first&state=abc",
			http.StatusBadRequest, "login_required: Sign in first"},
	} {
		s.got = nil
		w := post13(s, tc.contentType, tc.body)
		if w.Code != tc.status || !strings.Contains(w.Body.String(), tc.words) || s.got != nil {
			t.Errorf("%s: %d, asked %v:\n%s", tc.name, w.Code, s.got, w.Body)
		}
	}
}

type fakeToolKeys struct {
	jwks string
	err  error
}

func (k fakeToolKeys) GetLtiToolKeys(context.Context, *workspacev1.GetLtiToolKeysRequest, ...grpc.CallOption) (*workspacev1.LtiToolKeys, error) {
	return &workspacev1.LtiToolKeys{Jwks: k.jwks}, k.err
}

func TestServeJWKS(t *testing.T) {
	errs := httperr.NewHandler(quiet13(), 1<<20, func(string) (string, bool) { return "", false })
	const jwks = `{"keys":[{"kty":"RSA","use":"sig","alg":"RS256","kid":"k1","n":"AQAB","e":"AQAB"}]}`
	w := httptest.NewRecorder()
	ServeJWKS(fakeToolKeys{jwks: jwks}, errs, noMetadata13)(w, httptest.NewRequest(http.MethodGet, JWKSPath, nil), nil)
	if w.Code != http.StatusOK || w.Body.String() != jwks || w.Header().Get("Content-Type") != "application/json" ||
		w.Header().Get("Cache-Control") != "public, max-age=3600" {
		t.Fatalf("%d %v:\n%s", w.Code, w.Header(), w.Body)
	}
	w = httptest.NewRecorder()
	down := grpcfault.Status(fault.New(fault.Unavailable, "down"))
	ServeJWKS(fakeToolKeys{err: down}, errs, noMetadata13)(w, httptest.NewRequest(http.MethodGet, JWKSPath, nil), nil)
	if w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Header().Get("Content-Type"), "json") {
		t.Fatalf("service down: %d %v:\n%s", w.Code, w.Header(), w.Body)
	}
}
