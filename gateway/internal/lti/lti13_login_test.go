package lti

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/liveproctor/workspaces/pkg/fault"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/pkg/grpcfault"
)

const (
	loginState    = "q1Zb7d0Wn3o7o1x3Qk4r2o7cYJd3m0h8c3p1x2fFv0s"
	loginRedirect = "https://sso.canvaslms.com/api/lti/authorize_redirect?client_id=100&login_hint=h&nonce=n" +
		"&prompt=none&redirect_uri=https%3A%2F%2Flti.example.com%2Flti%2Fv1p3%2Flaunch&response_mode=form_post" +
		"&response_type=id_token&scope=openid&state=" + loginState
)

// loginStarter answers every login with err, or with loginRedirect, and
// keeps the request it was asked.
type loginStarter struct {
	got *workspacev1.StartLti13LoginRequest
	err error
}

func (s *loginStarter) StartLti13Login(_ context.Context, in *workspacev1.StartLti13LoginRequest, _ ...grpc.CallOption) (*workspacev1.Lti13LoginRedirect, error) {
	s.got = in
	if s.err != nil {
		return nil, s.err
	}
	return &workspacev1.Lti13LoginRedirect{RedirectUrl: loginRedirect, State: loginState, StateTtlSeconds: 3600}, nil
}

// startLogin sends one login initiation: a GET with query, or a POST of
// body as contentType (with query too, when given).
func startLogin(s *loginStarter, method, query, contentType, body string) *httptest.ResponseRecorder {
	noMetadata := func(context.Context, *http.Request) metadata.MD { return nil }
	login := LTI13Login(s, noMetadata, 32<<10, slog.New(slog.NewTextHandler(io.Discard, nil)))
	target := LTI13LoginPath
	if query != "" {
		target += "?" + query
	}
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	if contentType != "" {
		r.Header.Set("Content-Type", contentType)
	}
	w := httptest.NewRecorder()
	login(w, r, nil)
	return w
}

const loginFormType = "application/x-www-form-urlencoded"

const canvasLoginForm = "iss=https%3A%2F%2Fcanvas.instructure.com&login_hint=535fa085&client_id=100" +
	"&target_link_uri=https%3A%2F%2Flti.example.com%2Flti%2Fv1p3%2Flaunch&lti_message_hint=eyJ0.e30.s%2Bg" +
	"&lti_deployment_id=1%3Aabc&canvas_region=us-east-1&canvas_environment=prod"

// Canvas's login, as a GET or a form POST, reaches the workspace service
// with exactly its six parameters, and the browser is sent to the
// platform with the state in a cookie of its own that a framed, cross-site
// launch still carries.
func TestLTI13LoginRedirectsWithTheStateCookie(t *testing.T) {
	want := &workspacev1.StartLti13LoginRequest{
		Issuer: "https://canvas.instructure.com", LoginHint: "535fa085", TargetLinkUri: "https://lti.example.com/lti/v1p3/launch",
		LtiMessageHint: "eyJ0.e30.s+g", ClientId: "100", LtiDeploymentId: "1:abc",
	}
	for _, tc := range []struct{ name, method, query, contentType, body string }{
		{"GET", http.MethodGet, canvasLoginForm, "", ""},
		{"POST", http.MethodPost, "", loginFormType, canvasLoginForm},
		{"POST with the query", http.MethodPost, "iss=https%3A%2F%2Fcanvas.instructure.com&client_id=100", loginFormType,
			strings.Replace(canvasLoginForm, "iss=https%3A%2F%2Fcanvas.instructure.com&", "", 1)},
	} {
		s := &loginStarter{}
		w := startLogin(s, tc.method, tc.query, tc.contentType, tc.body)
		if w.Code != http.StatusFound || w.Header().Get("Location") != loginRedirect || w.Body.Len() != 0 {
			t.Fatalf("%s: %d to %q:\n%s", tc.name, w.Code, w.Header().Get("Location"), w.Body)
		}
		if !proto.Equal(s.got, want) {
			t.Fatalf("%s: asked %v, want %v", tc.name, s.got, want)
		}
		cookies := w.Header().Values("Set-Cookie")
		wantCookie := StateCookieName(loginState) + "=" + loginState +
			"; Path=/lti/v1p3/launch; Max-Age=3600; HttpOnly; Secure; SameSite=None; Partitioned"
		if len(cookies) != 1 || cookies[0] != wantCookie {
			t.Fatalf("%s: Set-Cookie %q, want %q", tc.name, cookies, wantCookie)
		}
		for name, value := range map[string]string{
			"Cache-Control": "no-store", "Referrer-Policy": "no-referrer", "X-Content-Type-Options": "nosniff", "Content-Security-Policy": launchCSP,
		} {
			if got := w.Header().Get(name); got != value {
				t.Errorf("%s: %s: %q, want %q", tc.name, name, got, value)
			}
		}
	}
	if !strings.HasPrefix(StateCookieName(loginState), "lti1p3_state_") || len(StateCookieName(loginState)) != len("lti1p3_state_")+16 ||
		StateCookieName(loginState) == StateCookieName(loginState+"x") {
		t.Fatalf("cookie name %q", StateCookieName(loginState))
	}
}

