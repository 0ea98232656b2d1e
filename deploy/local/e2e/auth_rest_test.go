package e2e

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/testenv"
)

// sdkToken is the login route's answer.
type sdkToken struct {
	Auth      string `json:"auth"`
	ExpiresAt string `json:"expiresAt"`
}

// sdkSession is the session route's answer.
type sdkSession struct {
	Email       string `json:"email"`
	WorkspaceID string `json:"workspaceId"`
	ExpiresAt   string `json:"expiresAt"`
}

func (c client) login(email, workspaceID string) sdkToken {
	c.t.Helper()
	var tok sdkToken
	c.post("/api/login/sdk", map[string]any{"email": email, "workspaceId": workspaceID}).ok(&tok)
	return tok
}

// session calls GET /api/sdk/session with the token as Bearer.
func session(t *testing.T, token string) *response {
	t.Helper()
	return anonymous(t).do(http.MethodGet, "/api/sdk/session", nil, "Authorization", "Bearer "+token)
}

func wantLive(t *testing.T, token, email, workspaceID string) {
	t.Helper()
	var s sdkSession
	session(t, token).ok(&s)
	if s.Email != email || s.WorkspaceID != workspaceID || !timePattern.MatchString(s.ExpiresAt) {
		t.Fatalf("session %+v, want %s in %s", s, email, workspaceID)
	}
}

func wantDead(t *testing.T, token string) {
	t.Helper()
	session(t, token).wantError(http.StatusUnauthorized, "UNAUTHENTICATED", "")
}

func TestLoginIssuesEightHourTokens(t *testing.T) {
	d := asRoot(t).create(unique(t, "d"), nil)
	before := time.Now()
	first := d.server(t).login("ada@example.com", d.WorkspaceID)
	second := d.server(t).login("ada@example.com", d.WorkspaceID)
	if first.Auth == second.Auth {
		t.Fatal("two logins gave one token")
	}
	raw, err := base64.StdEncoding.DecodeString(first.Auth)
	if err != nil || len(raw) != 32 {
		t.Fatalf("auth %q is not 32 bytes of standard Base64", first.Auth)
	}
	expires, err := time.Parse(time.RFC3339, first.ExpiresAt)
	if err != nil {
		t.Fatal(err)
	}
	if life := expires.Sub(before); life < 8*time.Hour-time.Minute || life > 8*time.Hour+time.Minute {
		t.Fatalf("token lives %s, want 8h", life)
	}
	wantLive(t, first.Auth, "ada@example.com", d.WorkspaceID)
	wantLive(t, second.Auth, "ada@example.com", d.WorkspaceID)

	// A manager may log users in too.
	wantLive(t, asRoot(t).login("bob@example.com", d.WorkspaceID).Auth, "bob@example.com", d.WorkspaceID)

	r := session(t, base64.StdEncoding.EncodeToString(make([]byte, 32)))
	r.wantError(http.StatusUnauthorized, "UNAUTHENTICATED", "")
	if got := r.header.Get("WWW-Authenticate"); got != `Bearer realm="workspaces"` {
		t.Errorf("WWW-Authenticate on the session route = %q", got)
	}
	wantDead(t, "not-a-token")
	anonymous(t).get("/api/sdk/session").wantError(http.StatusUnauthorized, "UNAUTHENTICATED", "")
}

func TestLoginRefusals(t *testing.T) {
	root := asRoot(t)
	a := root.create(unique(t, "a"), nil)
	b := root.create(unique(t, "b"), nil)
	asA := a.server(t)

	asA.post("/api/login/sdk", map[string]any{"email": "Ada <ada@example.com>", "workspaceId": a.WorkspaceID}).
		wantError(http.StatusBadRequest, "INVALID_ARGUMENT", "email")
	asA.post("/api/login/sdk", map[string]any{"email": "ada@example.com"}).
		wantError(http.StatusBadRequest, "INVALID_ARGUMENT", "workspaceId")
	asA.post("/api/login/sdk", `{"email":"ada@example.com","workspaceId":"x","extra":1}`).
		wantError(http.StatusBadRequest, "INVALID_ARGUMENT", "extra")
	asA.post("/api/login/sdk", map[string]any{"email": "ada@example.com", "workspaceId": "no-such-workspace"}).
		wantError(http.StatusNotFound, "NOT_FOUND", "")
	asA.post("/api/login/sdk", map[string]any{"email": "ada@example.com", "workspaceId": b.WorkspaceID}).
		wantError(http.StatusNotFound, "NOT_FOUND", "")
	r := anonymous(t).post("/api/login/sdk", map[string]any{"email": "ada@example.com", "workspaceId": a.WorkspaceID})
	r.wantError(http.StatusUnauthorized, "UNAUTHENTICATED", "")
	if r.header.Get("WWW-Authenticate") == "" {
		t.Error("401 without WWW-Authenticate")
	}
	as(t, a.AppKeys.LTI.ConsumerKey, a.AppKeys.LTI.SharedSecret).
		post("/api/login/sdk", map[string]any{"email": "ada@example.com", "workspaceId": a.WorkspaceID}).
		wantError(http.StatusForbidden, "PERMISSION_DENIED", "")
}

