package redisproc

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strings"
	"time"
)

// pingCmd is PING encoded as a RESP array of bulk strings.
const pingCmd = "*1\r\n$4\r\nPING\r\n"

// ping sends PING to addr over a fresh connection and expects +PONG.
func ping(ctx context.Context, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()

	var d net.Dialer

	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("dial %s: %w", addr, err)
	}
	defer conn.Close()

	if deadline, ok := ctx.Deadline(); ok {
		if err := conn.SetDeadline(deadline); err != nil {
			return fmt.Errorf("set deadline: %w", err)
		}
	}

	if _, err := conn.Write([]byte(pingCmd)); err != nil {
		return fmt.Errorf("send PING: %w", err)
	}

	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return fmt.Errorf("read PING reply: %w", err)
	}

	if reply := strings.TrimRight(line, "\r\n"); reply != "+PONG" {
		return fmt.Errorf("unexpected PING reply %q", reply)
	}

	return nil
}
