package testenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

// FerretDBOptions configures StartFerretDB.
type FerretDBOptions struct {
	// Dir holds the SQLite databases; created when missing.
	Dir string
	// Addr is the loopback host:port; empty picks a free port.
	Addr string
	// Binary is the ferretdb command (pkg/testenv/cmd/ferretdb); empty
	// means FerretDBBinary's.
	Binary string
	// Output receives FerretDB's output lines (warnings and errors); nil
	// discards them.
	Output io.Writer
	// TTLMonitorInterval is how often the stand-in removes documents past
	// their TTL index's expireAfterSeconds; 0 means every minute, as
	// MongoDB's TTL monitor. Tests of expiry shorten it.
	TTLMonitorInterval time.Duration
}

// StartFerretDB starts FerretDB, a MongoDB wire-protocol server on SQLite,
// as a child process, and returns once it answers a ping. Its URI is a
// mongodb:// connection string for the real driver. The command puts a
// front before FerretDB that makes its conditional updates atomic, gives
// it TTL indexes and applies $push's $position and $slice (see
// cmd/ferretdb).
func StartFerretDB(ctx context.Context, opts FerretDBOptions) (*Server, error) {
	if opts.Dir == "" {
		return nil, errors.New("testenv: FerretDBOptions.Dir is required")
	}
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return nil, err
	}
	bin := opts.Binary
	if bin == "" {
		if bin, err = FerretDBBinary(ctx); err != nil {
			return nil, err
		}
	}
	s := &Server{
		name: "ferretdb",
		bin:  bin,
		args: func(addr string) []string {
			args := []string{"-listen", addr, "-dir", dir}
			if opts.TTLMonitorInterval > 0 {
				args = append(args, "-ttl-monitor-interval", opts.TTLMonitorInterval.String())
			}
			return args
		},
		ready:  mongoPing,
		uri:    "mongodb://%s/",
		output: opts.Output,
	}
	if err := s.start(ctx, opts.Addr); err != nil {
		return nil, fmt.Errorf("testenv: %w", err)
	}
	return s, nil
}

// ferretDBBuild is the result of the first FerretDBBinary call.
var ferretDBBuild struct {
	sync.Mutex
	path string
}

// FerretDBBinary returns the path of the ferretdb command, which it builds
// from pkg/testenv/cmd/ferretdb on first use. That folder is a module of
// its own, outside go.work, so it is the only module that requires
// FerretDB; `go tool -n` builds it into the go command's cache, where later
// test runs find it built.
func FerretDBBinary(ctx context.Context) (string, error) {
	ferretDBBuild.Lock()
	defer ferretDBBuild.Unlock()
	if ferretDBBuild.path != "" {
		return ferretDBBuild.path, nil
	}
	dir, err := ferretDBModuleDir()
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, "go", "tool", "-n", "ferretdb")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("testenv: build the ferretdb command in %s: %w\n%s", dir, err, stderr.String())
	}
	ferretDBBuild.path = strings.TrimSpace(string(out))
	return ferretDBBuild.path, nil
}

// ferretDBModuleDir returns the folder of the ferretdb command's module in
// the checkout this package was built from.
func ferretDBModuleDir() (string, error) {
	_, file, _, ok := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "cmd", "ferretdb")
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); !ok || err != nil {
		return "", fmt.Errorf("testenv: no ferretdb command at %s (built with -trimpath, or the checkout moved): set FerretDBOptions.Binary", dir)
	}
	return dir, nil
}
