package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// hookSampleEvery is how often the receiver keeps a message whole, for its
// signature to be checked after the round, away from the answer's path.
const hookSampleEvery = 20

// hookReceiver is the webhooks scenario's receiver: a plain net/http server
// on loopback that answers 204 at once. It counts messages by webhook-id,
// keeps when each change's event (by the request id the event carries)
// first came and which process sent it, and keeps every hookSampleEvery-th
// message whole.
type hookReceiver struct {
	srv  *http.Server
	URL  string // the webhooks' url
	Host string // host:port, for WEBHOOK_ALLOW_INSECURE_HOSTS

	mu       sync.Mutex
	senders  []namedPID // whose sockets a new connection is looked up in; none: not looked up
	messages int
	ids      map[string]int          // messages by webhook-id
	first    map[string]hookDelivery // by the event's request id: its first message
	sample   []hookMessage
}

// hookDelivery is when an event first came, and from which process.
type hookDelivery struct {
	At     time.Time
	Sender string // the process's name; empty when not looked up or not found
}

// hookMessage is one message, kept whole.
type hookMessage struct {
	WorkspaceID string
	Header      http.Header
	Body        []byte
}

// senderKey is the context key of the process that opened a connection.
type senderKey struct{}

// startHookReceiver listens on a free loopback port and serves.
func startHookReceiver() (*hookReceiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("listen for webhooks: %w", err)
	}
	rc := &hookReceiver{Host: ln.Addr().String()}
	rc.URL = "http://" + rc.Host + "/hook"
	rc.reset()
	rc.srv = &http.Server{Handler: rc, ReadHeaderTimeout: 10 * time.Second, ConnContext: rc.connContext}
	go func() { _ = rc.srv.Serve(ln) }() // ends with Close
	return rc, nil
}

// Close stops the server.
func (rc *hookReceiver) Close() error { return rc.srv.Close() }

// watch makes the receiver tell which of procs sends each message.
func (rc *hookReceiver) watch(procs []namedPID) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.senders = procs
}

// reset forgets what came so far: a round starts.
func (rc *hookReceiver) reset() {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.messages, rc.sample = 0, nil
	rc.ids, rc.first = map[string]int{}, map[string]hookDelivery{}
}

// connContext looks up, once per connection, the process at its other end.
func (rc *hookReceiver) connContext(ctx context.Context, c net.Conn) context.Context {
	rc.mu.Lock()
	senders := rc.senders
	rc.mu.Unlock()
	if len(senders) == 0 {
		return ctx
	}
	return context.WithValue(ctx, senderKey{}, connOwner(c, senders))
}

func (rc *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	at := time.Now()
	body, err := io.ReadAll(r.Body)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	// A message that is no event of a change counts as a message, and for
	// no change.
	var event struct {
		RequestID   string `json:"requestId"`
		WorkspaceID string `json:"workspaceId"`
	}
	_ = json.Unmarshal(body, &event)
	sender, _ := r.Context().Value(senderKey{}).(string)
	id := r.Header.Get("webhook-id")

	rc.mu.Lock()
	rc.messages++
	rc.ids[id]++
	if _, seen := rc.first[event.RequestID]; !seen && event.RequestID != "" {
		rc.first[event.RequestID] = hookDelivery{At: at, Sender: sender}
	}
	if rc.messages%hookSampleEvery == 1 {
		rc.sample = append(rc.sample, hookMessage{WorkspaceID: event.WorkspaceID, Header: r.Header.Clone(), Body: body})
	}
	rc.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// received is what came since the last reset.
type received struct {
	Messages  int // every message, sent again ones included
	Distinct  int // distinct webhook-ids
	ByRequest map[string]hookDelivery
	Sample    []hookMessage
}

// Duplicates are the messages that came again with a webhook-id already
// seen.
func (r received) Duplicates() int { return r.Messages - r.Distinct }

// snapshot copies what came since the last reset.
func (rc *hookReceiver) snapshot() received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return received{Messages: rc.messages, Distinct: len(rc.ids), ByRequest: maps.Clone(rc.first), Sample: slices.Clone(rc.sample)}
}

// awaitRequests waits until an event of every one of requestIDs has come,
// or until within has passed, polling. Those that did not come are the
// caller's to count.
func (rc *hookReceiver) awaitRequests(ctx context.Context, requestIDs []string, within time.Duration) error {
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for rc.countArrived(requestIDs) < len(requestIDs) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return nil
		case <-tick.C:
		}
	}
	return nil
}

func (rc *hookReceiver) countArrived(requestIDs []string) int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	n := 0
	for _, id := range requestIDs {
		if _, ok := rc.first[id]; ok {
			n++
		}
	}
	return n
}

// verifySignatures checks every sampled message's signature with its
// workspace's webhook secret by the Standard Webhooks library (an
// implementation not ours), timestamp included, and returns how many
// verified.
func verifySignatures(sample []hookMessage, secrets map[string]string) (int, error) {
	for i, m := range sample {
		secret, ok := secrets[m.WorkspaceID]
		if !ok {
			return i, fmt.Errorf("a message %s of workspace %q, which has no webhook of the bench's", m.Header.Get("webhook-id"), m.WorkspaceID)
		}
		wh, err := standardwebhooks.NewWebhook(secret)
		if err != nil {
			return i, fmt.Errorf("the webhook secret of %s: %w", m.WorkspaceID, err)
		}
		if err := wh.Verify(m.Body, m.Header); err != nil {
			return i, fmt.Errorf("the message %s does not verify: %w", m.Header.Get("webhook-id"), err)
		}
	}
	return len(sample), nil
}

// connOwner names the process of procs that holds the other end of c, a
// connection on loopback: the socket whose local port is c's remote one,
// found by its inode in /proc/net/tcp among the process's descriptors. It
// returns "" when none does (the connection closed meanwhile).
func connOwner(c net.Conn, procs []namedPID) string {
	remote, ok1 := c.RemoteAddr().(*net.TCPAddr)
	local, ok2 := c.LocalAddr().(*net.TCPAddr)
	if !ok1 || !ok2 {
		return ""
	}
	table, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return ""
	}
	inode, ok := socketInode(table, remote.Port, local.Port)
	if !ok {
		return ""
	}
	want := "socket:[" + inode + "]"
	for _, p := range procs {
		dir := fmt.Sprintf("/proc/%d/fd", p.PID)
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			if link, err := os.Readlink(dir + "/" + fd.Name()); err == nil && link == want {
				return p.Name
			}
		}
	}
	return ""
}

// socketInode finds in table, the text of /proc/net/tcp, the inode of the
// socket from localPort to remotePort.
func socketInode(table []byte, localPort, remotePort int) (string, bool) {
	lines := bufio.NewScanner(bytes.NewReader(table))
	lines.Scan() // the heading
	for lines.Scan() {
		// sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode …
		f := strings.Fields(lines.Text())
		if len(f) < 10 {
			continue
		}
		if hexPort(f[1]) == localPort && hexPort(f[2]) == remotePort {
			return f[9], true
		}
	}
	return "", false
}

// hexPort reads the port of an address as /proc/net/tcp writes it
// (0100007F:1F90); -1 when it cannot.
func hexPort(addr string) int {
	_, port, ok := strings.Cut(addr, ":")
	if !ok {
		return -1
	}
	n, err := strconv.ParseUint(port, 16, 16)
	if err != nil {
		return -1
	}
	return int(n)
}
