package app_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/memstore"
	"github.com/liveproctor/workspaces/services/workspace/internal/app"
	"github.com/liveproctor/workspaces/services/workspace/internal/app/apptest"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	"github.com/liveproctor/workspaces/services/workspace/internal/lti/adapters/ltistate"
	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
)

// fakePlatform answers Dynamic Registration as a platform on
// lms.school.example would, or fails as told.
type fakePlatform struct {
	configErr, registerErr error
	issuer                 string
	posted                 []map[string]any
	tokens                 []string
}

const lmsConfigURL = "https://lms.school.example/.well-known/openid-configuration"

func (p *fakePlatform) Configuration(_ context.Context, url string) ([]byte, error) {
	if p.configErr != nil {
		return nil, p.configErr
	}
	issuer := p.issuer
	if issuer == "" {
		issuer = "https://lms.school.example"
	}
	return json.Marshal(map[string]any{
		"issuer": issuer, "authorization_endpoint": "https://lms.school.example/auth", "jwks_uri": "https://lms.school.example/jwks",
		"registration_endpoint": "https://lms.school.example/register", "id_token_signing_alg_values_supported": []string{"RS256"},
		"https://purl.imsglobal.org/spec/lti-platform-configuration": map[string]any{
			"product_family_code": "moodle", "messages_supported": []map[string]string{{"type": "LtiResourceLinkRequest"}},
		},
	})
}

func (p *fakePlatform) Register(_ context.Context, endpoint, token string, client []byte) ([]byte, error) {
	if p.registerErr != nil {
		return nil, p.registerErr
	}
	var body map[string]any
	_ = json.Unmarshal(client, &body)
	p.posted, p.tokens = append(p.posted, body), append(p.tokens, token)
	return []byte(`{"client_id":"moodle-client-` + strings.Repeat("7", len(p.posted)) + `","https://purl.imsglobal.org/spec/lti-tool-configuration":{"deployment_id":"3"}}`), nil
}

// secretOf is a link URL's secret.
func secretOf(url string) string { return url[strings.LastIndex(url, "/")+1:] }

// A link registers once: a refused registration gives it back, a
// successful one uses it up, and the registration is the link's
// workspace's, made with what the platform answered.
func TestRegistrationLinkWorksOnceForASuccess(t *testing.T) {
	c := &clock{now: time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)}
	platform := &fakePlatform{}
	f := newFixture(t, deps{now: c.Now, links: ltistate.NewMemoryRegistrationLinks(10, c.Now), registrar: platform})
	ctx := context.Background()
	_, self := f.create(f.root, app.CreateInput{ID: "w"})
	_, other := f.create(f.root, app.CreateInput{ID: "other"})

	_, err := f.dynamic.CreateLink(ctx, other, "w")
	apptest.WantKind(t, err, fault.NotFound)
	link, err := f.dynamic.CreateLink(ctx, self, "w")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(link.URL, "https://lti.test/lti/v1p3/register/") || !link.ExpiresAt.Equal(c.Now().Add(time.Hour)) {
		t.Fatalf("link %+v", link)
	}
	open := ltiapp.LinkOpening{Link: secretOf(link.URL), ConfigurationURL: lmsConfigURL, Token: "reg-token"}

	// Refusals leave the link usable.
	platform.issuer = "https://other.example"
	_, err = f.dynamic.Register(ctx, "req-1", open)
	apptest.WantKind(t, err, fault.Invalid)
	platform.issuer, platform.registerErr = "", fault.New(fault.BadGateway, "The platform answered with HTTP 500 (registering the tool).")
	_, err = f.dynamic.Register(ctx, "req-2", open)
	apptest.WantKind(t, err, fault.BadGateway)
	_, err = f.dynamic.Register(ctx, "req-3", ltiapp.LinkOpening{Link: open.Link, ConfigurationURL: "https://169.254.169.254/x", Token: "t"})
	apptest.WantKind(t, err, fault.Invalid)

	platform.registerErr = nil
	got, err := f.dynamic.Register(ctx, "req-4", open)
	if err != nil {
		t.Fatal(err)
	}
	if got.WorkspaceID != "w" || got.Product != "moodle" || got.Registration.Issuer != "https://lms.school.example" ||
		got.Registration.ClientID != "moodle-client-7" || len(got.Registration.DeploymentIDs) != 1 || got.Registration.DeploymentIDs[0] != "3" {
		t.Fatalf("registered %+v", got)
	}
	if len(platform.tokens) != 1 || platform.tokens[0] != "reg-token" || platform.posted[0]["initiate_login_uri"] != "https://lti.test/lti/v1p3/login" {
		t.Fatalf("the platform received %v with %v", platform.posted, platform.tokens)
	}
	if regs, err := f.regs.List(ctx, self, "w"); err != nil || len(regs) != 1 || regs[0].ID != got.Registration.ID {
		t.Fatalf("registrations %+v, %v", regs, err)
	}

	// Used up.
	_, err = f.dynamic.Register(ctx, "req-5", open)
	apptest.WantKind(t, err, fault.Unauthenticated)
}

