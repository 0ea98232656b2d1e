package redisstore_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/liveproctor/workspaces/pkg/testenv"
)

// clientOptions keep a Redis that is down from holding a test up.
func clientOptions(addrs ...string) *redis.UniversalOptions {
	return &redis.UniversalOptions{
		Addrs:        addrs,
		DialTimeout:  500 * time.Millisecond,
		ReadTimeout:  500 * time.Millisecond,
		WriteTimeout: 500 * time.Millisecond,
		PoolTimeout:  500 * time.Millisecond,
		MaxRetries:   1,
	}
}

// startStandalone runs one redis-server for the test and returns it with
// a client on it.
func startStandalone(t *testing.T) (*testenv.Server, redis.UniversalClient) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := testenv.StartRedis(ctx, testenv.RedisOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	rdb := redis.NewUniversalClient(clientOptions(srv.Addr()))
	t.Cleanup(func() { _ = rdb.Close() })
	if _, ok := rdb.(*redis.Client); !ok {
		t.Fatalf("one address gave a %T, want a single-server client", rdb)
	}
	return srv, rdb
}

// startCluster runs a 3-master Redis Cluster on loopback for the test and
// returns a Cluster client on it once every master takes writes.
func startCluster(t *testing.T) redis.UniversalClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cluster, err := testenv.StartRedisCluster(ctx, t.TempDir(), 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Stop() })
	rdb := redis.NewUniversalClient(clientOptions(cluster.Addrs()...))
	t.Cleanup(func() { _ = rdb.Close() })
	if _, ok := rdb.(*redis.ClusterClient); !ok {
		t.Fatalf("three addresses gave a %T, want a Cluster client", rdb)
	}
	// Every node says cluster_state:ok by now; the client learns the slots
	// on its own time, so write until every master has taken a key.
	probes := make([]string, 64) // enough keys to reach every master
	for i := range probes {
		probes[i] = fmt.Sprintf("probe:%d", i)
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		for _, k := range probes {
			if err := rdb.Set(ctx, k, "1", 0).Err(); err != nil {
				return err
			}
		}
		return nil
	}, "every master of the cluster takes writes")
	for _, k := range probes {
		if err := rdb.Del(ctx, k).Err(); err != nil {
			t.Fatal(err)
		}
	}
	return rdb
}

// allKeys scans every key: on every master, for a Cluster.
func allKeys(t *testing.T, rdb redis.UniversalClient) []string {
	t.Helper()
	var mu sync.Mutex
	var out []string
	scan := func(ctx context.Context, c *redis.Client) error {
		iter := c.Scan(ctx, 0, "*", 1000).Iterator()
		for iter.Next(ctx) {
			mu.Lock()
			out = append(out, iter.Val())
			mu.Unlock()
		}
		return iter.Err()
	}
	var err error
	switch c := rdb.(type) {
	case *redis.ClusterClient:
		err = c.ForEachMaster(context.Background(), scan) // concurrently
	case *redis.Client:
		err = scan(context.Background(), c)
	default:
		t.Fatalf("cannot scan a %T", rdb)
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}
