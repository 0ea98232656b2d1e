package e2e

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/deploy/local/browser"
	"github.com/liveproctor/workspaces/deploy/local/stack"
	"github.com/liveproctor/workspaces/pkg/outbound"
	"github.com/liveproctor/workspaces/pkg/testenv"
)

// LTI Dynamic Registration (1EdTech LTI-DR 1.0) against the test platform
// (tools/lti-platform): a workspace's manager makes a registration link,
// the platform opens it, and the tool registers itself with the platform
// and stores the registration.

// registrationLink is the answer of POST …/lti/registration-links.
type registrationLink struct {
	URL       string `json:"url"`
	ExpiresAt string `json:"expiresAt"`
}

// dynregOpening is what the platform opens a registration link with.
type dynregOpening struct {
	OpenIDConfiguration string `json:"openid_configuration"`
	RegistrationToken   string `json:"registration_token"`
}

// dynregShape is how the platform's next configuration and registration
// answers misbehave (platform.mjs, POST /control/dynreg).
type dynregShape struct {
	Config   map[string]any `json:"config,omitempty"`
	Register map[string]any `json:"register,omitempty"`
}

// dynregRecord is a registration request the platform received.
type dynregRecord struct {
	TokenOK  bool           `json:"token_ok"`
	Body     map[string]any `json:"body"`
	Error    string         `json:"error"`
	ClientID string         `json:"client_id"`
}

// OpenRegistration issues a registration token, shapes the next answers,
// and returns what the platform opens a link with.
func (p *platform) OpenRegistration(shape dynregShape) dynregOpening {
	var o dynregOpening
	p.control(http.MethodPost, "/control/dynreg", shape, &o)
	return o
}

// Registrations are the registration requests the platform received.
func (p *platform) Registrations() []dynregRecord {
	var out struct{ Registrations []dynregRecord }
	p.control(http.MethodGet, "/control/dynreg", nil, &out)
	return out.Registrations
}

// newRegistrationLink makes a registration link for workspace id.
func (c client) newRegistrationLink(id string) registrationLink {
	c.t.Helper()
	var link registrationLink
	c.post("/api/workspace/"+id+"/lti/registration-links", map[string]any{}).wantStatus(http.StatusCreated).decode(&link)
	return link
}

// openLink opens a registration link as a platform does, and returns the
// tool's status and page.
func openLink(t *testing.T, s *stack.Stack, link string, o dynregOpening) (int, string) {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("openid_configuration", o.OpenIDConfiguration)
	q.Set("registration_token", o.RegistrationToken)
	r := anonymous(t).on(s).get(u.Path + "?" + q.Encode())
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Fatalf("GET %s: Content-Type %q, want a page", u.Path, ct)
	}
	return r.status, string(r.body)
}

