package domain_test

import (
	"strings"
	"testing"

	"github.com/liveproctor/workspaces/pkg/fault"
	portaldomain "github.com/liveproctor/workspaces/services/workspace/internal/portal/domain"
)

func TestCheckReturnURL(t *testing.T) {
	long := "https://vendor.example/" + strings.Repeat("a", portaldomain.MaxReturnURLLength-len("https://vendor.example/"))
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"", true},
		{"https://vendor.example/settings?tab=lti#top", true},
		{"HTTPS://Vendor.Example", true},
		{"http://localhost:3000/back", true},
		{"http://127.0.0.1/back", true},
		{"http://127.8.9.10:8080/", true},
		{"http://[::1]:3000/", true},
		{long, true},
		{long + "a", false},
		{"http://vendor.example/back", false},
		{"http://localhost.vendor.example/", false},
		{"http://[::ffff:10.0.0.1]/", false},
		{"ftp://vendor.example/", false},
		{"javascript:alert(1)", false},
		{"/settings", false},
		{"//vendor.example/settings", false},
		{"https://", false},
		{"https://user:pass@vendor.example/", false},
		{"https://user@vendor.example/", false},
		{"https://vendor.example/\x7f", false},
		{"https://vendor .example/", false},
		{"mailto:it@school.example", false},
	} {
		err := portaldomain.CheckReturnURL(tc.url)
		if tc.ok {
			if err != nil {
				t.Errorf("CheckReturnURL(%q) = %v, want nil", tc.url, err)
			}
			continue
		}
		e, ok := fault.As(err)
		if !ok || e.Kind != fault.Invalid || len(e.Fields) != 1 || e.Fields[0].Field != "returnUrl" {
			t.Errorf("CheckReturnURL(%q) = %v, want Invalid naming returnUrl", tc.url, err)
		}
	}
}
