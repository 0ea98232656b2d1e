package domain_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/ident"
	portaldomain "github.com/liveproctor/workspaces/services/workspace/internal/portal/domain"
)

var (
	made   = time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	cutoff = time.Date(2026, 10, 1, 8, 0, 0, 0, time.UTC)
)

func newLink(t *testing.T) portaldomain.Link {
	t.Helper()
	l, err := portaldomain.NewLink("0f8e2c1a-3b4d-4e5f-8a9b-0c1d2e3f4a5b", "school", "https://vendor.example/", cutoff, made)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestNewLinkLivesFiveMinutesAndIsRememberedForItsHour(t *testing.T) {
	l := newLink(t)
	if !l.ExpiresAt.Equal(made.Add(5*time.Minute)) || l.Opened() || l.Revoked() {
		t.Fatalf("new link %+v", l)
	}
	if !l.ForgetAt().Equal(made.Add(65 * time.Minute)) {
		t.Errorf("an unopened link is forgotten at %v, want when a session opened at its last moment would end", l.ForgetAt())
	}
	if _, err := portaldomain.NewLink("id", "school", "http://vendor.example/", cutoff, made); fault.KindOf(err) != fault.Invalid {
		t.Errorf("NewLink with an http returnUrl: %v, want Invalid", err)
	}
}

func TestOpenOnceBeforeExpiry(t *testing.T) {
	token := ident.NewSecret()
	l := newLink(t)
	opened := made.Add(4 * time.Minute)
	if err := l.Open(portaldomain.Digest(token), opened); err != nil {
		t.Fatal(err)
	}
	if !l.Opened() || !l.SessionEnd().Equal(opened.Add(time.Hour)) || !l.ForgetAt().Equal(l.SessionEnd()) {
		t.Fatalf("opened link %+v", l)
	}
	if err := l.Open(portaldomain.Digest(ident.NewSecret()), opened); !errors.Is(err, portaldomain.ErrLinkUnusable) {
		t.Errorf("a second opening: %v, want ErrLinkUnusable", err)
	}
	late := newLink(t)
	if err := late.Open(portaldomain.Digest(token), late.ExpiresAt); !errors.Is(err, portaldomain.ErrLinkUnusable) {
		t.Errorf("an opening at the expiry: %v, want ErrLinkUnusable", err)
	}
	revoked := newLink(t)
	revoked.Revoke(made)
	if err := revoked.Open(portaldomain.Digest(token), made); !errors.Is(err, portaldomain.ErrLinkUnusable) {
		t.Errorf("opening a revoked link: %v, want ErrLinkUnusable", err)
	}
}

func TestSessionAdmitsItsTokenUntilItsEndOrRevocation(t *testing.T) {
	token := ident.NewSecret()
	l := newLink(t)
	if l.Admits(portaldomain.Digest(token), made) {
		t.Fatal("an unopened link admits a session")
	}
	if err := l.Open(portaldomain.Digest(token), made); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		digest string
		at     time.Time
		want   bool
	}{
		{"its token", portaldomain.Digest(token), made.Add(59 * time.Minute), true},
		{"another token", portaldomain.Digest(ident.NewSecret()), made, false},
		{"no token", "", made, false},
		{"at its end", portaldomain.Digest(token), made.Add(time.Hour), false},
	} {
		if got := l.Admits(tc.digest, tc.at); got != tc.want {
			t.Errorf("%s: Admits = %v, want %v", tc.name, got, tc.want)
		}
	}
	if !l.Revoke(made.Add(time.Minute)) || l.Revoke(made.Add(2*time.Minute)) {
		t.Fatal("Revoke does not report the first revocation only")
	}
	if !l.RevokedAt.Equal(made.Add(time.Minute)) || l.Admits(portaldomain.Digest(token), made.Add(time.Minute)) {
		t.Errorf("revoked link %+v still admits its session", l)
	}
}

// A delete, and an undelete, move the workspace's token cut-off: the
// link and its session no longer stand for the workspace.
func TestLinkIsCurrentWhileItsWorkspaceWasNeitherDeletedNorUndeleted(t *testing.T) {
	l := newLink(t)
	for _, tc := range []struct {
		name   string
		active bool
		cutoff time.Time
		want   bool
	}{
		{"unchanged", true, cutoff, true},
		{"deleted", false, made.Add(time.Minute), false},
		{"deleted and undeleted", true, made.Add(2 * time.Minute), false},
	} {
		if got := l.Current(tc.active, tc.cutoff); got != tc.want {
			t.Errorf("%s: Current = %v, want %v", tc.name, got, tc.want)
		}
	}
}

// What is kept of a secret, and the link made of it.
func TestDigestAndURL(t *testing.T) {
	a := ident.NewSecret()
	if d := portaldomain.Digest(a); len(d) != 64 || strings.Contains(d, a) {
		t.Errorf("Digest = %q", d)
	}
	if got := portaldomain.OpenURL("https://proctor.example/", a); got != "https://proctor.example/portal/open/"+a {
		t.Errorf("OpenURL = %q", got)
	}
	for id, want := range map[string]bool{
		"0f8e2c1a-3b4d-4e5f-8a9b-0c1d2e3f4a5b": true, "0F8E2C1A-3B4D-4E5F-8A9B-0C1D2E3F4A5B": true,
		"": false, "0f8e2c1a3b4d4e5f8a9b0c1d2e3f4a5b": false, "0f8e2c1a-3b4d-4e5f-8a9b-0c1d2e3f4a5g": false,
		"0f8e2c1a-3b4d-4e5f-8a9b-0c1d2e3f4a5b0": false,
	} {
		if portaldomain.IsLinkID(id) != want {
			t.Errorf("IsLinkID(%q) = %v", id, !want)
		}
	}
}
