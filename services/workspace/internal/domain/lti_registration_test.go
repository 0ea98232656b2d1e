package domain_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

func validRegistration() domain.NewLTIRegistration {
	token := "https://sso.canvaslms.com/login/oauth2/token"
	return domain.NewLTIRegistration{
		Issuer:        "https://canvas.instructure.com",
		ClientID:      "10000000000001",
		DeploymentIDs: []string{"1:8865aa05b4b79b64a91a86042e43af5ea8ae79eb"},
		AuthLoginURL:  "https://sso.canvaslms.com/api/lti/authorize_redirect",
		JWKSURL:       "https://sso.canvaslms.com/api/lti/security/jwks",
		AuthTokenURL:  &token,
	}
}

// violated lists the fields err names, with their descriptions.
func violated(err error) map[string]string {
	out := map[string]string{}
	if e, ok := fault.As(err); ok {
		for _, f := range e.Fields {
			out[f.Field] = f.Description
		}
	}
	return out
}

func TestCheckNewLTIRegistrationNamesEveryField(t *testing.T) {
	if err := domain.CheckNewLTIRegistration(validRegistration(), domain.URLPolicy{}); err != nil {
		t.Fatalf("a valid registration: %v", err)
	}
	none := validRegistration()
	none.DeploymentIDs, none.AuthTokenURL = nil, nil
	if err := domain.CheckNewLTIRegistration(none, domain.URLPolicy{}); err != nil {
		t.Fatalf("no deployments and no token URL: %v", err)
	}

	empty := ""
	bad := domain.NewLTIRegistration{
		Issuer:        "https://canvas.instructure.com/?x=1",
		ClientID:      "tab\there",
		DeploymentIDs: []string{"a", "", "a", strings.Repeat("d", 256), "é"},
		AuthLoginURL:  "http://sso.canvaslms.com/authorize",
		JWKSURL:       "",
		AuthTokenURL:  &empty,
	}
	got := violated(domain.CheckNewLTIRegistration(bad, domain.URLPolicy{}))
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

	many := validRegistration()
	many.DeploymentIDs = make([]string, domain.MaxLTIDeployments+1)
	for i := range many.DeploymentIDs {
		many.DeploymentIDs[i] = fmt.Sprint(i)
	}
	if got := violated(domain.CheckNewLTIRegistration(many, domain.URLPolicy{})); got["deploymentIds"] != "must have at most 100 elements" {
		t.Fatalf("101 deployment ids: %v", got)
	}
	long := validRegistration()
	long.ClientID = strings.Repeat("c", 256)
	if got := violated(domain.CheckNewLTIRegistration(long, domain.URLPolicy{})); got["clientId"] == "" {
		t.Fatalf("a client id of 256: %v", got)
	}
}

