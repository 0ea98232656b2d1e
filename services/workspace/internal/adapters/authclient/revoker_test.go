package authclient_test

import (
	"context"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/liveproctor/workspaces/pkg/basicauth"
	authv1 "github.com/liveproctor/workspaces/pkg/gen/auth/v1"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/authclient"
)

// fakeAuth fails the first failures calls with Unavailable, then succeeds.
type fakeAuth struct {
	authv1.UnimplementedAuthServiceServer
	mu       sync.Mutex
	failures int
	calls    []string
	authz    []string
	done     chan struct{}
}

func (f *fakeAuth) RevokeWorkspaceSdkTokens(ctx context.Context, req *authv1.RevokeWorkspaceSdkTokensRequest) (*authv1.RevokeWorkspaceSdkTokensResponse, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	md, _ := metadata.FromIncomingContext(ctx)
	f.calls = append(f.calls, req.GetWorkspaceId())
	f.authz = append(f.authz, md.Get("authorization")...)
	if len(f.calls) <= f.failures {
		return nil, status.Error(codes.Unavailable, "redis down")
	}
	close(f.done)
	return &authv1.RevokeWorkspaceSdkTokensResponse{}, nil
}

func TestRevokerRetriesUntilTheAuthServiceAnswers(t *testing.T) {
	fake := &fakeAuth{failures: 2, done: make(chan struct{})}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	authv1.RegisterAuthServiceServer(srv, fake)
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })

	r := authclient.New(conn, "svc-key", "svc-secret", authclient.Settings{
		CallTimeout: time.Second, GiveUpAfter: time.Minute, FirstRetry: 10 * time.Millisecond, MaxRetryWait: 50 * time.Millisecond,
	}, slog.New(slog.DiscardHandler))
	defer r.Close()
	r.RevokeWorkspaceTokens("w1", "req-1")

	select {
	case <-fake.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the revocation never succeeded")
	}
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if len(fake.calls) != 3 || fake.calls[2] != "w1" {
		t.Fatalf("calls %v, want three for w1", fake.calls)
	}
	if fake.authz[0] != basicauth.Header("svc-key", "svc-secret") {
		t.Fatalf("authorization %q", fake.authz[0])
	}
}
