package domain_test

import (
	"strings"
	"testing"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/auth/internal/domain"
)

func TestCheckLogin(t *testing.T) {
	cases := []struct {
		name, email, workspaceID, badField string
	}{
		{"good", "ada@example.com", "district-1", ""},
		{"good with plus and subdomain", "ada+test@mail.example.org", "a.b_c-1", ""},
		{"missing email", "", "w", "email"},
		{"display name", "Ada <ada@example.com>", "w", "email"},
		{"two addresses", "ada@example.com, bob@example.com", "w", "email"},
		{"no at", "ada.example.com", "w", "email"},
		{"too long", strings.Repeat("a", 245) + "@example.com", "w", "email"},
		{"C1 control character", "\u009c@example.com", "w", "email"},
		{"line break", "ada@example.com\n", "w", "email"},
		{"missing workspace", "ada@example.com", "", "workspaceId"},
		{"bad workspace", "ada@example.com", "a:b", "workspaceId"},
		{"long workspace", "ada@example.com", strings.Repeat("w", 129), "workspaceId"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := domain.CheckLogin(c.email, c.workspaceID)
			if c.badField == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			e, ok := fault.As(err)
			if !ok || e.Kind != fault.Invalid || len(e.Fields) != 1 || e.Fields[0].Field != c.badField {
				t.Fatalf("error %v, want one violation of %s", err, c.badField)
			}
		})
	}
}

func TestTokens(t *testing.T) {
	a, b := domain.NewToken(), domain.NewToken()
	if a == b || !a.Valid() || len(a) != 44 {
		t.Fatalf("tokens %q %q", a, b)
	}
	if a.Digest() == b.Digest() || a.Digest() != a.Digest() {
		t.Fatal("digests do not identify tokens")
	}
	for _, bad := range []domain.Token{"", "short", domain.Token(strings.Repeat("A", 43) + "-"), a + "AAAA",
		// The decoder skips line breaks; a token has one text all the same.
		a[:20] + "\n" + a[20:], a[:20] + "\r\n" + a[20:]} {
		if bad.Valid() {
			t.Errorf("%q passes as a token", bad)
		}
	}
}