// A link expires an hour after it was made, even one given back after a
// failure; a link whose workspace was deleted registers nothing.
func TestRegistrationLinkExpiresAndFollowsItsWorkspace(t *testing.T) {
	c := &clock{now: time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)}
	platform := &fakePlatform{}
	f := newFixture(t, deps{now: c.Now, links: ltistate.NewMemoryRegistrationLinks(10, c.Now), registrar: platform})
	ctx := context.Background()
	_, self := f.create(f.root, app.CreateInput{ID: "w"})

	link, err := f.dynamic.CreateLink(ctx, self, "w")
	if err != nil {
		t.Fatal(err)
	}
	open := ltiapp.LinkOpening{Link: secretOf(link.URL), ConfigurationURL: lmsConfigURL, Token: "t"}
	c.Add(59 * time.Minute)
	platform.configErr = fault.New(fault.BadGateway, "The platform could not be reached.")
	_, err = f.dynamic.Register(ctx, "r", open)
	apptest.WantKind(t, err, fault.BadGateway)
	c.Add(time.Minute)
	platform.configErr = nil
	_, err = f.dynamic.Register(ctx, "r", open)
	apptest.WantKind(t, err, fault.Unauthenticated)

	link, err = f.dynamic.CreateLink(ctx, self, "w")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.app.DeleteWorkspace(ctx, f.root, "w", app.Precondition{}); err != nil {
		t.Fatal(err)
	}
	_, err = f.dynamic.Register(ctx, "r", ltiapp.LinkOpening{Link: secretOf(link.URL), ConfigurationURL: lmsConfigURL, Token: "t"})
	apptest.WantKind(t, err, fault.Unauthenticated)
	if len(platform.posted) != 0 {
		t.Fatalf("the platform was asked to register %d times", len(platform.posted))
	}
}

// downRepo fails every write, after which the write may or may not have
// happened (the store unreachable mid-write).
type downRepo struct {
	domain.Repository
	down bool
}

func (r *downRepo) Update(ctx context.Context, w *domain.Workspace) (*domain.Workspace, error) {
	if r.down {
		return nil, fault.New(fault.Unavailable, "the store is unreachable")
	}
	return r.Repository.Update(ctx, w)
}

// A registration whose write may have been stored keeps its link used: a
// retry must not register the platform a second time.
func TestRegistrationThatMayBeStoredUsesUpItsLink(t *testing.T) {
	repo := &downRepo{Repository: memstore.New()}
	platform := &fakePlatform{}
	f := newFixture(t, deps{repo: repo, links: ltistate.NewMemoryRegistrationLinks(10, nil), registrar: platform})
	ctx := context.Background()
	_, self := f.create(f.root, app.CreateInput{ID: "w"})
	link, err := f.dynamic.CreateLink(ctx, self, "w")
	if err != nil {
		t.Fatal(err)
	}
	open := ltiapp.LinkOpening{Link: secretOf(link.URL), ConfigurationURL: lmsConfigURL, Token: "t"}
	repo.down = true
	_, err = f.dynamic.Register(ctx, "r", open)
	apptest.WantKind(t, err, fault.Unavailable)
	repo.down = false
	_, err = f.dynamic.Register(ctx, "r", open)
	apptest.WantKind(t, err, fault.Unauthenticated)
	if len(platform.posted) != 1 {
		t.Fatalf("the platform was asked to register %d times, want 1", len(platform.posted))
	}
}
