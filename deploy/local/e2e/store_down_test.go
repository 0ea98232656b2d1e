package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/testenv"
)

// With MongoDB unreachable the API answers 503 with Retry-After within the
// request deadline, and recovers by itself once the store is back. The
// test stops the store, so it runs on a stack of its own.
func TestStoreDownIs503ThenRecovers(t *testing.T) {
	s := startOwnStack(t)
	root := asRoot(t).on(s)
	id := unique(t, "d")
	root.create(id, nil)
	if err := s.FerretDB.Stop(); err != nil {
		t.Fatal(err)
	}

	// A credential the service has not seen needs the store; so does a read.
	for _, path := range []string{"/api/workspace/" + id, "/api/workspaces"} {
		r := root.get(path)
		r.wantError(http.StatusServiceUnavailable, "UNAVAILABLE", "")
		if s, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || s < 1 {
			t.Fatalf("%s: Retry-After = %q", path, r.header.Get("Retry-After"))
		}
	}

	if err := s.FerretDB.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		if r := root.get("/api/workspace/" + id); r.status != http.StatusOK {
			return fmt.Errorf("%d %s", r.status, r.body)
		}
		return nil
	}, "the API answers once the store is back")
}
