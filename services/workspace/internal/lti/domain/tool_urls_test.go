package domain

import (
	"strings"
	"testing"
)

func TestLTIURLsShareOneBase(t *testing.T) {
	for _, tc := range []struct {
		base, id                 string
		config, launch, hostName string
	}{
		{"https://lti.example.com", "district-1",
			"https://lti.example.com/lti/v1/workspaces/district-1/config.xml", "https://lti.example.com/lti/v1/launch", "lti.example.com"},
		{"https://lti.example.com:8443/", "a.b_c-d",
			"https://lti.example.com:8443/lti/v1/workspaces/a.b_c-d/config.xml", "https://lti.example.com:8443/lti/v1/launch", "lti.example.com"},
		{"http://127.0.0.1:8080", "x",
			"http://127.0.0.1:8080/lti/v1/workspaces/x/config.xml", "http://127.0.0.1:8080/lti/v1/launch", "127.0.0.1"},
	} {
		urls := NewToolURLs(tc.base)
		if got := urls.LTI11Configuration(tc.id); got != tc.config {
			t.Errorf("%s: configuration URL %q, want %q", tc.base, got, tc.config)
		}
		if got, want := urls.CanvasConfiguration(tc.id), strings.Replace(tc.config, "/lti/v1/", "/lti/v1p3/", 1); got != strings.TrimSuffix(want, "config.xml")+"canvas.json" {
			t.Errorf("%s: Canvas JSON URL %q", tc.base, got)
		}
		if got := urls.LTI11Launch(); got != tc.launch {
			t.Errorf("%s: launch URL %q, want %q", tc.base, got, tc.launch)
		}
		if got := urls.Domain(); got != tc.hostName {
			t.Errorf("%s: host name %q, want %q", tc.base, got, tc.hostName)
		}
	}
}
