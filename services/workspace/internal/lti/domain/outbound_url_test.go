package domain_test

import (
	"strings"
	"testing"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/outbound"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
	"github.com/liveproctor/workspaces/services/workspace/internal/lti/domain/ltidomaintest"
)

// violation returns what CheckNewRegistration says of field in r under
// policy ("" when it takes r).
func violation(t *testing.T, r ltidomain.NewRegistration, policy ltidomain.URLPolicy, field string) string {
	t.Helper()
	err := ltidomain.CheckNewRegistration(r, policy)
	if err == nil {
		return ""
	}
	e, _ := fault.As(err)
	if e == nil || len(e.Fields) != 1 || e.Fields[0].Field != field {
		t.Fatalf("%v, want one violation of %s", err, field)
	}
	return e.Fields[0].Description
}

// A registration's URLs follow the rule of stored URLs (pkg/outbound,
// where its cases are tested), under the LTI setting's name; its issuer
// has no query.
func TestRegistrationURLsFollowTheStoredURLRule(t *testing.T) {
	policy, err := outbound.ParsePolicy("127.0.0.1:8443")
	if err != nil {
		t.Fatal(err)
	}
	r := ltidomaintest.ValidRegistration()
	r.JWKSURL = "http://127.0.0.1:8443/jwks"
	if got := violation(t, r, policy, "jwksUrl"); got != "" {
		t.Errorf("an insecure host: %q", got)
	}
	r.JWKSURL = "http://canvas.instructure.com/jwks"
	if got, want := violation(t, r, policy, "jwksUrl"), outbound.PublicURLRule+": http is allowed only for hosts named in LTI_ALLOW_INSECURE_HOSTS"; got != want {
		t.Errorf("http: %q, want %q", got, want)
	}
	r.JWKSURL = "https://10.1.2.3/jwks"
	if got := violation(t, r, policy, "jwksUrl"); !strings.HasPrefix(got, outbound.PublicURLRule+": the host is localhost") {
		t.Errorf("a private address: %q", got)
	}
	r = ltidomaintest.ValidRegistration()
	r.Issuer = "https://canvas.instructure.com/?q=1"
	if got := violation(t, r, policy, "issuer"); !strings.Contains(got, "without user information, a query or a fragment") {
		t.Errorf("an issuer with a query: %q", got)
	}
}