// A link registers the tool with the platform at once: the registration
// lands on the link's workspace with the platform's endpoints, the client
// id and deployment id it made, and the audit trail says by whom; the page
// tells the platform's window it is done; a launch through the new client
// opens LiveProctor; the link is then used up.
func TestLTI13DynamicRegistration(t *testing.T) {
	p := startPlatform(t, platformOptions{})
	s := startLTI13Stack(t, p.URL)
	tool := s.GatewayURL
	w := asRoot(t).on(s).create(unique(t, "school"), nil)
	manager := w.server(t).on(s)

	link := manager.newRegistrationLink(w.WorkspaceID)
	expires, err := time.Parse(time.RFC3339Nano, link.ExpiresAt)
	if err != nil || !strings.HasPrefix(link.URL, tool+"/lti/v1p3/register/") || time.Until(expires) < 59*time.Minute || time.Until(expires) > 61*time.Minute {
		t.Fatalf("link %+v (%v): want %s/lti/v1p3/register/… for an hour", link, err, tool)
	}

	status, page := openLink(t, s, link.URL, p.OpenRegistration(dynregShape{}))
	if status != http.StatusOK || !strings.Contains(page, "org.imsglobal.lti.close") {
		t.Fatalf("registration: %d\n%s\nplatform: %+v", status, page, p.Stats())
	}
	sent := p.Registrations()
	if len(sent) != 1 || !sent[0].TokenOK || sent[0].Error != "" {
		t.Fatalf("the platform received %+v", sent)
	}
	wantToolMetadata(t, sent[0].Body, tool)

	regs := manager.registrations(w.WorkspaceID)
	if len(regs) != 1 {
		t.Fatalf("registrations %+v, want the one the link made", regs)
	}
	reg := regs[0]
	if reg.Issuer != p.Issuer || reg.ClientID != sent[0].ClientID || len(reg.DeploymentIDs) != 1 ||
		reg.AuthLoginURL != p.URL+"/auth" || reg.JWKSURL != p.URL+"/jwks" || reg.AuthTokenURL == nil || *reg.AuthTokenURL != p.URL+"/token" {
		t.Fatalf("the registration %+v, want the platform's issuer, endpoints and client %s", reg, sent[0].ClientID)
	}
	if !strings.Contains(page, reg.ClientID) || !strings.Contains(page, reg.DeploymentIDs[0]) {
		t.Errorf("the page does not name the client and deployment:\n%s", page)
	}

	// A launch through the new client lands on the workspace.
	exam := launchOverrides{Claims: map[string]any{customClaim: map[string]any{"exam_config_id": "6f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b"}}}
	code, launched := launchOnce(t, p, reg.ClientID, reg.DeploymentIDs[0], exam)
	if code != http.StatusOK || launchWorkspace(t, s, launched) != w.WorkspaceID {
		t.Fatalf("a launch through the registered client: %d\n%s", code, launched)
	}

	// The link is used up.
	if status, page := openLink(t, s, link.URL, p.OpenRegistration(dynregShape{})); status != http.StatusUnauthorized ||
		!strings.Contains(page, "unknown, used or expired") {
		t.Fatalf("the used link again: %d\n%s", status, page)
	}

	// The audit trail: the link made by the manager, then used, with the
	// registration it made, by the manager's key pair.
	events := manager.waitEvents(w.WorkspaceID, url.Values{"type": {"ltiRegistrationLink.created", "ltiRegistrationLink.used", "ltiRegistration.created"}},
		"ltiRegistrationLink.created", "ltiRegistration.created", "ltiRegistrationLink.used").Events
	if events[0].Target.ID == "" || events[2].Target.ID != events[0].Target.ID || events[1].Target.ID != reg.ID ||
		events[1].Actor.AppKey != w.AppKeys.Server.ConsumerKey || events[0].Actor.AppKey != w.AppKeys.Server.ConsumerKey {
		t.Errorf("events %+v", events)
	}
	if strings.Contains(events[0].Target.ID, link.URL[strings.LastIndex(link.URL, "/")+1:]) {
		t.Error("the audit trail holds the link's secret")
	}
}

// wantToolMetadata checks the client metadata the tool posted (LTI-DR
// §3.5.2): its URLs, private_key_jwt and its LTI messages.
func wantToolMetadata(t *testing.T, body map[string]any, tool string) {
	t.Helper()
	lti, _ := body["https://purl.imsglobal.org/spec/lti-tool-configuration"].(map[string]any)
	uris, _ := body["redirect_uris"].([]any)
	messages, _ := lti["messages"].([]any)
	types := map[string]bool{}
	for _, m := range messages {
		if mm, ok := m.(map[string]any); ok {
			types[mm["type"].(string)] = true
		}
	}
	if body["initiate_login_uri"] != tool+"/lti/v1p3/login" || len(uris) != 1 || uris[0] != tool+"/lti/v1p3/launch" ||
		body["jwks_uri"] != tool+"/lti/v1p3/jwks.json" || body["token_endpoint_auth_method"] != "private_key_jwt" ||
		lti["target_link_uri"] != tool+"/lti/v1p3/launch" || !types["LtiResourceLinkRequest"] || !types["LtiDeepLinkingRequest"] {
		t.Errorf("the tool's client metadata: %v", body)
	}
}

