package reqstate

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestValidRequestID(t *testing.T) {
	for id, want := range map[string]bool{
		"a": true, "A-z_0.9:x": true, strings.Repeat("x", 128): true,
		"": false, strings.Repeat("x", 129): false, "a b": false, "a/b": false, "a\nb": false,
	} {
		if got := validID(id); got != want {
			t.Errorf("validID(%q) = %v", id, got)
		}
	}
}

// The request id a response carries is the caller's when validID
// accepts it and a fresh one otherwise; either way 1 to 128 characters of
// A-Z a-z 0-9 . _ : -, so it is safe to log and to forward as metadata.
func FuzzRequestID(f *testing.F) {
	for _, seed := range []string{
		"", "abc", "5f0c-1.2_3:4", strings.Repeat("a", 128), strings.Repeat("a", 129), "a b", "a\nb", "é", "\xff", "a/b", "a%20b",
	} {
		f.Add(seed)
	}
	handler := WithID(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Seen", ID(r.Context()))
	}))
	f.Fuzz(func(t *testing.T, id string) {
		req := httptest.NewRequest(http.MethodGet, "/api/workspaces", nil)
		req.Header[IDHeader] = []string{id}
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		got := rec.Header().Get(IDHeader)
		if seen := rec.Header().Get("X-Seen"); seen != got {
			t.Fatalf("the response says %q, the request's state %q", got, seen)
		}
		if !safeRequestID(got) {
			t.Fatalf("the caller's %q gave the request id %q", id, got)
		}
		if kept := got == id; kept != validID(id) || kept != safeRequestID(id) {
			t.Fatalf("the caller's %q: kept = %v, valid = %v", id, kept, validID(id))
		}
	})
}

// safeRequestID states the request id rule on its own terms.
func safeRequestID(id string) bool {
	return len(id) >= 1 && len(id) <= 128 && strings.Trim(id,
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-") == ""
}
