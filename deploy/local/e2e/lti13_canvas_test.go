package e2e

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// canvasConfig is the Canvas developer-key JSON, as Canvas reads it.
type canvasConfig struct {
	Title             string   `json:"title"`
	OIDCInitiationURL string   `json:"oidc_initiation_url"`
	TargetLinkURI     string   `json:"target_link_uri"`
	PublicJWKURL      string   `json:"public_jwk_url"`
	Scopes            []string `json:"scopes"`
	Extensions        []struct {
		Platform     string `json:"platform"`
		PrivacyLevel string `json:"privacy_level"`
		Domain       string `json:"domain"`
		Settings     struct {
			Placements []struct {
				Placement     string `json:"placement"`
				MessageType   string `json:"message_type"`
				TargetLinkURI string `json:"target_link_uri"`
			} `json:"placements"`
		} `json:"settings"`
	} `json:"extensions"`
}

// A workspace's Canvas developer-key JSON names the tool's LTI 1.3 URLs
// (PUBLIC_BASE_URL's, as the 1.1 launch URL), the workspace's name and two
// Deep Linking placements; it holds to the served document, takes no
// credentials, and a deleted workspace has none.
func TestLTI13CanvasConfiguration(t *testing.T) {
	root := asRoot(t)
	id := unique(t, "canvas")
	name := `Springfield <"K&12">`
	w := root.create(id, map[string]any{"name": name})
	path := "/lti/v1p3/workspaces/" + id + "/canvas.json"

	var c canvasConfig
	got := as(t, rootKey, "wrong").get(path).ok(&c)
	if ct, cc := got.header.Get("Content-Type"), got.header.Get("Cache-Control"); ct != "application/json" || cc != "public, max-age=300" {
		t.Errorf("Content-Type %q, Cache-Control %q", ct, cc)
	}
	launch := lti13Launch(t, w)
	base := strings.TrimSuffix(launch, "/lti/v1p3/launch")
	if c.Title != "LiveProctor ("+name+")" || c.OIDCInitiationURL != base+"/lti/v1p3/login" || c.TargetLinkURI != launch ||
		c.PublicJWKURL != base+"/lti/v1p3/jwks.json" || c.Scopes == nil || len(c.Scopes) != 0 {
		t.Errorf("configuration %+v", c)
	}
	u, _ := url.Parse(launch)
	if len(c.Extensions) != 1 || c.Extensions[0].Platform != "canvas.instructure.com" || c.Extensions[0].PrivacyLevel != "public" ||
		c.Extensions[0].Domain != u.Hostname() {
		t.Fatalf("extensions %+v", c.Extensions)
	}
	var placements []string
	for _, p := range c.Extensions[0].Settings.Placements {
		if p.MessageType != "LtiDeepLinkingRequest" || p.TargetLinkURI != launch {
			t.Errorf("placement %+v", p)
		}
		placements = append(placements, p.Placement)
	}
	if strings.Join(placements, ",") != "link_selection,assignment_selection" {
		t.Errorf("placements %v", placements)
	}

	root.delete("/api/workspace/" + id).ok(nil)
	for _, p := range []string{path, "/lti/v1p3/workspaces/" + unique(t, "unknown") + "/canvas.json"} {
		anonymous(t).get(p).wantError(http.StatusNotFound, "NOT_FOUND", "")
	}
}
