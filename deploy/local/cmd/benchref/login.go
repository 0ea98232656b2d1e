package main

import (
	"encoding/json"
	"errors"
	"net/http"

	"github.com/liveproctor/workspaces/deploy/local/benchlogin"
)

// loginHandler issues tokens for the one key pair it knows.
type loginHandler struct {
	issuer *benchlogin.Issuer
}

type loginRequest struct {
	Email       string `json:"email"`
	WorkspaceID string `json:"workspaceId"`
}

type loginResponse struct {
	Auth      string `json:"auth"`
	ExpiresAt string `json:"expiresAt"`
}

func (h *loginHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.issuer.Authorized(r.BasicAuth()) {
		w.Header().Set("WWW-Authenticate", `Basic realm="workspaces"`)
		http.Error(w, `{"error":"unauthenticated"}`, http.StatusUnauthorized)
		return
	}
	var req loginRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil || req.Email == "" || req.WorkspaceID == "" {
		http.Error(w, `{"error":"invalid argument"}`, http.StatusBadRequest)
		return
	}
	auth, expiresAt, err := h.issuer.Issue(r.Context(), req.Email, req.WorkspaceID)
	switch {
	case errors.Is(err, benchlogin.ErrStore):
		w.Header().Set("Retry-After", "1")
		http.Error(w, `{"error":"unavailable"}`, http.StatusServiceUnavailable)
		return
	case err != nil:
		http.Error(w, `{"error":"internal"}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(loginResponse{Auth: auth, ExpiresAt: expiresAt})
}
