package webhook

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/liveproctor/workspaces/pkg/outbound"
)

// Timeout is how long one attempt may take, answer read included: the
// Sender's default, and at least what the outbound client it is given
// should allow.
const Timeout = 15 * time.Second

// MaxResponseBytes is how much of a receiver's answer an Outcome keeps.
const MaxResponseBytes = 1024

// drainBytes is how much more of a longer answer is read and dropped, so
// that the connection can carry the next message; past it, the
// connection is closed.
const drainBytes = 64 << 10

// Verdict is what an attempt's outcome asks of the caller.
type Verdict int

const (
	// Delivered: the receiver answered 2xx (its body may then have
	// broken off); the message is done.
	Delivered Verdict = iota + 1
	// Failed: any other answer (a redirect included: they are not
	// followed), no answer within the timeout, or no connection; retry as
	// Schedule.NextAttempt says.
	Failed
	// Gone: the receiver answered 410; stop, and disable the endpoint.
	Gone
)

// ErrTimeout: the receiver did not answer within the attempt's timeout.
var ErrTimeout = errors.New("webhook: no answer within the attempt's timeout")

// Outcome is what one attempt did, as its caller records it.
type Outcome struct {
	Verdict Verdict
	// Status is the answer's HTTP status; 0 when there was none.
	Status int
	// Duration runs from sending the request to the end of reading the
	// answer.
	Duration time.Duration
	// Response is how the answer's body began: at most MaxResponseBytes,
	// valid UTF-8 (a character the cut fell in is dropped, invalid bytes
	// are replaced).
	Response string
	// RetryAfter is the wait a 429, 502, 503 or 504 asked for with
	// Retry-After, at most MaxRetryAfter; 0 when none did.
	RetryAfter time.Duration
	// Err says why there was no answer: ErrTimeout, outbound's refusals
	// (outbound.ErrAddressNotPublic, a URL the policy no longer admits),
	// a connection's failure, or the caller's context ending. It never
	// quotes the URL.
	Err error
}

// Doer sends a request under the outbound rule (https, public addresses
// checked when connecting, redirects not followed) and keeps the start of
// the answer's body; *outbound.Client is one.
type Doer interface {
	DoPrefix(req *http.Request, maxBytes, drainBytes int64) (outbound.Response, error)
}

// Sender makes attempts to deliver messages.
type Sender struct {
	client  Doer
	timeout time.Duration
}

// Option changes a Sender.
type Option func(*Sender)

// WithTimeout replaces the attempt's timeout (Timeout): for tests.
func WithTimeout(d time.Duration) Option {
	return func(s *Sender) { s.timeout = d }
}

// NewSender returns a Sender that calls receivers through client.
func NewSender(client Doer, opts ...Option) *Sender {
	s := &Sender{client: client, timeout: Timeout}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Send makes one attempt to POST body, a JSON message whose id is msgID,
// to endpoint, signed with secrets (the newest first) at the attempt's
// time.
func (s *Sender) Send(ctx context.Context, endpoint, msgID string, body []byte, secrets ...Secret) Outcome {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return Outcome{Verdict: Failed, Err: outbound.ErrMalformed}
	}
	start := time.Now()
	req.Header = Headers(msgID, start, body, secrets...)
	resp, err := s.client.DoPrefix(req, MaxResponseBytes, drainBytes)
	took := time.Since(start)
	if err != nil {
		return Outcome{Verdict: Failed, Duration: took, Err: noAnswer(ctx, err)}
	}
	verdict, retryAfter := classify(resp.Status, resp.Header, time.Now())
	return Outcome{
		Verdict:    verdict,
		Status:     resp.Status,
		Duration:   took,
		Response:   excerpt(resp.Body),
		RetryAfter: retryAfter,
	}
}

// classify reads an answer's status (and Retry-After) at now.
func classify(status int, header http.Header, now time.Time) (Verdict, time.Duration) {
	switch {
	case status >= 200 && status <= 299:
		return Delivered, 0
	case status == http.StatusGone:
		return Gone, 0
	case retryAfterStatuses[status]:
		wait, _ := outbound.ParseRetryAfter(header.Get("Retry-After"), now, MaxRetryAfter)
		return Failed, wait
	default:
		return Failed, 0
	}
}

// noAnswer names why an attempt got no answer, without the URL that
// net/http's errors quote (a receiver's URL may carry a token of its
// owner's).
func noAnswer(ctx context.Context, err error) error {
	var netErr net.Error
	if errors.Is(ctx.Err(), context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()) {
		return ErrTimeout
	}
	if ue, ok := errors.AsType[*url.Error](err); ok {
		return ue.Err
	}
	return err
}

// excerpt turns the start of an answer's body into valid UTF-8 of at most
// MaxResponseBytes.
func excerpt(body []byte) string {
	// A character the read cut in two is dropped rather than replaced.
	if i := lastRuneStart(body); i >= 0 && !utf8.FullRune(body[i:]) {
		body = body[:i]
	}
	s := strings.ToValidUTF8(string(body), "\uFFFD")
	for len(s) > MaxResponseBytes { // replacements are longer than the bytes they replace
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return s
}

// lastRuneStart is the index of the last byte of b that may start a
// character, among its last utf8.UTFMax; -1 when none does.
func lastRuneStart(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			return i
		}
	}
	return -1
}
