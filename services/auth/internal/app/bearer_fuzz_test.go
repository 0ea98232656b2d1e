package app

import (
	"strings"
	"testing"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/auth/internal/domain"
)

// Whatever the caller's Authorization, bearer answers a token or the
// Unauthenticated missing-token error, never another kind; a token is the
// trimmed, non-empty text after a Bearer scheme (in any case), and a
// token as login hands it out comes back unchanged.
func FuzzBearer(f *testing.F) {
	token := string(domain.NewToken())
	for _, seed := range []string{
		"", "Bearer", "Bearer ", "Bearer  ", "Bearer " + token, "bearer " + token, "BEARER  " + token + " ",
		"Basic a2V5OnM=", "Bearer\t" + token, " Bearer " + token, "Bearer a b", "Bearer \xff", "Bearer\x00 x",
	} {
		f.Add(seed)
	}
	if got, err := bearer("Bearer " + token); err != nil || string(got) != token {
		f.Fatalf("bearer(Bearer %s) = %q, %v", token, got, err)
	}
	f.Fuzz(func(t *testing.T, header string) {
		got, err := bearer(header)
		if err != nil {
			if k := fault.KindOf(err); k != fault.Unauthenticated || got != "" {
				t.Fatalf("bearer(%q) = %q, %v (kind %v), want only an Unauthenticated error", header, got, err, k)
			}
			return
		}
		scheme, rest, _ := strings.Cut(header, " ")
		if !strings.EqualFold(scheme, "Bearer") || got == "" || string(got) != strings.TrimSpace(rest) {
			t.Fatalf("bearer(%q) = %q", header, got)
		}
	})
}
