package redisproc

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// respClient is a minimal RESP client for tests: it sends commands as arrays
// of bulk strings and reads simple, error, integer and bulk replies.
type respClient struct {
	conn net.Conn
	r    *bufio.Reader
}

// dialRESP connects to addr or fails the test.
func dialRESP(t *testing.T, addr string) *respClient {
	t.Helper()

	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { _ = conn.Close() })

	return &respClient{conn: conn, r: bufio.NewReader(conn)}
}

// do sends one command and returns its reply as text; a RESP error reply
// becomes an error, a nil bulk string becomes "(nil)".
func (c *respClient) do(args ...string) (string, error) {
	if err := c.conn.SetDeadline(time.Now().Add(5 * time.Second)); err != nil {
		return "", fmt.Errorf("set deadline: %w", err)
	}

	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}

	if _, err := io.WriteString(c.conn, b.String()); err != nil {
		return "", fmt.Errorf("write %s: %w", args[0], err)
	}

	line, err := c.r.ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("read reply to %s: %w", args[0], err)
	}
	line = strings.TrimRight(line, "\r\n")

	if line == "" {
		return "", fmt.Errorf("empty reply to %s", args[0])
	}

	switch line[0] {
	case '+', ':':
		return line[1:], nil
	case '-':
		return "", fmt.Errorf("redis error: %s", line[1:])
	case '$':
		n, err := strconv.Atoi(line[1:])
		if err != nil {
			return "", fmt.Errorf("bad bulk length %q: %w", line, err)
		}
		if n < 0 {
			return "(nil)", nil
		}

		buf := make([]byte, n+2) // payload and CRLF
		if _, err := io.ReadFull(c.r, buf); err != nil {
			return "", fmt.Errorf("read bulk reply: %w", err)
		}

		return string(buf[:n]), nil
	default:
		return "", fmt.Errorf("unsupported reply %q", line)
	}
}

// mustDo runs a command and compares its reply, failing the test on mismatch.
func (c *respClient) mustDo(t *testing.T, want string, args ...string) {
	t.Helper()

	got, err := c.do(args...)
	if err != nil {
		t.Fatalf("%s: %v", strings.Join(args, " "), err)
	}

	if got != want {
		t.Fatalf("%s = %q, want %q", strings.Join(args, " "), got, want)
	}
}
