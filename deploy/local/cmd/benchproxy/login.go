package main

import (
	"context"
	"encoding/json"
	"net/http"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	authv1 "github.com/liveproctor/workspaces/pkg/gen/auth/v1"
)

// loginHandler translates POST /api/login/sdk into CreateSdkToken.
type loginHandler struct {
	client authv1.AuthServiceClient
}

type loginRequest struct {
	Email       string `json:"email"`
	WorkspaceID string `json:"workspaceId"`
}

// loginResponse has the fields the gateway answers a login with.
type loginResponse struct {
	Auth      string `json:"auth"`
	ExpiresAt string `json:"expiresAt"`
}

func (h *loginHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req loginRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&req); err != nil {
		http.Error(w, `{"error":"invalid argument"}`, http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), callTimeout)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", r.Header.Get("Authorization"))
	resp, err := h.client.CreateSdkToken(ctx, &authv1.CreateSdkTokenRequest{Email: req.Email, WorkspaceId: req.WorkspaceID})
	if err != nil {
		// A bench helper: the few codes the token service answers, and
		// the status's text to see what went wrong.
		code := http.StatusBadGateway
		switch status.Code(err) {
		case codes.Unauthenticated:
			w.Header().Set("WWW-Authenticate", `Basic realm="workspaces"`)
			code = http.StatusUnauthorized
		case codes.InvalidArgument:
			code = http.StatusBadRequest
		}
		http.Error(w, err.Error(), code)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(loginResponse{Auth: resp.GetAuth(), ExpiresAt: resp.GetExpiresAt()})
}
