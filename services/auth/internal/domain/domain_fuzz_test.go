package domain_test

import (
	"encoding/base64"
	"net/mail"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/ident"
	"github.com/liveproctor/workspaces/services/auth/internal/domain"
)

// A token Valid accepts is the one text of 32 bytes in standard Base64, so
// one token has one digest; and every token NewToken makes is valid.
func FuzzTokenValid(f *testing.F) {
	for _, seed := range []string{
		"", "x", string(domain.NewToken()), string(domain.NewToken()) + "=", " " + string(domain.NewToken()),
		strings.Repeat("A", 43) + "=", strings.Repeat("A", 42) + "B=", strings.Repeat("A", 44),
		strings.Repeat("_", 43) + "=", strings.Repeat("A", 43), strings.Repeat("A", 20) + "\n" + strings.Repeat("A", 23) + "=",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if !domain.NewToken().Valid() {
			t.Fatal("NewToken made an invalid token")
		}
		if !domain.Token(text).Valid() {
			return
		}
		b, err := base64.StdEncoding.DecodeString(text)
		if err != nil || len(b) != 32 {
			t.Fatalf("Valid accepted %q, which is not 32 bytes in Base64 (%d bytes, %v)", text, len(b), err)
		}
		if canonical := base64.StdEncoding.EncodeToString(b); text != canonical {
			t.Fatalf("Valid accepted %q, another text of the token %q", text, canonical)
		}
	})
}

// CheckLogin answers nil or an Invalid error naming email and workspaceId,
// each at most once and in that order, exactly when the field breaks its
// rule; an accepted email is one plain address of at most 254 bytes.
func FuzzCheckLogin(f *testing.F) {
	for _, seed := range [][2]string{
		{"ada@example.com", "district-1"}, {"", ""}, {"Ada <ada@example.com>", "w"}, {"ada@example.com, bob@example.com", "w"},
		{"ada.example.com", "w"}, {strings.Repeat("a", 243) + "@example.com", "w"}, {"ada@example.com", "a:b"},
		{`"a b"@example.com`, "w"}, {"ada@[127.0.0.1]", "w"}, {"ada@example.com (comment)", "w"}, {"ada@\xff", "w"},
		{"ad\x00a@example.com", "w"}, {"é@example.com", "w"}, {" ada@example.com", "w"}, {"<ada@example.com>", "w"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, email, workspaceID string) {
		err := domain.CheckLogin(email, workspaceID)
		var named []string
		if err != nil {
			e, ok := fault.As(err)
			if !ok || e.Kind != fault.Invalid || len(e.Fields) == 0 {
				t.Fatalf("CheckLogin(%q, %q) = %v, want an Invalid error naming fields", email, workspaceID, err)
			}
			for _, v := range e.Fields {
				named = append(named, v.Field)
				if len(v.Description) > 200 {
					t.Errorf("the description of %s is %d bytes long", v.Field, len(v.Description))
				}
			}
		}
		emailBad := slices.Contains(named, "email")
		idBad := slices.Contains(named, "workspaceId")
		if want := []string(nil); emailBad || idBad {
			if emailBad {
				want = append(want, "email")
			}
			if idBad {
				want = append(want, "workspaceId")
			}
			if !slices.Equal(named, want) {
				t.Fatalf("CheckLogin(%q, %q) names %q", email, workspaceID, named)
			}
		}
		if idBad == ident.ValidWorkspaceID(workspaceID) {
			t.Fatalf("CheckLogin(%q, %q): workspaceId refused = %v, the id rule says valid = %v", email, workspaceID, idBad, !idBad)
		}
		if emailBad {
			return
		}
		addr, perr := mail.ParseAddress(email)
		if perr != nil || addr.Name != "" || addr.Address != email || len(email) > 254 || !strings.Contains(email, "@") {
			t.Fatalf("CheckLogin accepted the email %q", email)
		}
		if !utf8.ValidString(email) || strings.IndexFunc(email, unicode.IsControl) >= 0 {
			t.Fatalf("CheckLogin accepted the email %q, which holds control characters or invalid UTF-8", email)
		}
	})
}
