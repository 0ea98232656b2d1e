package e2e

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/deploy/local/browser"
)

// customerPage is a vendor's customer's page on its own origin: it loads
// the SDK from the gateway and launches components with tokens it is given.
const customerPage = `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>exam</title>
<script src="%s/sdk/v1/sdk.js"></script></head>
<body><div id="valid"></div><div id="again"></div><div id="forged"></div><div id="revoked"></div>
<script>
window.launch = async (id, auth) => {
  try {
    const s = await WorkspaceSDK.LiveProctor(id, { auth }).init({ examConfigId: '7c9e6679-7425-40de-944b-e07fc1f90ae7' });
    return { ok: true, email: s.email, workspaceId: s.workspaceId };
  } catch (e) {
    return { ok: false, code: e.code };
  }
};
</script></body></html>`

type launched struct {
	OK          bool   `json:"ok"`
	Email       string `json:"email"`
	WorkspaceID string `json:"workspaceId"`
	Code        string `json:"code"`
}

// The LiveProctor component in a real headless Chromium, on a page of
// another origin, against the real gateway and auth service.
func TestLiveProctorInABrowser(t *testing.T) {
	d := asRoot(t).create(unique(t, "d"), nil)
	valid := d.server(t).login("ada@example.com", d.WorkspaceID).Auth
	revoked := d.server(t).login("bob@example.com", d.WorkspaceID).Auth
	d.server(t).post("/api/logout/sdk", map[string]any{"email": "bob@example.com", "workspaceId": d.WorkspaceID}).ok(nil)

	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, customerPage, env.GatewayURL)
	}))
	defer site.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := browser.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	page, err := b.Open(ctx, site.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer page.Close()

	launch := func(id, token string) launched {
		t.Helper()
		var r launched
		if err := page.Evaluate(ctx, fmt.Sprintf("launch(%q, %q)", id, token), &r); err != nil {
			t.Fatalf("launch %s: %v\n%s", id, err, strings.Join(page.Log(), "\n"))
		}
		return r
	}

	// A valid token renders its session, and launches more than once.
	for _, id := range []string{"valid", "again"} {
		r := launch(id, valid)
		if !r.OK || r.Email != "ada@example.com" || r.WorkspaceID != d.WorkspaceID {
			t.Fatalf("%s: %+v", id, r)
		}
		shown, err := page.Text(ctx, "#"+id+` [data-field="email"]`)
		if err != nil || shown != "ada@example.com" {
			t.Fatalf("%s shows email %q (%v)", id, shown, err)
		}
	}

	// A forged and a revoked token reject and show no session.
	for id, token := range map[string]string{"forged": "Zm9yZ2VkLXRva2VuLWZvcmdlZC10b2tlbi1mb3JnZWQ=", "revoked": revoked} {
		r := launch(id, token)
		if r.OK || r.Code != "invalid_token" {
			t.Fatalf("%s token: %+v, want rejection invalid_token", id, r)
		}
		if n, err := page.Count(ctx, "#"+id+` [data-liveproctor="session"]`); err != nil || n != 0 {
			t.Fatalf("%s token shows %d session blocks (%v)", id, n, err)
		}
	}
}
