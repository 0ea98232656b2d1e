package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/liveproctor/workspaces/pkg/basicauth"
	authv1 "github.com/liveproctor/workspaces/pkg/gen/auth/v1"
)

// tokenTTL is the life of a token, as in the auth service.
const tokenTTL = 8 * time.Hour

// tokenServer issues tokens for the one key pair it knows. Every method
// but CreateSdkToken answers Unimplemented.
type tokenServer struct {
	authv1.UnimplementedAuthServiceServer
	rdb         *redis.Client
	key, secret []byte
}

var _ authv1.AuthServiceServer = (*tokenServer)(nil)

// session is the value stored under the token's digest, as benchref's.
type session struct {
	Email       string    `json:"email"`
	WorkspaceID string    `json:"workspaceId"`
	ExpiresAt   time.Time `json:"expiresAt"`
}

func (s *tokenServer) CreateSdkToken(ctx context.Context, req *authv1.CreateSdkTokenRequest) (*authv1.CreateSdkTokenResponse, error) {
	if !s.authorized(ctx) {
		return nil, status.Error(codes.Unauthenticated, "unauthenticated")
	}
	if req.GetEmail() == "" || req.GetWorkspaceId() == "" {
		return nil, status.Error(codes.InvalidArgument, "email and workspaceId are required")
	}

	raw := make([]byte, 32)
	_, _ = rand.Read(raw) // never fails (crypto/rand panics on a broken source)
	token := base64.StdEncoding.EncodeToString(raw)
	digest := sha256.Sum256([]byte(token))
	expires := time.Now().Add(tokenTTL).UTC()
	value, err := json.Marshal(session{Email: req.GetEmail(), WorkspaceID: req.GetWorkspaceId(), ExpiresAt: expires})
	if err != nil {
		return nil, status.Error(codes.Internal, "internal")
	}
	if err := s.rdb.Set(ctx, hex.EncodeToString(digest[:]), value, tokenTTL).Err(); err != nil {
		return nil, status.Error(codes.Unavailable, "unavailable")
	}
	return &authv1.CreateSdkTokenResponse{Auth: token, ExpiresAt: expires.Format("2006-01-02T15:04:05.000Z")}, nil
}

// authorized compares the call's Basic credentials with the configured
// pair in constant time (both halves are always compared).
func (s *tokenServer) authorized(ctx context.Context) bool {
	key, secret, ok := basicauth.FromIncoming(ctx)
	if !ok {
		return false
	}
	k := subtle.ConstantTimeCompare([]byte(key), s.key)
	c := subtle.ConstantTimeCompare([]byte(secret), s.secret)
	return k&c == 1
}