// What the gateway refuses itself, before asking the workspace service:
// a post that is not a form, malformed or ambiguous parameters.
func TestLTI13LoginUnreadable(t *testing.T) {
	for _, tc := range []struct {
		name, method, query, contentType, body string
		status                                 int
		words                                  string
	}{
		{"a JSON post", http.MethodPost, "", "application/json", `{"iss":"x"}`, http.StatusUnsupportedMediaType, "must be a form"},
		{"bad escapes", http.MethodGet, "iss=%zz", "", "", http.StatusBadRequest, "percent-encoded"},
		{"two issuers", http.MethodPost, "iss=a", loginFormType, "iss=b&login_hint=h", http.StatusBadRequest, "iss is given more than once"},
		{"not UTF-8", http.MethodGet, "login_hint=%ff", "", "", http.StatusBadRequest, "login_hint is not valid UTF-8"},
	} {
		s := &loginStarter{}
		w := startLogin(s, tc.method, tc.query, tc.contentType, tc.body)
		if w.Code != tc.status || !strings.Contains(w.Body.String(), tc.words) || s.got != nil || len(w.Header().Values("Set-Cookie")) != 0 {
			t.Errorf("%s: %d, asked %v:\n%s", tc.name, w.Code, s.got, w.Body)
		}
	}
	// The same value twice, and other parameters of any sort, are fine.
	s := &loginStarter{}
	if w := startLogin(s, http.MethodGet, "iss=a&iss=a&x=%ff&login_hint=h", "", ""); w.Code != http.StatusFound || s.got.GetIssuer() != "a" {
		t.Fatalf("a repeated value: %d %v", w.Code, s.got)
	}
}

// The workspace service's refusals become pages with the table's statuses:
// 400 and 401 with the service's words for the administrator; 503 with a
// fixed text; anything unnamed is ours (500) and says nothing of it.
func TestLTI13LoginRefusals(t *testing.T) {
	for _, tc := range []struct {
		name   string
		err    error
		status int
		words  string
	}{
		{"malformed", grpcfault.Status(fault.New(fault.Invalid, "the login initiation lacks login_hint")), http.StatusBadRequest, "lacks login_hint"},
		{"several registrations", grpcfault.Status(fault.New(fault.Invalid, "several registrations … send client_id")), http.StatusBadRequest, "send client_id"},
		{"unknown registration", grpcfault.Status(fault.New(fault.Unauthenticated, "no registration of this tool matches")), http.StatusUnauthorized, "no registration"},
		{"unavailable", grpcfault.Status(fault.New(fault.Unavailable, "the login store is unreachable")), http.StatusServiceUnavailable, msgUnavailable},
		{"a bug", status.Error(codes.Internal, "dial tcp 10.0.0.7:9090: secret detail"), http.StatusInternalServerError, msgOurSide},
	} {
		w := startLogin(&loginStarter{err: tc.err}, http.MethodGet, canvasLoginForm, "", "")
		body := w.Body.String()
		if w.Code != tc.status || !strings.Contains(body, tc.words) || strings.Contains(body, "10.0.0.7") ||
			w.Header().Get("Location") != "" || len(w.Header().Values("Set-Cookie")) != 0 ||
			w.Header().Get("Cache-Control") != "no-store" || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") {
			t.Errorf("%s: %d %v:\n%s", tc.name, w.Code, w.Header(), body)
		}
	}
}

// Too many logins pending: the page is a 503 whose Retry-After is the
// service's (when the oldest pending logins expire), for GET and POST.
func TestLTI13LoginPendingCapRetryAfter(t *testing.T) {
	refusal := grpcfault.Status(&fault.Error{Kind: fault.Unavailable, Message: "too many LTI 1.3 logins are pending: launch again in 37 s", RetryAfter: 37 * time.Second})
	for method, w := range map[string]*httptest.ResponseRecorder{
		http.MethodGet:  startLogin(&loginStarter{err: refusal}, http.MethodGet, canvasLoginForm, "", ""),
		http.MethodPost: startLogin(&loginStarter{err: refusal}, http.MethodPost, "", "application/x-www-form-urlencoded", canvasLoginForm),
	} {
		if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != "37" || !strings.Contains(w.Body.String(), msgUnavailable) ||
			len(w.Header().Values("Set-Cookie")) != 0 {
			t.Errorf("%s: %d %v:\n%s", method, w.Code, w.Header(), w.Body)
		}
	}
}
