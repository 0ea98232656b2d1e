package main

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// commandStat is what redis-server's INFO commandstats says of one command.
type commandStat struct {
	Command string
	Calls   int64
	Usec    int64 // microseconds spent in it, commands run by scripts included
}

// resetCommandStats zeroes a redis-server's command statistics.
func resetCommandStats(ctx context.Context, addr string) error {
	rdb := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2})
	defer rdb.Close()
	if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
		return fmt.Errorf("reset the command statistics of %s: %w", addr, err)
	}
	return nil
}

// readCommandStats reads a redis-server's command statistics, most time
// first. A script's time holds that of the commands it ran, which are also
// listed on their own.
func readCommandStats(ctx context.Context, addr string) ([]commandStat, error) {
	rdb := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2})
	defer rdb.Close()
	info, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		return nil, fmt.Errorf("read the command statistics of %s: %w", addr, err)
	}
	var stats []commandStat
	for _, line := range strings.Split(info, "\n") {
		name, fields, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		s := commandStat{Command: strings.TrimPrefix(name, "cmdstat_")}
		for _, f := range strings.Split(fields, ",") {
			k, v, _ := strings.Cut(f, "=")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "calls":
				s.Calls = n
			case "usec":
				s.Usec = n
			}
		}
		if s.Command == "info" || s.Command == "config|resetstat" {
			continue // ours
		}
		stats = append(stats, s)
	}
	sort.Slice(stats, func(i, j int) bool { return stats[i].Usec > stats[j].Usec })
	return stats, nil
}

// keyspace is what a redis-server holds: its keys, and the memory its
// allocator counts for them (INFO memory's used_memory, which leaves out
// what RSS adds: fragmentation and freed pages not returned).
type keyspace struct {
	Keys       int64
	UsedMemory int64
}

// readKeyspace reads how many keys a redis-server holds and its used
// memory.
func readKeyspace(ctx context.Context, addr string) (keyspace, error) {
	rdb := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2})
	defer rdb.Close()
	n, err := rdb.DBSize(ctx).Result()
	if err != nil {
		return keyspace{}, fmt.Errorf("count the keys of %s: %w", addr, err)
	}
	info, err := rdb.Info(ctx, "memory").Result()
	if err != nil {
		return keyspace{}, fmt.Errorf("read the memory of %s: %w", addr, err)
	}
	k := keyspace{Keys: n}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
			k.UsedMemory, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	return k, nil
}

// redisInfoInt reads one integer field of a section of INFO.
func redisInfoInt(ctx context.Context, rdb *redis.Client, section, field string) (int64, error) {
	info, err := rdb.Info(ctx, section).Result()
	if err != nil {
		return 0, fmt.Errorf("read INFO %s: %w", section, err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("INFO %s has no %s", section, field)
}

// redisOOMErrors reads how many commands Redis refused for want of memory
// since it started (INFO errorstats' OOM count; none yet: no line).
func redisOOMErrors(ctx context.Context, rdb *redis.Client) (int64, error) {
	info, err := rdb.Info(ctx, "errorstats").Result()
	if err != nil {
		return 0, fmt.Errorf("read INFO errorstats: %w", err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "errorstat_OOM:count="); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, nil
}

// countKeys counts the keys matching pattern, with SCAN.
func countKeys(ctx context.Context, rdb *redis.Client, pattern string) (int64, error) {
	var n int64
	iter := rdb.Scan(ctx, 0, pattern, 1000).Iterator()
	for iter.Next(ctx) {
		n++
	}
	if err := iter.Err(); err != nil {
		return 0, fmt.Errorf("count the keys %s: %w", pattern, err)
	}
	return n, nil
}

// oneKeyUsage is MEMORY USAGE of one key matching pattern; 0 when none
// does.
func oneKeyUsage(ctx context.Context, rdb *redis.Client, pattern string) (int64, error) {
	iter := rdb.Scan(ctx, 0, pattern, 1000).Iterator()
	if !iter.Next(ctx) {
		if err := iter.Err(); err != nil {
			return 0, fmt.Errorf("find a key %s: %w", pattern, err)
		}
		return 0, nil
	}
	n, err := rdb.MemoryUsage(ctx, iter.Val()).Result()
	if err != nil {
		return 0, fmt.Errorf("read the memory of %s: %w", iter.Val(), err)
	}
	return n, nil
}
