package redisstore_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/liveproctor/workspaces/deploy/local/redisproc"
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
func startStandalone(t *testing.T) (*redisproc.Server, redis.UniversalClient) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := redisproc.Start(ctx, redisproc.Options{Dir: t.TempDir()})
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
// returns a Cluster client on it once every node says cluster_state:ok and
// every master takes writes.
func startCluster(t *testing.T) redis.UniversalClient {
	t.Helper()
	bin, err := redisproc.LookPath()
	if err != nil {
		t.Fatal(err)
	}
	var addrs []string
	for i := range 3 {
		port := freePort(t)
		dir := filepath.Join(t.TempDir(), strconv.Itoa(i))
		if err := os.MkdirAll(dir, 0o750); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--save", "", "--appendonly", "no", "--dir", dir)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		waitPing(t, addr)
		addrs = append(addrs, addr)
	}
	create := exec.Command(filepath.Join(filepath.Dir(bin), "redis-cli"),
		append(append([]string{"--cluster", "create"}, addrs...), "--cluster-replicas", "0", "--cluster-yes")...)
	if out, err := create.CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	rdb := redis.NewUniversalClient(clientOptions(addrs...))
	t.Cleanup(func() { _ = rdb.Close() })
	if _, ok := rdb.(*redis.ClusterClient); !ok {
		t.Fatalf("three addresses gave a %T, want a Cluster client", rdb)
	}
	ctx := context.Background()
	probes := make([]string, 64) // enough keys to reach every master
	for i := range probes {
		probes[i] = fmt.Sprintf("probe:%d", i)
	}
	ready := func() error {
		for _, addr := range addrs {
			node := redis.NewClient(&redis.Options{Addr: addr})
			info, err := node.ClusterInfo(ctx).Result()
			_ = node.Close()
			if err != nil || !strings.Contains(info, "cluster_state:ok") {
				return fmt.Errorf("%s: %v %s", addr, err, info)
			}
		}
		for _, k := range probes {
			if err := rdb.Set(ctx, k, "1", 0).Err(); err != nil {
				return err
			}
		}
		return nil
	}
	deadline := time.Now().Add(30 * time.Second)
	for err := ready(); err != nil; err = ready() {
		if time.Now().After(deadline) {
			t.Fatalf("the cluster never became ready: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, k := range probes {
		if err := rdb.Del(ctx, k).Err(); err != nil {
			t.Fatal(err)
		}
	}
	return rdb
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func waitPing(t *testing.T, addr string) {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: 200 * time.Millisecond})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for c.Ping(context.Background()).Err() != nil {
		if time.Now().After(deadline) {
			t.Fatalf("redis-server at %s never answered", addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
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
