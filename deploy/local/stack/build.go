package stack

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Commands are the binaries a stack runs, by name, in start order, with
// their package paths relative to the repository root and the variable
// that says where each listens.
var commands = []struct{ name, pkg, listenVar string }{
	{"workspace", "./services/workspace/cmd/workspace", "WORKSPACE_GRPC_ADDR"},
	{"auth", "./services/auth/cmd/auth", "AUTH_GRPC_ADDR"},
	{"gateway", "./gateway/cmd/gateway", "GATEWAY_ADDR"},
}

// RepoRoot returns the repository root: the nearest folder at or above the
// working directory holding go.work.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.work in the working directory or above it: run from inside the repository")
		}
		dir = parent
	}
}

// Build compiles the workspace, auth and gateway binaries of the repository
// at root into binDir.
func Build(ctx context.Context, root, binDir string) error {
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return err
	}
	args := []string{"build", "-o", binDir + string(filepath.Separator)}
	for _, c := range commands {
		args = append(args, c.pkg)
	}
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %w\n%s", err, out)
	}
	return nil
}
