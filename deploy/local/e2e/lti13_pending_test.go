package e2e

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// With LTI13_PENDING_LOGINS_MAX=20, the 21st login initiation still
// pending is refused with a 503 page and a Retry-After within the state's
// ten minutes, with no state cookie and no login stored; SDK logins are not held back; a launch
// frees its login's place at once.
func TestLTI13PendingLoginsAreCapped(t *testing.T) {
	const max = 20
	p, s, workspaceID, clients := setUpLTI13(t, "LTI13_PENDING_LOGINS_MAX="+strconv.Itoa(max))
	launches := clients[0]
	withExam := launchOverrides{Claims: map[string]any{customClaim: map[string]any{"exam_config_id": "7c9e6679-7425-40de-944b-e07fc1f90ae7"}}}
	initiate := func() (int, http.Header, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, p.withT(t).Login(launches.clientID, "dep-1").URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		return browse(t, req)
	}
	refused := func() {
		t.Helper()
		status, header, page := initiate()
		retry, err := strconv.Atoi(header.Get("Retry-After"))
		if status != http.StatusServiceUnavailable || err != nil || retry < 1 || retry > 610 ||
			!strings.Contains(page, "unavailable for a moment") || len(header.Values("Set-Cookie")) != 0 {
			t.Fatalf("a login initiation past the cap: %d %v, want 503 with Retry-After up to 610 s:\n%s", status, header, page)
		}
	}

	alice := newLaunchBrowser(t)
	action, form := launches.start(alice, withExam)
	for i := range max - 1 {
		if status, _, page := initiate(); status != http.StatusFound {
			t.Fatalf("login initiation %d of %d: %d\n%s", i+2, max, status, page)
		}
	}
	refused()
	rdb := redis.NewClient(&redis.Options{Addr: s.RedisAddr})
	defer rdb.Close()
	if keys, err := rdb.Keys(context.Background(), "lti13:login:*").Result(); err != nil || len(keys) != max {
		t.Fatalf("%d logins stored (%v), want the %d accepted only", len(keys), err, max)
	}
	sdk := asRoot(t).on(s)
	for range 3 {
		sdk.login("ada@school.example", workspaceID)
	}
	refused()

	if status, page := alice.post(action, form); status != http.StatusOK {
		t.Fatalf("the launch of a pending login: %d\n%s", status, page)
	}
	if status, _, page := initiate(); status != http.StatusFound {
		t.Fatalf("a login initiation once a launch freed a place: %d\n%s", status, page)
	}
	refused()
}
