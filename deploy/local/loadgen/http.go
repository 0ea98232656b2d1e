package loadgen

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// NewHTTPClient returns a keep-alive client that holds up to conns idle
// connections per host, so conns workers never dial after warming up.
func NewHTTPClient(conns int) *http.Client {
	dialer := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	return &http.Client{
		Timeout: 30 * time.Second,
		Transport: &http.Transport{
			DialContext:         dialer.DialContext,
			MaxIdleConns:        conns * 2,
			MaxIdleConnsPerHost: conns * 2,
			IdleConnTimeout:     90 * time.Second,
			DisableCompression:  true,
		},
	}
}

// HTTPRequest describes one request to send again and again.
type HTTPRequest struct {
	Client *http.Client
	Method string
	URL    string
	// Header is sent with every request (Authorization, Content-Type).
	Header http.Header
	// Body is sent with every request; nil sends none.
	Body []byte
	// Bodies, when not empty, replaces Body: successive requests cycle
	// through them (say, to log in many different users).
	Bodies [][]byte
}

// NewRequest builds one request with the given body (nil: none) and the
// configured headers.
func (h HTTPRequest) NewRequest(ctx context.Context, body []byte) (*http.Request, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, h.Method, h.URL, r)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	for k, v := range h.Header {
		req.Header[k] = v
	}
	return req, nil
}

// Op returns the request as an Op: each call sends it (see Send).
func (h HTTPRequest) Op() Op {
	var next atomic.Uint64
	return func(ctx context.Context) error {
		body := h.Body
		if n := uint64(len(h.Bodies)); n > 0 {
			body = h.Bodies[(next.Add(1)-1)%n]
		}
		return h.Send(ctx, body)
	}
}

// Send sends the request once with body, reads the whole answer (so the
// connection is reused) and fails on a transport error or a status outside
// 2xx (a *StatusError).
func (h HTTPRequest) Send(ctx context.Context, body []byte) error {
	req, err := h.NewRequest(ctx, body)
	if err != nil {
		return err
	}
	resp, err := h.Client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return fmt.Errorf("%s %s: read answer: %w", h.Method, h.URL, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return &StatusError{Status: resp.StatusCode}
	}
	return nil
}

// StatusError is an HTTP answer outside 2xx.
type StatusError struct{ Status int }

func (e *StatusError) Error() string {
	return fmt.Sprintf("HTTP %d %s", e.Status, http.StatusText(e.Status))
}
