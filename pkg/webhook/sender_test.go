package webhook_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/liveproctor/workspaces/pkg/outbound"
	"github.com/liveproctor/workspaces/pkg/webhook"
)

// receiver is a webhook receiver on loopback that verifies each message
// with the Standard Webhooks library before answering as its path says.
type receiver struct {
	srv        *httptest.Server
	verified   atomic.Int32
	redirected atomic.Int32
	release    chan struct{} // unblocks /slow
}

func newReceiver(t *testing.T, secret webhook.Secret) *receiver {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(secret.Reveal())
	if err != nil {
		t.Fatal(err)
	}
	rc := &receiver{release: make(chan struct{})}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" || wh.Verify(body, r.Header) != nil {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		rc.verified.Add(1)
		switch r.URL.Path {
		case "/ok":
			_, _ = io.WriteString(w, `{"received":true}`)
		case "/gone":
			w.WriteHeader(http.StatusGone)
		case "/busy":
			w.Header().Set("Retry-After", "120")
			w.WriteHeader(http.StatusServiceUnavailable)
		case "/moved":
			http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
		case "/elsewhere":
			rc.redirected.Add(1)
		case "/slow":
			select {
			case <-rc.release:
			case <-r.Context().Done():
			}
		case "/trickle":
			_, _ = io.WriteString(w, `{"received":`)
			w.(http.Flusher).Flush()
			select {
			case <-rc.release:
			case <-r.Context().Done():
			}
		case "/huge":
			// An ASCII byte first, so that the 1 KiB cut falls inside a
			// two-byte character.
			_, _ = io.WriteString(w, "a"+strings.Repeat("é", 1<<20))
		}
	}))
	t.Cleanup(func() { close(rc.release); rc.srv.Close() })
	return rc
}