// Each refusal is a page saying why, and leaves the link usable: an issuer
// on another host than the configuration URL, a configuration URL on a
// link-local or private address, a platform answering 500 or more than the
// cap, a registration endpoint refusing; an unknown link is 401. The link
// then still registers.
func TestLTI13DynamicRegistrationRefusals(t *testing.T) {
	p := startPlatform(t, platformOptions{})
	s := startLTI13Stack(t, p.URL)
	w := asRoot(t).on(s).create(unique(t, "school"), nil)
	manager := w.server(t).on(s)
	link := manager.newRegistrationLink(w.WorkspaceID)

	tests := []struct {
		name   string
		shape  dynregShape
		config string // replaces the configuration URL
		status int
		says   string
	}{
		{"issuer on another host", dynregShape{Config: map[string]any{"patch": map[string]any{"issuer": "https://lms.example.org"}}},
			"", http.StatusBadRequest, "is not on the host of the configuration URL"},
		{"metadata address", dynregShape{}, "https://169.254.169.254/latest/meta-data/openid-configuration", http.StatusBadRequest, "must be a public https URL"},
		{"private address", dynregShape{}, "https://10.20.30.40/.well-known/openid-configuration", http.StatusBadRequest, "must be a public https URL"},
		{"NAT64 to a private address", dynregShape{}, "https://[64:ff9b::a14:1e28]/.well-known/openid-configuration", http.StatusBadRequest, "must be a public https URL"},
		{"http elsewhere", dynregShape{}, "http://lms.example.org/.well-known/openid-configuration", http.StatusBadRequest, "must be a public https URL"},
		{"configuration 500", dynregShape{Config: map[string]any{"status": 500}}, "", http.StatusBadGateway, "with HTTP 500"},
		{"configuration over the cap", dynregShape{Config: map[string]any{"pad": 70000}}, "", http.StatusBadGateway, "over 64 KiB"},
		{"no RS256", dynregShape{Config: map[string]any{"patch": map[string]any{"id_token_signing_alg_values_supported": []string{"ES256"}}}},
			"", http.StatusBadRequest, "RS256"},
		{"registration refused", dynregShape{Register: map[string]any{"status": 500}}, "", http.StatusBadGateway, "HTTP 500 (registering the tool)"},
		{"registration over the cap", dynregShape{Register: map[string]any{"pad": 70000}}, "", http.StatusBadGateway, "over 64 KiB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := p.withT(t).OpenRegistration(tt.shape)
			if tt.config != "" {
				o.OpenIDConfiguration = tt.config
			}
			start := time.Now()
			status, page := openLink(t, s, link.URL, o)
			if status != tt.status || !strings.Contains(page, tt.says) || !strings.Contains(page, "could not be registered") {
				t.Fatalf("%d, want %d saying %q:\n%s", status, tt.status, tt.says, page)
			}
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("the refusal took %v", took)
			}
		})
	}
	// A host whose name resolves to a non-public address (the machine's own
	// name, which /etc/hosts maps to loopback on most hosts) is refused in
	// the words of a name that does not resolve: a link's holder cannot map
	// the service's network by trying names.
	t.Run("name on a private address", func(t *testing.T) {
		host, _ := os.Hostname()
		addrs, err := net.DefaultResolver.LookupNetIP(context.Background(), "ip", host)
		if err != nil || len(addrs) == 0 || slices.ContainsFunc(addrs, outbound.Public) {
			t.Skipf("%q resolves to %v, %v: not only to non-public addresses", host, addrs, err)
		}
		reason := func(configuration string) (int, string) {
			o := p.withT(t).OpenRegistration(dynregShape{})
			o.OpenIDConfiguration = configuration
			status, page := openLink(t, s, link.URL, o)
			return status, regexp.MustCompile(`<p id="reason">[^<]*</p>`).FindString(page)
		}
		status, private := reason("https://" + host + "/.well-known/openid-configuration")
		nxStatus, nowhere := reason("https://nowhere.invalid/.well-known/openid-configuration")
		if status != http.StatusBadGateway || status != nxStatus || private != nowhere || !strings.Contains(private, "could not be reached") {
			t.Fatalf("%s (%v): %d %s; nowhere.invalid: %d %s", host, addrs, status, private, nxStatus, nowhere)
		}
	})
	if regs := manager.registrations(w.WorkspaceID); len(regs) != 0 {
		t.Fatalf("refused registrations stored %+v", regs)
	}

	bogus := link.URL[:strings.LastIndex(link.URL, "/")+1] + strings.Repeat("A", 43)
	if status, page := openLink(t, s, bogus, p.OpenRegistration(dynregShape{})); status != http.StatusUnauthorized || !strings.Contains(page, "unknown, used or expired") {
		t.Fatalf("an unknown link: %d\n%s", status, page)
	}
	if status, page := openLink(t, s, link.URL, dynregOpening{RegistrationToken: "t"}); status != http.StatusBadRequest || !strings.Contains(page, "without openid_configuration") {
		t.Fatalf("no openid_configuration: %d\n%s", status, page)
	}

	// The link survived every refusal. A platform that makes no deployment
	// (Canvas) gets a registration without one, and the page says what to
	// do.
	status, page := openLink(t, s, link.URL, p.OpenRegistration(dynregShape{Register: map[string]any{"deployment_id": ""}}))
	if status != http.StatusOK || !strings.Contains(page, `id="no-deployment"`) {
		t.Fatalf("the link after the refusals: %d\n%s", status, page)
	}
	if regs := manager.registrations(w.WorkspaceID); len(regs) != 1 || len(regs[0].DeploymentIDs) != 0 {
		t.Fatalf("registrations %+v, want one without deployments", regs)
	}
}

