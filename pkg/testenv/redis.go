package testenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// RedisOptions configures StartRedis.
type RedisOptions struct {
	// Dir is redis-server's working folder (--dir); created when missing.
	Dir string
	// Addr is the loopback host:port; empty picks a free port.
	Addr string
	// Persist turns on the append-only file in Dir, so data survives a
	// Restart. Off, nothing is saved (--save '' --appendonly no).
	Persist bool
	// Args are added to redis-server's command line.
	Args []string
	// Output receives redis-server's output lines; nil discards them.
	Output io.Writer
}

// StartRedis starts redis-server on 127.0.0.1 and returns once it answers
// PING. `make test-deps` installs redis-server (Debian: apt-get install
// redis-server).
func StartRedis(ctx context.Context, opts RedisOptions) (*Server, error) {
	bin, err := redisBinary("redis-server")
	if err != nil {
		return nil, err
	}
	if opts.Dir == "" {
		return nil, errors.New("testenv: RedisOptions.Dir is required")
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, err
	}
	s := &Server{
		name: "redis",
		bin:  bin,
		args: func(addr string) []string {
			_, port, _ := net.SplitHostPort(addr)
			args := []string{"--bind", "127.0.0.1", "--port", port, "--dir", dir,
				"--protected-mode", "yes", "--daemonize", "no"}
			if opts.Persist {
				args = append(args, "--appendonly", "yes")
			} else {
				args = append(args, "--save", "", "--appendonly", "no")
			}
			return append(args, opts.Args...)
		},
		ready: func(ctx context.Context, addr string) error {
			reply, err := redisDo(ctx, addr, "PING")
			if err == nil && reply != "PONG" {
				err = fmt.Errorf("PING answered %q", reply)
			}
			return err
		},
		uri:    "redis://%s",
		output: opts.Output,
	}
	if err := s.start(ctx, opts.Addr); err != nil {
		return nil, fmt.Errorf("testenv: %w", err)
	}
	return s, nil
}

// RedisCluster is a Redis Cluster of masters without replicas, on loopback.
type RedisCluster struct {
	Nodes []*Server
}

// StartRedisCluster starts masters redis-servers in folders below dir,
// joins them into a cluster with redis-cli, and returns once every node
// reports cluster_state:ok.
func StartRedisCluster(ctx context.Context, dir string, masters int) (c *RedisCluster, err error) {
	cli, err := redisBinary("redis-cli")
	if err != nil {
		return nil, err
	}
	c = &RedisCluster{}
	defer func() {
		if err != nil {
			_ = c.Stop()
		}
	}()
	for i := range masters {
		// The cluster bus port defaults to the port + 10000, which is past
		// 65535 for about a fifth of the kernel's ephemeral ports: pick it too.
		bus, err := FreeAddr()
		if err != nil {
			return nil, err
		}
		_, busPort, _ := net.SplitHostPort(bus)
		node, err := StartRedis(ctx, RedisOptions{
			Dir:  filepath.Join(dir, strconv.Itoa(i)),
			Args: []string{"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf", "--cluster-port", busPort},
		})
		if err != nil {
			return nil, err
		}
		c.Nodes = append(c.Nodes, node)
	}
	args := append(append([]string{"--cluster", "create"}, c.Addrs()...), "--cluster-replicas", "0", "--cluster-yes")
	if out, err := exec.CommandContext(ctx, cli, args...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("testenv: redis-cli --cluster create: %w\n%s", err, out)
	}
	err = WaitReady(ctx, func(ctx context.Context) error {
		for _, addr := range c.Addrs() {
			info, err := redisDo(ctx, addr, "CLUSTER", "INFO")
			if err != nil {
				return err
			}
			if !strings.Contains(info, "cluster_state:ok") {
				return fmt.Errorf("%s: %s", addr, strings.TrimSpace(info))
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("testenv: the cluster did not become ready: %w", err)
	}
	return c, nil
}

// Addrs returns the nodes' addresses.
func (c *RedisCluster) Addrs() []string {
	addrs := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		addrs[i] = n.Addr()
	}
	return addrs
}

// Stop stops every node.
func (c *RedisCluster) Stop() error {
	var errs []error
	for _, n := range c.Nodes {
		errs = append(errs, n.Stop())
	}
	return errors.Join(errs...)
}

// redisBinary finds a Redis program on PATH or where Debian and Homebrew
// put it (cron and some CI runners have a minimal PATH).
func redisBinary(name string) (string, error) {
	if path, err := exec.LookPath(name); err == nil {
		return path, nil
	}
	for _, dir := range []string{"/usr/bin", "/usr/local/bin", "/opt/homebrew/bin"} {
		path := filepath.Join(dir, name)
		if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
			return path, nil
		}
	}
	return "", fmt.Errorf(`testenv: %s is not installed: run "make test-deps" (Debian: apt-get install redis-server)`, name)
}

// SetRedisFull makes the Redis server at addr refuse writes as a full one
// does under noeviction ("OOM command not allowed") when full is set:
// maxmemory of 1 byte, which every server is past, so no test has to fill
// it. Unset, maxmemory is 0 (no limit) and writes are taken again. Reads
// are answered either way.
func SetRedisFull(ctx context.Context, addr string, full bool) error {
	limit := "0"
	if full {
		limit = "1"
	}
	for _, args := range [][]string{{"CONFIG", "SET", "maxmemory-policy", "noeviction"}, {"CONFIG", "SET", "maxmemory", limit}} {
		if _, err := redisDo(ctx, addr, args...); err != nil {
			return fmt.Errorf("testenv: %w", err)
		}
	}
	return nil
}
