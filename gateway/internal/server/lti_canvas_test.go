package server_test

import (
	"net/http"
	"strings"
	"testing"
)

// The Canvas developer-key JSON, exactly: Canvas reads these names.
const canvasW1 = `{
  "title": "LiveProctor (Springfield District)",
  "description": "LiveProctor for Springfield District",
  "oidc_initiation_url": "https://lti.example.com:8443/lti/v1p3/login",
  "target_link_uri": "https://lti.example.com:8443/lti/v1p3/launch",
  "public_jwk_url": "https://lti.example.com:8443/lti/v1p3/jwks.json",
  "scopes": [],
  "extensions": [
    {
      "platform": "canvas.instructure.com",
      "privacy_level": "public",
      "domain": "lti.example.com",
      "tool_id": "liveproctor",
      "settings": {
        "text": "LiveProctor (Springfield District)",
        "placements": [
          {
            "placement": "link_selection",
            "message_type": "LtiDeepLinkingRequest",
            "target_link_uri": "https://lti.example.com:8443/lti/v1p3/launch",
            "text": "LiveProctor (Springfield District)",
            "enabled": true
          },
          {
            "placement": "assignment_selection",
            "message_type": "LtiDeepLinkingRequest",
            "target_link_uri": "https://lti.example.com:8443/lti/v1p3/launch",
            "text": "LiveProctor (Springfield District)",
            "enabled": true
          }
        ]
      }
    }
  ]
}
`

func TestCanvasConfigurationJSON(t *testing.T) {
	e := newEnv(t, options{})
	resp, body := e.do(t, http.MethodGet, "/lti/v1p3/workspaces/w1/canvas.json", nil, map[string]string{"X-Request-Id": "canvas-1", "Authorization": "Basic eDp5"})
	if resp.StatusCode != http.StatusOK || string(body) != canvasW1 {
		t.Fatalf("%d\n%s\nwant\n%s", resp.StatusCode, body, canvasW1)
	}
	if ct, cc := resp.Header.Get("Content-Type"), resp.Header.Get("Cache-Control"); ct != "application/json" || cc != "public, max-age=300" {
		t.Errorf("Content-Type %q, Cache-Control %q", ct, cc)
	}
	if md, _ := e.workspaces.received(); len(md.Get("x-request-id")) != 1 || len(md.Get("authorization")) != 0 {
		t.Errorf("the service received metadata %v", md)
	}
	// JSON escapes a name's markup; nothing of it is read as HTML.
	_, body = e.do(t, http.MethodGet, "/lti/v1p3/workspaces/quotes/canvas.json", nil, nil)
	if !strings.Contains(string(body), `"title": "LiveProctor (A \u003cb\u003e \u0026 \"c\" 'd' ]]\u003e)"`) {
		t.Errorf("the name's escaping:\n%s", body)
	}
}

func TestCanvasConfigurationErrors(t *testing.T) {
	e := newEnv(t, options{})
	resp, body := e.do(t, http.MethodGet, "/lti/v1p3/workspaces/unknown/canvas.json", nil, nil)
	if p := checkError(t, resp, body, 404, "NOT_FOUND"); !strings.Contains(p.GetMessage(), `workspace "unknown" not found`) {
		t.Errorf("message %q", p.GetMessage())
	}
	resp, body = e.do(t, http.MethodPost, "/lti/v1p3/workspaces/w1/canvas.json", nil, nil)
	checkError(t, resp, body, 405, "UNIMPLEMENTED")
	resp, body = e.do(t, http.MethodGet, "/lti/v1p3/workspaces/w1/canvas.json?x=1", nil, nil)
	checkError(t, resp, body, 400, "INVALID_ARGUMENT")

	down := newEnv(t, options{workspaceDown: true})
	resp, body = down.do(t, http.MethodGet, "/lti/v1p3/workspaces/w1/canvas.json", nil, nil)
	checkError(t, resp, body, 503, "UNAVAILABLE")
}
