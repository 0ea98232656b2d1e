package testenv

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
)

// redisDo sends one command to the Redis server at addr over a connection
// of its own and returns a simple, integer or bulk reply as text ("(nil)"
// for a nil bulk string); an error reply is an error. It is enough to tell
// whether a server is ready without a client library.
func redisDo(ctx context.Context, addr string, args ...string) (string, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	// Ending ctx ends the exchange, even one with a server that accepted
	// the connection and never answers.
	defer context.AfterFunc(ctx, func() { _ = conn.Close() })()
	if deadline, ok := ctx.Deadline(); ok {
		if err := conn.SetDeadline(deadline); err != nil {
			return "", err
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	if _, err := io.WriteString(conn, b.String()); err != nil {
		return "", fmt.Errorf("send %s: %w", args[0], err)
	}
	r := bufio.NewReader(conn)
	line, err := r.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("read the reply to %s: %w", args[0], err)
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", fmt.Errorf("empty reply to %s", args[0])
	}
	switch line[0] {
	case '+', ':':
		return line[1:], nil
	case '-':
		return "", fmt.Errorf("%s: redis error: %s", args[0], line[1:])
	case '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil {
			return "", fmt.Errorf("bad bulk length %q: %w", line, err)
		}
		if n < 0 {
			return "(nil)", nil
		}
		buf := make([]byte, n+2) // the payload and CRLF
		if _, err := io.ReadFull(r, buf); err != nil {
			return "", fmt.Errorf("read the reply to %s: %w", args[0], err)
		}
		return string(buf[:n]), nil
	default:
		return "", fmt.Errorf("unsupported reply %q to %s", line, args[0])
	}
}