func TestLogoutAndEndingASession(t *testing.T) {
	d := asRoot(t).create(unique(t, "d"), nil)
	asD := d.server(t)
	ada1 := asD.login("ada@example.com", d.WorkspaceID).Auth
	ada2 := asD.login("ada@example.com", d.WorkspaceID).Auth
	bob := asD.login("bob@example.com", d.WorkspaceID).Auth

	// DELETE /api/sdk/session ends that token only.
	anonymous(t).do(http.MethodDelete, "/api/sdk/session", nil, "Authorization", "Bearer "+ada1).ok(nil)
	wantDead(t, ada1)
	wantLive(t, ada2, "ada@example.com", d.WorkspaceID)

	// Logout ends every token of the user in the workspace.
	asD.post("/api/logout/sdk", map[string]any{"email": "ada@example.com", "workspaceId": d.WorkspaceID}).ok(nil)
	wantDead(t, ada2)
	wantLive(t, bob, "bob@example.com", d.WorkspaceID)
	// A token issued after the logout works.
	wantLive(t, asD.login("ada@example.com", d.WorkspaceID).Auth, "ada@example.com", d.WorkspaceID)

	other := asRoot(t).create(unique(t, "other"), nil)
	other.server(t).post("/api/logout/sdk", map[string]any{"email": "bob@example.com", "workspaceId": d.WorkspaceID}).
		wantError(http.StatusNotFound, "NOT_FOUND", "")
	wantLive(t, bob, "bob@example.com", d.WorkspaceID)
}

func TestDeletingAWorkspaceEndsItsSessions(t *testing.T) {
	root := asRoot(t)
	d := root.create(unique(t, "d"), nil)
	token := root.login("ada@example.com", d.WorkspaceID).Auth
	wantLive(t, token, "ada@example.com", d.WorkspaceID)

	root.delete("/api/workspace/" + d.WorkspaceID).ok(nil)
	wantDead(t, token)
	root.post("/api/login/sdk", map[string]any{"email": "ada@example.com", "workspaceId": d.WorkspaceID}).
		wantError(http.StatusNotFound, "NOT_FOUND", "")

	root.post("/api/workspace/"+d.WorkspaceID+":undelete", nil).ok(nil)
	undeleted := time.Now() // not before the undelete's cut-off: one clock
	wantDead(t, token)      // revoked for good
	// The cut-off counts in milliseconds, and a token issued in its
	// millisecond is cut off: log in once the clock has left it.
	testenv.Eventually(t, 5*time.Second, func() error {
		if time.Now().UnixMilli() <= undeleted.UnixMilli() {
			return errors.New("still the undelete's millisecond")
		}
		return nil
	}, "the clock moves past the undelete")
	wantLive(t, root.login("ada@example.com", d.WorkspaceID).Auth, "ada@example.com", d.WorkspaceID)
}

// With Redis stopped, logins answer 503 with Retry-After and sessions fail
// closed; with Redis back, both work again without a restart. The test
// stops Redis, so it runs on a stack of its own.
func TestRedisDownFailsClosedThenRecovers(t *testing.T) {
	s := startOwnStack(t)
	root := asRoot(t).on(s)
	d := root.create(unique(t, "d"), nil)
	token := root.login("ada@example.com", d.WorkspaceID).Auth
	if err := s.Redis.Stop(); err != nil {
		t.Fatal(err)
	}

	r := root.post("/api/login/sdk", map[string]any{"email": "ada@example.com", "workspaceId": d.WorkspaceID})
	r.wantError(http.StatusServiceUnavailable, "UNAVAILABLE", "")
	if s, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || s < 1 {
		t.Fatalf("Retry-After = %q", r.header.Get("Retry-After"))
	}
	check := anonymous(t).on(s).do(http.MethodGet, "/api/sdk/session", nil, "Authorization", "Bearer "+token)
	if check.status == http.StatusOK {
		t.Fatalf("session check with Redis down answered 200: %s", check.body)
	} else if check.status != http.StatusServiceUnavailable && check.status != http.StatusUnauthorized {
		t.Fatalf("session check with Redis down: %d %s", check.status, check.body)
	}

	if err := s.Redis.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		r := root.post("/api/login/sdk", map[string]any{"email": "ada@example.com", "workspaceId": d.WorkspaceID})
		if r.status != http.StatusOK {
			return fmt.Errorf("%d %s", r.status, r.body)
		}
		return nil
	}, "logins work once Redis is back")
}
