package ferret

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"
)

// waitReady dials addr until it accepts a TCP connection. It gives up when
// ctx ends, after readyTimeout, or when exited is closed (the server stopped
// before becoming ready).
func waitReady(ctx context.Context, addr string, exited <-chan struct{}) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()

	var d net.Dialer

	for {
		dialCtx, dialCancel := context.WithTimeout(ctx, time.Second)
		conn, err := d.DialContext(dialCtx, "tcp", addr)
		dialCancel()

		if err == nil {
			_ = conn.Close() // only the successful dial matters
			return nil
		}

		select {
		case <-exited:
			return errors.New("server stopped before accepting connections")
		case <-ctx.Done():
			return fmt.Errorf("port does not accept connections: %w (last dial error: %w)", ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
