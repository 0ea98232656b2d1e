package domain_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
	"github.com/liveproctor/workspaces/services/workspace/internal/lti/domain/ltidomaintest"
)

func TestCheckNewRegistrationNamesEveryField(t *testing.T) {
	if err := ltidomain.CheckNewRegistration(ltidomaintest.ValidRegistration(), ltidomain.URLPolicy{}); err != nil {
		t.Fatalf("a valid registration: %v", err)
	}
	none := ltidomaintest.ValidRegistration()
	none.DeploymentIDs, none.AuthTokenURL = nil, nil
	if err := ltidomain.CheckNewRegistration(none, ltidomain.URLPolicy{}); err != nil {
		t.Fatalf("no deployments and no token URL: %v", err)
	}

	empty := ""
	bad := ltidomain.NewRegistration{
		Issuer:        "https://canvas.instructure.com/?x=1",
		ClientID:      "tab\there",
		DeploymentIDs: []string{"a", "", "a", strings.Repeat("d", 256), "é"},
		AuthLoginURL:  "http://sso.canvaslms.com/authorize",
		JWKSURL:       "",
		AuthTokenURL:  &empty,
	}
	got := ltidomaintest.Violated(ltidomain.CheckNewRegistration(bad, ltidomain.URLPolicy{}))
	want := map[string]string{
		"issuer":           "must be an https URL on a host name or address, without user information, a query or a fragment",
		"clientId":         "must be 1 to 255 printable ASCII characters",
		"deploymentIds[1]": "is required",
		"deploymentIds[2]": "duplicate of deploymentIds[0]",
		"deploymentIds[3]": "must be 1 to 255 printable ASCII characters",
		"deploymentIds[4]": "must be 1 to 255 printable ASCII characters",
		"authLoginUrl":     "must be a public https URL: http is allowed only for hosts named in LTI_ALLOW_INSECURE_HOSTS",
		"jwksUrl":          "is required",
		"authTokenUrl":     "is required",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("violations:\n got %v\nwant %v", got, want)
	}

	many := ltidomaintest.ValidRegistration()
	many.DeploymentIDs = make([]string, ltidomain.MaxDeployments+1)
	for i := range many.DeploymentIDs {
		many.DeploymentIDs[i] = fmt.Sprint(i)
	}
	if got := ltidomaintest.Violated(ltidomain.CheckNewRegistration(many, ltidomain.URLPolicy{})); got["deploymentIds"] != "must have at most 100 elements" {
		t.Fatalf("101 deployment ids: %v", got)
	}
	long := ltidomaintest.ValidRegistration()
	long.ClientID = strings.Repeat("c", 256)
	if got := ltidomaintest.Violated(ltidomain.CheckNewRegistration(long, ltidomain.URLPolicy{})); got["clientId"] == "" {
		t.Fatalf("a client id of 256: %v", got)
	}
}

// The workspace hands its registrations out as a value: a change to one copy
// must leave every other copy as it was.
func TestRegistrationsCopiesShareNothing(t *testing.T) {
	now := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	var a ltidomain.Registrations
	if _, err := a.Add("reg-1", ltidomaintest.ValidRegistration(), ltidomain.URLPolicy{}, now); err != nil {
		t.Fatal(err)
	}
	b := a
	if _, added, err := b.AddDeployment("reg-1", "2:x", now); err != nil || !added {
		t.Fatalf("add a deployment: %v, %v", added, err)
	}
	other := ltidomaintest.ValidRegistration()
	other.ClientID = "2"
	if _, err := b.Add("reg-2", other, ltidomain.URLPolicy{}, now); err != nil {
		t.Fatal(err)
	}
	if reg, _ := a.Get("reg-1"); a.Len() != 1 || len(reg.DeploymentIDs) != 1 {
		t.Fatalf("the first copy changed with the second: %+v", a.All())
	}
	c := b
	if _, err := c.Remove("reg-1"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RemoveDeployment("reg-2", ltidomaintest.ValidRegistration().DeploymentIDs[0], now); err != nil {
		t.Fatal(err)
	}
	if reg, _ := b.Get("reg-2"); b.Len() != 2 || len(reg.DeploymentIDs) != 1 {
		t.Fatalf("the second copy changed with the third: %+v", b.All())
	}
}
