package redisproc

import (
	"errors"
	"os"
	"os/exec"
)

// notInstalledMsg tells the reader how to install redis-server.
const notInstalledMsg = `redis-server is not installed: run "make test-deps" (Debian: apt-get install redis-server)`

// notInstalledError reports a missing redis-server binary while keeping the
// lookup error reachable through errors.Is / errors.As.
type notInstalledError struct{ err error }

func (e *notInstalledError) Error() string { return notInstalledMsg }
func (e *notInstalledError) Unwrap() error { return e.err }

// LookPath returns the path of the redis-server binary. When it is missing,
// the error explains how to install it.
func LookPath() (string, error) {
	path, err := exec.LookPath("redis-server")
	if err == nil {
		return path, nil
	}

	// Some environments (CI, cron) run with a minimal PATH.
	for _, p := range []string{"/usr/bin/redis-server", "/usr/local/bin/redis-server"} {
		if isExecutable(p) {
			return p, nil
		}
	}

	return "", &notInstalledError{err: err}
}

// isExecutable reports whether path is a regular file with an execute bit.
func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	if err != nil {
		return false
	}

	return fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// IsNotInstalled reports whether err comes from LookPath not finding
// redis-server, so tests can skip instead of failing when it is absent.
func IsNotInstalled(err error) bool {
	var nie *notInstalledError
	return errors.As(err, &nie)
}
