package lti

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"google.golang.org/grpc"

	"github.com/liveproctor/workspaces/pkg/fault"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/pkg/grpcfault"
)

// registrations answers every registration with done, or err, and keeps
// the last request.
type registrations struct {
	done *workspacev1.LtiPlatformRegistration
	err  error
	got  *workspacev1.RegisterLtiPlatformRequest
}

func (g *registrations) RegisterLtiPlatform(_ context.Context, in *workspacev1.RegisterLtiPlatformRequest,
	_ ...grpc.CallOption) (*workspacev1.LtiPlatformRegistration, error) {
	g.got = in
	return g.done, g.err
}

func openRegistration(g *registrations, query string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodGet, "/lti/v1p3/register/s3cr3t?"+query, nil)
	w := httptest.NewRecorder()
	Register(g, noMetadata13, quiet13())(w, r, map[string]string{"link": "s3cr3t"})
	return w
}

// A registration answers a page that names the client and deployment and
// tells the platform's window it is done, with a script the policy allows
// by its digest and nothing else.
func TestRegisterAnswersTheClosePage(t *testing.T) {
	g := &registrations{done: &workspacev1.LtiPlatformRegistration{
		WorkspaceId: "district-7", PlatformName: "moodle",
		Registration: &workspacev1.LtiRegistration{ClientId: "cl<1>", DeploymentIds: []string{"3"}},
	}}
	w := openRegistration(g, "openid_configuration=https%3A%2F%2Flms.example%2Fcfg&registration_token=tok&other=x")
	body := w.Body.String()
	if w.Code != http.StatusOK || g.got.GetLink() != "s3cr3t" || g.got.GetOpenidConfiguration() != "https://lms.example/cfg" || g.got.GetRegistrationToken() != "tok" {
		t.Fatalf("%d, sent %v:\n%s", w.Code, g.got, body)
	}
	for _, want := range []string{"with moodle for workspace <code>district-7</code>", "cl&lt;1&gt;", `id="deployment-id">3<`} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %s:\n%s", want, body)
		}
	}
	scripts := regexp.MustCompile(`(?s)<script>(.*?)</script>`).FindAllStringSubmatch(body, -1)
	if len(scripts) != 1 || !strings.Contains(scripts[0][1], `{subject: "org.imsglobal.lti.close"}`) {
		t.Fatalf("scripts %q", scripts)
	}
	sum := sha256.Sum256([]byte(scripts[0][1]))
	csp := w.Header().Get("Content-Security-Policy")
	if !strings.Contains(csp, "script-src 'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"'") || w.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("policy %q does not allow exactly the page's script", csp)
	}

	g.done.Registration.DeploymentIds = nil
	if body := openRegistration(g, "openid_configuration=u&registration_token=t").Body.String(); !strings.Contains(body, `id="no-deployment"`) {
		t.Fatalf("without a deployment:\n%s", body)
	}
}

// What the platform sent is passed on as is; a parameter given twice with
// two values is refused before the service is called.
func TestRegisterReadsTheQuery(t *testing.T) {
	g := &registrations{}
	for _, q := range []string{"openid_configuration=a&openid_configuration=b&registration_token=t", "registration_token=%ff%fe", "a=%zz"} {
		w := openRegistration(g, q)
		if w.Code != http.StatusBadRequest || g.got != nil || !strings.Contains(w.Body.String(), "could not be registered") {
			t.Errorf("%s: %d, sent %v:\n%s", q, w.Code, g.got, w.Body.String())
		}
	}
}

// The service's refusals an administrator can act on are shown as they
// are, with their status; anything else is ours.
func TestRegisterRefusals(t *testing.T) {
	for _, tt := range []struct {
		kind   fault.Kind
		status int
		shown  bool
	}{
		{fault.Invalid, 400, true}, {fault.Unauthenticated, 401, true}, {fault.Conflict, 409, true},
		{fault.FailedPrecondition, 409, true}, {fault.BadGateway, 502, true},
		{fault.Internal, 500, false}, {fault.PermissionDenied, 500, false}, {fault.Unavailable, 503, false},
	} {
		g := &registrations{err: grpcfault.Status(fault.New(tt.kind, "the service's reason"))}
		w := openRegistration(g, "openid_configuration=u&registration_token=t")
		if w.Code != tt.status || strings.Contains(w.Body.String(), "the service&#39;s reason") != tt.shown {
			t.Errorf("%v: %d, want %d (reason shown: %v):\n%s", tt.kind, w.Code, tt.status, tt.shown, w.Body.String())
		}
	}
}
