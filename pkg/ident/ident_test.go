package ident_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/liveproctor/workspaces/pkg/ident"
)

func TestValidWorkspaceID(t *testing.T) {
	for _, id := range []string{"a", "district-1", "A.b_C-9", strings.Repeat("x", 128)} {
		if !ident.ValidWorkspaceID(id) {
			t.Errorf("%q refused", id)
		}
	}
	for _, id := range []string{"", "a:b", "a b", "é", strings.Repeat("x", 129)} {
		if ident.ValidWorkspaceID(id) {
			t.Errorf("%q accepted", id)
		}
	}
}

func TestNewUUID(t *testing.T) {
	v4 := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	a, b := ident.NewUUID(), ident.NewUUID()
	if !v4.MatchString(a) || a == b {
		t.Fatalf("%q %q", a, b)
	}
}

func TestSecrets(t *testing.T) {
	a, b := ident.NewSecret(), ident.NewSecret()
	if a == b || !ident.IsSecret(a) || len(a) != 43 || strings.ContainsAny(a, "+/=") {
		t.Fatalf("secrets %q, %q", a, b)
	}
	for _, s := range []string{"", a[:42], a + "A", strings.Replace(a, a[:1], "+", 1), "../../" + a[6:]} {
		if ident.IsSecret(s) {
			t.Errorf("IsSecret(%q) = true", s)
		}
	}
}
