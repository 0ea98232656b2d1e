package server

import (
	"net/http"
	"strings"

	"github.com/liveproctor/workspaces/gateway/internal/config"
	"github.com/liveproctor/workspaces/gateway/internal/httperr"
	"github.com/liveproctor/workspaces/gateway/internal/sdk"
	"github.com/liveproctor/workspaces/pkg/fault"
)

// CORS answers for sdk.SessionPath, the one route that pages on other
// origins call. The token travels in the Authorization header, never in
// cookies, so there is no Allow-Credentials.
const (
	corsAllowHeaders  = "Authorization, Content-Type, X-Request-Id"
	corsAllowMethods  = "GET, DELETE, OPTIONS"
	corsExposeHeaders = "X-Request-Id"
	corsMaxAge        = "600"
)

// maxOriginLen bounds an Origin header worth echoing.
const maxOriginLen = 512

// corsPolicy says which origins may call sdk.SessionPath.
type corsPolicy struct {
	any     bool
	origins map[string]bool
}

// newCORSPolicy builds a policy from config.Config.CORSAllowedOrigins. An
// empty list allows no origin.
func newCORSPolicy(origins []string) corsPolicy {
	p := corsPolicy{origins: map[string]bool{}}
	for _, o := range origins {
		if o == config.AnyOrigin {
			p.any = true
			continue
		}
		p.origins[strings.ToLower(strings.TrimSuffix(o, "/"))] = true
	}
	return p
}

// allows reports whether a page on origin may read the route's answers.
func (p corsPolicy) allows(origin string) bool {
	if len(origin) > maxOriginLen {
		return false
	}
	for i := 0; i < len(origin); i++ {
		if c := origin[i]; c <= ' ' || c >= 0x7f {
			return false
		}
	}
	return p.any || p.origins[strings.ToLower(origin)]
}

// withCORS adds CORS headers to sdk.SessionPath's answers for allowed origins
// and answers their preflight requests itself (204) without calling the
// backend. A disallowed origin gets no CORS headers, so its page cannot read
// the answer, and its preflight gets 403. Other paths are untouched.
func withCORS(p corsPolicy, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != sdk.SessionPath {
			next.ServeHTTP(w, r)
			return
		}
		h := w.Header()
		// The answer depends on Origin whatever the policy; caches must
		// keep one copy per origin.
		h.Add("Vary", "Origin")
		origin := r.Header.Get("Origin")
		if origin == "" {
			// Not a cross-origin browser request.
			next.ServeHTTP(w, r)
			return
		}
		if !p.allows(origin) {
			if r.Method == http.MethodOptions {
				httperr.Write(w, r, fault.PermissionDenied, "cross-origin requests from this origin are not allowed")
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
		h.Set("Access-Control-Allow-Methods", corsAllowMethods)
		h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
		h.Set("Access-Control-Max-Age", corsMaxAge)
		if r.Method == http.MethodOptions {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}