// A registration link is made by the workspace or its managers, like a
// registration: another tenant gets 404, and an unknown workspace too.
func TestLTI13RegistrationLinksAreTheWorkspaces(t *testing.T) {
	w := asRoot(t).create(unique(t, "school"), nil)
	other := asRoot(t).create(unique(t, "other"), nil)
	other.server(t).post("/api/workspace/"+w.WorkspaceID+"/lti/registration-links", map[string]any{}).wantError(http.StatusNotFound, "NOT_FOUND", "")
	asRoot(t).post("/api/workspace/"+unique(t, "nowhere")+"/lti/registration-links", map[string]any{}).wantError(http.StatusNotFound, "NOT_FOUND", "")
	w.server(t).post("/api/workspace/"+w.WorkspaceID+"/lti/registration-links", map[string]any{"extra": 1}).wantError(http.StatusBadRequest, "INVALID_ARGUMENT", "")
	if link := asRoot(t).newRegistrationLink(w.WorkspaceID); link.URL == "" {
		t.Fatal("the manager's link has no URL")
	}
}

// In a real headless Chromium, the LMS's registration page (the test
// platform's /dynreg-page) opens a registration link in a frame, as Canvas
// does; the tool registers and its page tells the LMS's window, by
// postMessage, that registration is over.
func TestLTI13DynamicRegistrationInABrowser(t *testing.T) {
	p := startPlatform(t, platformOptions{})
	s := startLTI13Stack(t, p.URL)
	w := asRoot(t).on(s).create(unique(t, "school"), nil)
	manager := w.server(t).on(s)
	link := manager.newRegistrationLink(w.WorkspaceID)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := browser.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	page, err := b.Open(ctx, p.URL+"/dynreg-page?"+url.Values{"link": {link.URL}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer page.Close()
	want := "org.imsglobal.lti.close from " + s.GatewayURL
	testenv.Eventually(t, 30*time.Second, func() error {
		var got string
		if err := page.Evaluate(ctx, "document.getElementById('close-log').textContent", &got); err != nil {
			return err
		}
		if !strings.Contains(got, want) {
			return fmt.Errorf("the LMS page received %q", got)
		}
		return nil
	}, "the close message\n%s", strings.Join(page.Log(), "\n"))
	if regs := manager.registrations(w.WorkspaceID); len(regs) != 1 || regs[0].Issuer != p.Issuer {
		t.Fatalf("registrations %+v", regs)
	}
}
