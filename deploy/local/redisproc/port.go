package redisproc

import (
	"fmt"
	"net"
)

// freePort asks the kernel for a free loopback TCP port. The port is released
// before returning, so another process may grab it first; Start retries.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pick a free port: %w", err)
	}

	port := l.Addr().(*net.TCPAddr).Port

	if err := l.Close(); err != nil {
		return 0, fmt.Errorf("release picked port %d: %w", port, err)
	}

	return port, nil
}
