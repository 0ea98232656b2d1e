package grpcport

import (
	"fmt"
	"testing"
	"time"

	"google.golang.org/protobuf/reflect/protoreflect"

	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/pkg/outbound"
	"github.com/liveproctor/workspaces/pkg/restrules"
	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// The document states the shape of a registration's URLs, and its bounds,
// from the protos' rest.v1 options; the domain checks them. They are the
// same rules, or the document promises what the service refuses.
func TestRegistrationRulesAreTheDomains(t *testing.T) {
	fields := (&workspacev1.CreateLtiRegistrationRequest{}).ProtoReflect().Descriptor().Fields()
	rule := func(name string) string {
		r := restrules.Field(fields.ByName(protoreflect.Name(name)))
		return fmt.Sprintf("pattern %s max %d", r.GetPattern(), r.GetMaxLength())
	}
	if got, want := rule("issuer"), fmt.Sprintf("pattern %s max %d", outbound.URLWithoutQueryPattern, ltidomain.MaxURLBytes); got != want {
		t.Errorf("issuer: %s, want %s", got, want)
	}
	for _, name := range []string{"auth_login_url", "jwks_url", "auth_token_url"} {
		if got, want := rule(name), fmt.Sprintf("pattern %s max %d", outbound.URLPattern, ltidomain.MaxURLBytes); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
	if r := restrules.Field(fields.ByName("client_id")); r.GetMaxLength() != ltidomain.MaxClientIDLength {
		t.Errorf("clientId: max %d", r.GetMaxLength())
	}
	if r := restrules.Field(fields.ByName("deployment_ids")); r.GetMaxItems() != ltidomain.MaxDeployments || r.GetMaxLength() != ltidomain.MaxDeploymentID || !r.GetUniqueItems() {
		t.Errorf("deploymentIds: %v", r)
	}
}

func TestRegistrationToProto(t *testing.T) {
	r := ltiRegistrationToProto(ltiapp.RegistrationView{Registration: ltidomain.Registration{ID: "r", Issuer: "https://i.test"}})
	if r.GetDeploymentIds() == nil || r.GetAuthTokenUrl() != nil {
		t.Fatalf("no deployments and no token URL: %v", r)
	}
	// Before any launch: lastLaunchAt null, recentFailures an empty list.
	if r.GetLastLaunchTime() != nil || r.GetRecentFailures() == nil || len(r.GetRecentFailures()) != 0 {
		t.Fatalf("no launch yet: %v", r)
	}
	at := time.Date(2026, 11, 28, 9, 30, 0, 123e6, time.UTC)
	r = ltiRegistrationToProto(ltiapp.RegistrationView{
		Registration: ltidomain.Registration{ID: "r", AuthTokenURL: "https://i.test/token", DeploymentIDs: []string{"1"}},
		Health: ltidomain.LaunchHealth{LastLaunchAt: at, Failures: []ltidomain.LaunchFailure{
			{At: at.Add(time.Minute), Reason: "the launch's deployment_id is not registered", RequestID: "req-2"},
			{At: at.Add(-time.Minute), Reason: "the id_token has expired", RequestID: "req-1"},
		}},
	})
	if r.GetAuthTokenUrl().GetValue() != "https://i.test/token" || len(r.GetDeploymentIds()) != 1 {
		t.Fatalf("%v", r)
	}
	if got := r.GetLastLaunchTime().GetValue(); got != "2026-11-28T09:30:00.123Z" {
		t.Errorf("lastLaunchAt %q", got)
	}
	f := r.GetRecentFailures()
	if len(f) != 2 || f[0].GetOccurTime() != "2026-11-28T09:31:00.123Z" || f[0].GetRequestId() != "req-2" ||
		f[1].GetReason() != "the id_token has expired" {
		t.Errorf("recentFailures %v", f)
	}
}