func TestLTIRegistrationLife(t *testing.T) {
	w := mustCreate(t, "w", mustRoot(t))
	now := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	reg, err := w.AddLTIRegistration("reg-1", validRegistration(), domain.URLPolicy{}, now)
	if err != nil {
		t.Fatal(err)
	}
	if reg.ID != "reg-1" || reg.AuthTokenURL == "" || !reg.CreatedAt.Equal(now) || !reg.HasDeployment("1:8865aa05b4b79b64a91a86042e43af5ea8ae79eb") {
		t.Fatalf("added: %+v", reg)
	}
	// The pair is this workspace's already.
	_, err = w.AddLTIRegistration("reg-2", validRegistration(), domain.URLPolicy{}, now)
	if !errors.Is(err, domain.ErrLTIRegistrationTaken) {
		t.Fatalf("the same pair again: %v", err)
	}
	if found, ok := w.LTIRegistrationFor("https://canvas.instructure.com", "10000000000001"); !ok || found.ID != "reg-1" {
		t.Fatalf("LTIRegistrationFor: %+v, %v", found, ok)
	}
	if _, ok := w.LTIRegistrationFor("https://canvas.instructure.com/", "10000000000001"); ok {
		t.Fatal("the issuer is compared as an exact string")
	}

	later := now.Add(time.Minute)
	r, added, err := w.AddLTIDeployment("reg-1", "2:x", later)
	if err != nil || !added || !slices.Equal(r.DeploymentIDs, []string{"1:8865aa05b4b79b64a91a86042e43af5ea8ae79eb", "2:x"}) || !r.UpdatedAt.Equal(later) {
		t.Fatalf("add a deployment: %+v, %v, %v", r, added, err)
	}
	if _, added, err := w.AddLTIDeployment("reg-1", "2:x", later); err != nil || added {
		t.Fatalf("add it again: %v, %v; want no change", added, err)
	}
	if _, _, err := w.AddLTIDeployment("reg-1", "", later); fault.KindOf(err) != fault.Invalid || violated(err)["deploymentId"] == "" {
		t.Fatalf("an empty deployment id: %v", err)
	}
	if _, _, err := w.AddLTIDeployment("nope", "3", later); !errors.Is(err, domain.ErrLTIRegistrationNotFound) {
		t.Fatalf("an unknown registration: %v", err)
	}
	if _, err := w.RemoveLTIDeployment("reg-1", "9", later); !errors.Is(err, domain.ErrLTIDeploymentNotFound) {
		t.Fatalf("remove an unknown deployment: %v", err)
	}
	if r, err := w.RemoveLTIDeployment("reg-1", "2:x", later); err != nil || len(r.DeploymentIDs) != 1 {
		t.Fatalf("remove a deployment: %+v, %v", r, err)
	}
	removed, err := w.RemoveLTIRegistration("reg-1", later)
	if err != nil || removed.ID != "reg-1" || len(w.LTIRegistrations()) != 0 {
		t.Fatalf("remove: %+v, %v; left %v", removed, err, w.LTIRegistrations())
	}
	if _, err := w.RemoveLTIRegistration("reg-1", later); !errors.Is(err, domain.ErrLTIRegistrationNotFound) {
		t.Fatalf("remove again: %v", err)
	}

	var types []domain.EventType
	for _, e := range w.PendingEvents() {
		if e.Target.Type == domain.TargetLTIRegistration {
			types = append(types, e.Type)
		}
	}
	want := []domain.EventType{domain.EventLTIRegistrationCreated, domain.EventLTIDeploymentAdded,
		domain.EventLTIDeploymentRemoved, domain.EventLTIRegistrationDeleted}
	if !slices.Equal(types, want) {
		t.Fatalf("events %v, want %v", types, want)
	}
}

func TestLTIRegistrationBounds(t *testing.T) {
	w := mustCreate(t, "w", mustRoot(t))
	now := time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)
	for i := range domain.MaxLTIRegistrations {
		r := validRegistration()
		r.ClientID = fmt.Sprint(i)
		if _, err := w.AddLTIRegistration(fmt.Sprint("reg-", i), r, domain.URLPolicy{}, now); err != nil {
			t.Fatal(err)
		}
	}
	r := validRegistration()
	r.ClientID = "one too many"
	if _, err := w.AddLTIRegistration("reg-x", r, domain.URLPolicy{}, now); !errors.Is(err, domain.ErrTooManyLTIRegistrations) {
		t.Fatalf("a 21st registration: %v", err)
	}
	for i := len(validRegistration().DeploymentIDs); i < domain.MaxLTIDeployments; i++ {
		if _, _, err := w.AddLTIDeployment("reg-0", fmt.Sprint("d", i), now); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := w.AddLTIDeployment("reg-0", "d-x", now); !errors.Is(err, domain.ErrTooManyLTIDeployments) {
		t.Fatalf("a 101st deployment id: %v", err)
	}
	if err := w.Delete(now); err != nil {
		t.Fatal(err)
	}
	if _, err := w.RemoveLTIRegistration("reg-0", now); !errors.Is(err, domain.ErrDeleted) {
		t.Fatalf("a deleted workspace's registration: %v", err)
	}
}
