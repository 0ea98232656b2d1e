package e2e

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/deploy/local/browser"
	"github.com/liveproctor/workspaces/deploy/local/stack"
	"github.com/liveproctor/workspaces/pkg/testenv"
)

// In a real headless Chromium, a platform's course page (tools/lti-platform,
// on 127.0.0.1) frames the tool (the gateway, whose PUBLIC_BASE_URL is on
// localhost: another site), and the frame runs the whole LTI 1.3 launch:
// the OIDC login initiation, the platform's authentication and the form
// post. LiveProctor opens there for the user, with the exam, on a token the
// session route takes. The frame has no third-party cookies (this Chromium
// blocks them), so the launch rests on the state cookie being Partitioned.
func TestLTI13LaunchFramedInChromium(t *testing.T) {
	const exam = "9b2e5a3c-4f1d-4e8a-b6c7-0d1e2f3a4b5c"
	p := startPlatform(t, platformOptions{})
	s, tool := startFramedLTI13Stack(t, p.URL)
	client := clientID(t, "a")
	p.SetClients(tool, []platformClient{{ClientID: client, DeploymentIDs: []string{"dep-1"}}})
	w := asRoot(t).on(s).create(unique(t, "school"), nil)
	w.server(t).on(s).register(w.WorkspaceID, map[string]any{
		"issuer": p.Issuer, "clientId": client, "deploymentIds": []string{"dep-1"},
		"authLoginUrl": p.URL + "/auth", "jwksUrl": p.URL + "/jwks",
	})
	p.Next(launchOverrides{Claims: map[string]any{customClaim: map[string]any{"exam_config_id": exam}}})

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := browser.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	course := p.URL + "/course?" + url.Values{"client_id": {client}, "lti_deployment_id": {"dep-1"}}.Encode()
	page, err := b.Open(ctx, course)
	if err != nil {
		t.Fatal(err)
	}
	defer page.Close()
	frame, err := page.Frame(ctx, tool+"/lti/v1p3/launch")
	if err != nil {
		t.Fatalf("%v\nplatform: %+v\n%s", err, p.Stats(), strings.Join(page.Log(), "\n"))
	}
	defer frame.Close()

	// The component's fields exist once it has rendered the session.
	shown, cancelShown := context.WithTimeout(ctx, time.Minute)
	defer cancelShown()
	for field, want := range map[string]string{"email": "ada@school.example", "examConfigId": exam, "workspaceId": w.WorkspaceID} {
		got, err := frame.Text(shown, `#proctor [data-field="`+field+`"]`)
		if err != nil || got != want {
			var text string
			_ = frame.Evaluate(ctx, "document.body ? document.body.innerText : ''", &text)
			t.Fatalf("the framed component shows %s %q (%v), want %q\nthe frame's page: %s\nplatform: %+v\n%s",
				field, got, err, want, text, p.Stats(), strings.Join(frame.Log(), "\n"))
		}
	}

	// The launch page drops the token's attribute once read; the component
	// keeps the token, and it is a session for the platform's user.
	if _, kept, err := frame.Attribute(ctx, "#proctor", "data-auth"); err != nil || kept {
		t.Fatalf("the token is still in the page's DOM (%v)", err)
	}
	var tokens []string
	if err := frame.Instances(ctx, "WorkspaceSDK.LiveProctor.prototype", "(lp) => lp._auth", &tokens); err != nil || len(tokens) != 1 || tokens[0] == "" {
		t.Fatalf("the components' tokens %q (%v)", tokens, err)
	}
	var got sdkSession
	anonymous(t).on(s).do(http.MethodGet, "/api/sdk/session", nil, "Authorization", "Bearer "+tokens[0]).ok(&got)
	if got.Email != "ada@school.example" || got.WorkspaceID != w.WorkspaceID {
		t.Fatalf("the framed launch's session: %+v", got)
	}

	// Chromium blocks third-party cookies here by default (CDP reports the
	// gateway's unpartitioned cookies in such a frame as blocked for
	// "UserPreferences"): the frame has no unpartitioned cookies, so only
	// the Partitioned state cookie can have carried the login to the launch.
	var unpartitioned bool
	if err := frame.Evaluate(ctx, "document.hasStorageAccess()", &unpartitioned); err != nil || unpartitioned {
		t.Errorf("the framed tool has unpartitioned cookies (%v): this Chromium does not block third-party cookies, "+
			"so the launch does not show that the Partitioned state cookie suffices", err)
	}
}

// startFramedLTI13Stack starts a stack of the test's own whose gateway
// listens on 127.0.0.1 and whose tool URLs (PUBLIC_BASE_URL) name it
// localhost, another site than the platform's 127.0.0.1 for a browser; it
// may reach the platform at platformURL over http (LTI_ALLOW_INSECURE_HOSTS).
// It returns the stack and the tool's base URL.
func startFramedLTI13Stack(t *testing.T, platformURL string) (*stack.Stack, string) {
	t.Helper()
	addr, err := testenv.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	tool := "http://localhost:" + port
	u, err := url.Parse(platformURL)
	if err != nil {
		t.Fatal(err)
	}
	return startOwnStackAt(t, addr, "PUBLIC_BASE_URL="+tool, "LTI_ALLOW_INSECURE_HOSTS="+u.Host), tool
}
