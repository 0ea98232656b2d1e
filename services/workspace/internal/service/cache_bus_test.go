package service_test

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/liveproctor/workspaces/pkg/cachebus"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/pkg/testenv"
)

// Two replicas on one store and one Redis: a key pair revoked through one,
// and a workspace deleted through one, are refused by the other within a
// second (the requirement), though its credential cache would keep them
// for a minute.
func TestChangesReachTheOtherReplicaWithinASecond(t *testing.T) {
	f := startStore(t)
	rs := startRedis(t)
	cfg := config(t, f.URI())
	cfg.Redis = redisOptions(rs)
	cfg.CredentialCacheTTL = time.Minute
	_, first, _ := startService(t, cfg, io.Discard)
	_, second, _ := startService(t, cfg, io.Discard)
	// Each replica drops its whole cache when it subscribes: the pairs are
	// cached after both have, or the test would pass without the bus.
	rdb := redis.NewClient(&redis.Options{Addr: rs.Addr(), MaxRetries: -1})
	t.Cleanup(func() { _ = rdb.Close() })
	testenv.Eventually(t, 10*time.Second, func() error {
		n, err := cachebus.Subscribers(context.Background(), rdb)
		if err == nil && n != 2 {
			err = fmt.Errorf("%d subscribers", n)
		}
		return err
	}, "both replicas subscribed")

	created, err := first.CreateWorkspace(as(rootKey, rootSecret), &workspacev1.CreateWorkspaceRequest{Id: "school", Name: "School", Type: "DISTRICT"})
	if err != nil {
		t.Fatal(err)
	}
	server, lti := created.GetAppKeys().GetServer(), created.GetAppKeys().GetLti()
	asServer, asLTI := as(server.GetConsumerKey(), server.GetSharedSecret()), as(lti.GetConsumerKey(), lti.GetSharedSecret())
	onSecond := func(ctx context.Context) error {
		_, err := second.Authenticate(ctx, &workspacev1.AuthenticateRequest{})
		return err
	}
	refusedOnSecond := func(ctx context.Context, what string) {
		t.Helper()
		testenv.Eventually(t, time.Second, func() error {
			if err := onSecond(ctx); status.Code(err) != codes.Unauthenticated {
				return fmt.Errorf("answered %v", err)
			}
			return nil
		}, "%s refused by the second replica", what)
	}
	for _, ctx := range []context.Context{asServer, asLTI} {
		if err := onSecond(ctx); err != nil { // cached there now
			t.Fatal(err)
		}
	}

	if _, err := first.RevokeWorkspaceKey(asServer, &workspacev1.RevokeWorkspaceKeyRequest{Id: "school", AppKey: lti.GetConsumerKey()}); err != nil {
		t.Fatal(err)
	}
	refusedOnSecond(asLTI, "a pair revoked on the first")
	if _, err := first.DeleteWorkspace(as(rootKey, rootSecret), &workspacev1.DeleteWorkspaceRequest{Id: "school"}); err != nil {
		t.Fatal(err)
	}
	refusedOnSecond(asServer, "the pair of a workspace deleted on the first")
}
