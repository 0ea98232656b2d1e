package main

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/liveproctor/workspaces/deploy/local/stack"
	"github.com/liveproctor/workspaces/pkg/basicauth"
	authv1 "github.com/liveproctor/workspaces/pkg/gen/auth/v1"
	"github.com/liveproctor/workspaces/pkg/testenv"
)

// TestLoginFloorIssuesTokens starts the login floor as the bench does
// (benchauth on a redis-server of its own, benchproxy in front of it) and
// logs in through it: the answer has the gateway's fields, and the token's
// digest is in Redis with the 8-hour life, as benchref leaves it.
func TestLoginFloorIssuesTokens(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	root, err := stack.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	build := exec.CommandContext(ctx, "go", "build", "-o", bin+string(filepath.Separator),
		"./deploy/local/cmd/benchauth", "./deploy/local/cmd/benchproxy")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}

	rs, err := testenv.StartRedis(ctx, testenv.RedisOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rs.Stop() })
	auth, err := startTokenService(ctx, filepath.Join(bin, "benchauth"), rs.Addr(), rootKey, rootSecret, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = auth.Stop() })
	// No workspace service: the login route does not use it.
	proxy, err := startProxy(ctx, filepath.Join(bin, "benchproxy"), "127.0.0.1:1", auth.Addr, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = proxy.Stop() })

	login := func(authorization string) *http.Response {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, proxy.URL+"/api/login/sdk",
			strings.NewReader(`{"email":"user@bench.example","workspaceId":"root"}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", authorization)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = resp.Body.Close() })
		return resp
	}

	resp := login(basicauth.Header(rootKey, rootSecret))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("login: status %d, want 200", resp.StatusCode)
	}
	var got struct {
		Auth      string `json:"auth"`
		ExpiresAt string `json:"expiresAt"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatalf("decode the login's answer: %v", err)
	}
	if raw, err := base64.StdEncoding.DecodeString(got.Auth); err != nil || len(raw) != 32 {
		t.Errorf("auth %q: want 32 bytes in standard Base64 (%v)", got.Auth, err)
	}
	expires, err := time.Parse(time.RFC3339, got.ExpiresAt)
	if err != nil {
		t.Fatalf("expiresAt %q: %v", got.ExpiresAt, err)
	}
	if left := time.Until(expires); left < 7*time.Hour || left > 8*time.Hour {
		t.Errorf("expiresAt %s: want 8 hours from now", got.ExpiresAt)
	}

	rdb := redis.NewClient(&redis.Options{Addr: rs.Addr()})
	defer rdb.Close()
	digest := sha256.Sum256([]byte(got.Auth))
	key := hex.EncodeToString(digest[:])
	value, err := rdb.Get(ctx, key).Result()
	if err != nil {
		t.Fatalf("the token's digest in Redis: %v", err)
	}
	var stored struct {
		Email       string `json:"email"`
		WorkspaceID string `json:"workspaceId"`
	}
	if err := json.Unmarshal([]byte(value), &stored); err != nil || stored.Email != "user@bench.example" || stored.WorkspaceID != "root" {
		t.Errorf("stored session %s: want the login's email and workspace (%v)", value, err)
	}
	if ttl, err := rdb.TTL(ctx, key).Result(); err != nil || ttl < 7*time.Hour || ttl > 8*time.Hour {
		t.Errorf("the token's TTL is %s (%v), want 8 hours", ttl, err)
	}

	if resp := login(basicauth.Header(rootKey, "wrong")); resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("login with a wrong secret: status %d, want 401", resp.StatusCode)
	}

	// benchauth serves the real service, and only the login.
	conn, err := grpc.NewClient(auth.Addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, err = authv1.NewAuthServiceClient(conn).GetSdkSession(
		metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+got.Auth), &authv1.GetSdkSessionRequest{})
	if status.Code(err) != codes.Unimplemented {
		t.Errorf("GetSdkSession: %v, want Unimplemented", err)
	}
}
