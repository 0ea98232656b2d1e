package main

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"time"

	"github.com/redis/go-redis/v9"
)

// tokenTTL is the life of a token, as in the auth service.
const tokenTTL = 8 * time.Hour

// loginHandler issues tokens for the one key pair it knows.
type loginHandler struct {
	rdb         *redis.Client
	key, secret []byte
}

type loginRequest struct {
	Email       string `json:"email"`
	WorkspaceID string `json:"workspaceId"`
}

type session struct {
	Email       string    `json:"email"`
	WorkspaceID string    `json:"workspaceId"`
	ExpiresAt   time.Time `json:"expiresAt"`
}

type loginResponse struct {
	Auth      string `json:"auth"`
	ExpiresAt string `json:"expiresAt"`
}

func (h *loginHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Basic realm="workspaces"`)
		http.Error(w, `{"error":"unauthenticated"}`, http.StatusUnauthorized)
		return
	}
	var req loginRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil || req.Email == "" || req.WorkspaceID == "" {
		http.Error(w, `{"error":"invalid argument"}`, http.StatusBadRequest)
		return
	}

	raw := make([]byte, 32)
	_, _ = rand.Read(raw) // never fails (crypto/rand panics on a broken source)
	token := base64.StdEncoding.EncodeToString(raw)
	digest := sha256.Sum256([]byte(token))
	expires := time.Now().Add(tokenTTL).UTC()
	value, err := json.Marshal(session{Email: req.Email, WorkspaceID: req.WorkspaceID, ExpiresAt: expires})
	if err != nil {
		http.Error(w, `{"error":"internal"}`, http.StatusInternalServerError)
		return
	}
	if err := h.rdb.Set(r.Context(), hex.EncodeToString(digest[:]), value, tokenTTL).Err(); err != nil {
		w.Header().Set("Retry-After", "1")
		http.Error(w, `{"error":"unavailable"}`, http.StatusServiceUnavailable)
		return
	}

	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(loginResponse{Auth: token, ExpiresAt: expires.Format("2006-01-02T15:04:05.000Z")})
}

// authorized compares the request's Basic credentials with the configured
// pair in constant time (both halves are always compared).
func (h *loginHandler) authorized(r *http.Request) bool {
	key, secret, ok := r.BasicAuth()
	if !ok {
		return false
	}
	k := subtle.ConstantTimeCompare([]byte(key), h.key)
	s := subtle.ConstantTimeCompare([]byte(secret), h.secret)
	return k&s == 1
}
