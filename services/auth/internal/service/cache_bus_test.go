package service_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/liveproctor/workspaces/pkg/basicauth"
	"github.com/liveproctor/workspaces/pkg/cachebus"
	authv1 "github.com/liveproctor/workspaces/pkg/gen/auth/v1"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/pkg/testenv"
	"github.com/liveproctor/workspaces/services/auth/internal/service"
)

// workspaceStandIn answers GetWorkspaceStatus as the workspace service
// would: every workspace is live and every key pair may act for it, but
// for what the test changed.
type workspaceStandIn struct {
	workspacev1.UnimplementedWorkspaceServiceServer
	mu      sync.Mutex
	refused map[string]bool // authorization → refused, as a revoked pair is
	deleted map[string]bool // workspace id → deleted
}

func (w *workspaceStandIn) GetWorkspaceStatus(ctx context.Context, req *workspacev1.GetWorkspaceStatusRequest) (*workspacev1.WorkspaceStatus, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	w.mu.Lock()
	defer w.mu.Unlock()
	if authz := md.Get("authorization"); len(authz) != 1 || w.refused[authz[0]] {
		return nil, status.Error(codes.Unauthenticated, "invalid credentials")
	}
	return &workspacev1.WorkspaceStatus{Id: req.GetId(), Active: !w.deleted[req.GetId()]}, nil
}

func (w *workspaceStandIn) change(edit func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	edit()
}

func serveWorkspaceStandIn(t *testing.T, w *workspaceStandIn) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	workspacev1.RegisterWorkspaceServiceServer(srv, w)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return lis.Addr().String()
}

// startAuth starts an auth service replica and returns its client.
func startAuth(t *testing.T, redisAddr, workspaceAddr string) authv1.AuthServiceClient {
	t.Helper()
	addr, err := testenv.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	svc, err := service.Start(service.Config{
		GRPCAddr: addr,
		Redis: redis.UniversalOptions{Addrs: []string{redisAddr}, MaxRetries: -1,
			DialTimeout: 500 * time.Millisecond, ReadTimeout: 500 * time.Millisecond, WriteTimeout: 500 * time.Millisecond},
		WorkspaceServiceAddr: workspaceAddr,
		ServiceAppKey:        "service-key", ServiceAppSecret: "service-secret",
		CallTimeout:     5 * time.Second,
		AccessCacheTTL:  time.Minute, // the bus, not the TTL, must end what is remembered
		AccessCacheSize: 100,
		ShutdownTimeout: 5 * time.Second,
	}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return authv1.NewAuthServiceClient(conn)
}

func withAuthorization(authz string) context.Context {
	return metadata.AppendToOutgoingContext(context.Background(), "authorization", authz)
}

// Two auth replicas on one Redis remember a key pair's access; a change
// told on the cache bus (by the workspace service, or through one
// replica's ForgetKeyPairAccess) ends it on both within a second (the
// requirement), though they would remember it for a minute.
func TestChangesReachEveryAuthReplicaWithinASecond(t *testing.T) {
	rs, err := testenv.StartRedis(context.Background(), testenv.RedisOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rs.Stop() })
	rdb := redis.NewClient(&redis.Options{Addr: rs.Addr(), MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	standIn := &workspaceStandIn{refused: map[string]bool{}, deleted: map[string]bool{}}
	workspaceAddr := serveWorkspaceStandIn(t, standIn)
	replicas := []authv1.AuthServiceClient{startAuth(t, rs.Addr(), workspaceAddr), startAuth(t, rs.Addr(), workspaceAddr)}
	testenv.Eventually(t, 10*time.Second, func() error {
		n, err := cachebus.Subscribers(context.Background(), rdb)
		if err == nil && n != 2 {
			err = fmt.Errorf("%d subscribers", n)
		}
		return err
	}, "both replicas subscribed")

	login := func(replica authv1.AuthServiceClient, authz, workspaceID string) error {
		_, err := replica.CreateSdkToken(withAuthorization(authz), &authv1.CreateSdkTokenRequest{Email: "ada@example.com", WorkspaceId: workspaceID})
		return err
	}
	// remembered logs in through every replica, then makes the change,
	// whose logins every replica still accepts from memory until told.
	remembered := func(authz, workspaceID string, change func()) {
		t.Helper()
		for _, r := range replicas {
			if err := login(r, authz, workspaceID); err != nil {
				t.Fatal(err)
			}
		}
		standIn.change(change)
		for _, r := range replicas {
			if err := login(r, authz, workspaceID); err != nil {
				t.Fatalf("a remembered login: %v", err)
			}
		}
	}
	refusedEverywhere := func(authz, workspaceID string, want codes.Code, what string) {
		t.Helper()
		for i, r := range replicas {
			testenv.Eventually(t, time.Second, func() error {
				if err := login(r, authz, workspaceID); status.Code(err) != want {
					return fmt.Errorf("answered %v", err)
				}
				return nil
			}, "replica %d refuses %s", i+1, what)
		}
	}
	publish := func(c cachebus.Change) {
		t.Helper()
		if err := cachebus.Publish(context.Background(), rdb, c); err != nil {
			t.Fatal(err)
		}
	}

	ada := basicauth.Header("ada-key", "ada-secret")
	remembered(ada, "w1", func() { standIn.refused[ada] = true })
	publish(cachebus.Change{Kind: cachebus.KeyPairsChanged, WorkspaceID: "w1", AppKeys: []string{"ada-key"}})
	refusedEverywhere(ada, "w1", codes.Unauthenticated, "a revoked key pair")

	bob := basicauth.Header("bob-key", "bob-secret")
	remembered(bob, "w2", func() { standIn.deleted["w2"] = true })
	publish(cachebus.Change{Kind: cachebus.WorkspaceChanged, WorkspaceID: "w2", AppKeys: []string{"bob-key"}})
	refusedEverywhere(bob, "w2", codes.NotFound, "a deleted workspace")

	cy := basicauth.Header("cy-key", "cy-secret")
	remembered(cy, "w3", func() { standIn.refused[cy] = true })
	if _, err := replicas[0].ForgetKeyPairAccess(withAuthorization(basicauth.Header("service-key", "service-secret")),
		&authv1.ForgetKeyPairAccessRequest{WorkspaceId: "w3", AppKeys: []string{"cy-key"}}); err != nil {
		t.Fatal(err)
	}
	refusedEverywhere(cy, "w3", codes.Unauthenticated, "a key pair one replica was told to forget")
}