// client is the outbound client a service would build, with the
// receiver's loopback address named as LTI_ALLOW_INSECURE_HOSTS names a
// test platform's.
func (rc *receiver) client(t *testing.T) *outbound.Client {
	u, err := url.Parse(rc.srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	return outbound.NewClient(outbound.Policy{InsecureHosts: []string{u.Host}}, webhook.Timeout)
}

func TestSenderAgainstARealReceiver(t *testing.T) {
	secret := webhook.NewSecret()
	rc := newReceiver(t, secret)
	sender := webhook.NewSender(rc.client(t))
	ctx := context.Background()
	body := []byte(`{"id":"evt_1","type":"workspace.created"}`)

	o := sender.Send(ctx, rc.srv.URL+"/ok", "evt_1", body, secret)
	if o.Verdict != webhook.Delivered || o.Status != 200 || o.Response != `{"received":true}` || o.Duration <= 0 || o.Err != nil {
		t.Errorf("2xx: %+v", o)
	}

	o = sender.Send(ctx, rc.srv.URL+"/gone", "evt_1", body, secret)
	if o.Verdict != webhook.Gone || o.Status != http.StatusGone {
		t.Errorf("410: %+v", o)
	}
	if _, again := webhook.DefaultSchedule.NextAttempt(o, 1, fixed(0.5)); again {
		t.Error("410 schedules another attempt")
	}

	o = sender.Send(ctx, rc.srv.URL+"/busy", "evt_1", body, secret)
	if o.Verdict != webhook.Failed || o.Status != http.StatusServiceUnavailable || o.RetryAfter != 2*time.Minute {
		t.Errorf("503 with Retry-After: %+v", o)
	}
	if wait, _ := webhook.DefaultSchedule.NextAttempt(o, 1, fixed(0.5)); wait != 2*time.Minute {
		t.Errorf("503 with Retry-After 120 after the first attempt: next in %v, want 2m", wait)
	}

	o = sender.Send(ctx, rc.srv.URL+"/moved", "evt_1", body, secret)
	if o.Verdict != webhook.Failed || o.Status != http.StatusTemporaryRedirect || rc.redirected.Load() != 0 {
		t.Errorf("a redirect: %+v, followed %d times; want the 307 itself, a failure", o, rc.redirected.Load())
	}

	o = sender.Send(ctx, rc.srv.URL+"/huge", "evt_1", body, secret)
	if o.Verdict != webhook.Delivered || len(o.Response) > webhook.MaxResponseBytes || len(o.Response) < webhook.MaxResponseBytes-1 ||
		!utf8.ValidString(o.Response) || !strings.HasPrefix("a"+strings.Repeat("é", 512), o.Response) {
		t.Errorf("a 2 MiB answer: %d bytes kept (valid UTF-8: %v), want its first 1 KiB of whole characters",
			len(o.Response), utf8.ValidString(o.Response))
	}

	if got := rc.verified.Load(); got != 5 {
		t.Errorf("the receiver verified %d messages, want 5", got)
	}
}

// A receiver that does not answer within the attempt's timeout is a
// failure to retry, not a wait without end; one whose status came in
// time has answered.
func TestSenderTimesOut(t *testing.T) {
	secret := webhook.NewSecret()
	rc := newReceiver(t, secret)
	sender := webhook.NewSender(rc.client(t), webhook.WithTimeout(200*time.Millisecond))

	o := sender.Send(context.Background(), rc.srv.URL+"/slow", "evt_1", []byte(`{}`), secret)
	if o.Verdict != webhook.Failed || o.Status != 0 || !errors.Is(o.Err, webhook.ErrTimeout) {
		t.Fatalf("a receiver past the timeout: %+v, want Failed with ErrTimeout", o)
	}
	if wait, again := webhook.DefaultSchedule.NextAttempt(o, 1, fixed(0.5)); !again || wait != 5*time.Second {
		t.Errorf("after a timeout: next in %v (%v), want 5s", wait, again)
	}

	// A receiver that answered 200 has the message, even if its body
	// then stalls past the timeout.
	o = sender.Send(context.Background(), rc.srv.URL+"/trickle", "evt_1", []byte(`{}`), secret)
	if o.Verdict != webhook.Delivered || o.Status != 200 || o.Response != `{"received":` || o.Err != nil {
		t.Errorf("a 200 whose body stalls: %+v, want Delivered with the body's start", o)
	}
}

// A URL the outbound rule refuses is never called, and the failure does
// not quote the URL (it may carry its owner's token).
func TestSenderKeepsTheOutboundRule(t *testing.T) {
	secret := webhook.NewSecret()
	rc := newReceiver(t, secret)
	sender := webhook.NewSender(outbound.NewClient(outbound.Policy{}, webhook.Timeout))
	u, _ := url.Parse(rc.srv.URL)

	o := sender.Send(context.Background(), "https://"+u.Host+"/ok?token=s3cr3t", "evt_1", []byte(`{}`), secret)
	if o.Verdict != webhook.Failed || !errors.Is(o.Err, outbound.ErrNotPublic) || strings.Contains(o.Err.Error(), "s3cr3t") {
		t.Errorf("a loopback URL not named as insecure: %+v, want Failed with ErrNotPublic", o)
	}
	if rc.verified.Load() != 0 {
		t.Error("the refused URL was called")
	}
}

func TestExcerpt(t *testing.T) {
	long := strings.Repeat("x", webhook.MaxResponseBytes)
	for _, c := range []struct {
		name string
		in   string
		want string
	}{
		{"short", `{"ok":true}`, `{"ok":true}`},
		{"empty", "", ""},
		{"a character cut by the read", long[:webhook.MaxResponseBytes-1] + "\xc3", long[:webhook.MaxResponseBytes-1]},
		{"a four-byte character cut", long[:webhook.MaxResponseBytes-2] + "\xf0\x9d", long[:webhook.MaxResponseBytes-2]},
		{"invalid bytes replaced", "a\xffb", "a\uFFFDb"},
		{"a run of invalid bytes replaced once", "a\xff\xfe\xfdb", "a\uFFFDb"},
		{"replacements kept within the bound", strings.Repeat("\xffx", webhook.MaxResponseBytes/2), strings.Repeat("\uFFFDx", webhook.MaxResponseBytes/4)},
	} {
		got := webhook.Excerpt([]byte(c.in))
		if got != c.want || len(got) > webhook.MaxResponseBytes || !utf8.ValidString(got) {
			t.Errorf("%s: Excerpt = %.40q (%d bytes), want %.40q", c.name, got, len(got), c.want)
		}
	}
}
