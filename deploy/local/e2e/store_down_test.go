package e2e

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// With MongoDB unreachable the API answers 503 with Retry-After within the
// request deadline, and recovers by itself once the store is back.
func TestStoreDownIs503ThenRecovers(t *testing.T) {
	root := asRoot(t)
	id := unique(t, "d")
	root.create(id, nil)
	if env.FerretDB == nil {
		t.Fatal("the stack runs no embedded store to stop")
	}
	if err := env.FerretDB.Stop(); err != nil {
		t.Fatal(err)
	}
	restarted := false
	defer func() {
		if !restarted {
			_ = env.FerretDB.Restart(context.Background())
		}
	}()

	// A credential the service has not seen needs the store; so does a read.
	for _, path := range []string{"/api/workspace/" + id, "/api/workspaces"} {
		r := root.get(path)
		r.wantError(http.StatusServiceUnavailable, "UNAVAILABLE", "")
		if s, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || s < 1 {
			t.Fatalf("%s: Retry-After = %q", path, r.header.Get("Retry-After"))
		}
	}

	if err := env.FerretDB.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	restarted = true
	deadline := time.Now().Add(30 * time.Second)
	for {
		r := root.get("/api/workspace/" + id)
		if r.status == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still %d 30s after the store came back: %s", r.status, r.body)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
