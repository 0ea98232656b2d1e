package webhook_test

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/liveproctor/workspaces/pkg/webhook"
)

func TestNewSecretRoundTrips(t *testing.T) {
	s := webhook.NewSecret()
	text := s.Reveal()
	if !strings.HasPrefix(text, "whsec_") || len(text) != len("whsec_")+44 { // 32 bytes in base64
		t.Fatalf("Reveal() = %q, want whsec_ and 44 base64 characters", text)
	}
	parsed, err := webhook.ParseSecret(text)
	if err != nil || parsed.Reveal() != text {
		t.Fatalf("ParseSecret(Reveal()) = %v, %v", parsed.Reveal(), err)
	}
	if webhook.NewSecret().Reveal() == text {
		t.Fatal("two new secrets are equal")
	}
	for _, bad := range []string{
		"", strings.TrimPrefix(text, "whsec_"), "whsec_not base64!",
		"whsec_" + strings.Repeat("A", 28), // 21 bytes: shorter than the spec's 24
		"whsec_" + strings.Repeat("A", 88), // 66 bytes: longer than its 64
	} {
		if _, err := webhook.ParseSecret(bad); !errors.Is(err, webhook.ErrMalformedSecret) {
			t.Errorf("ParseSecret(%q) = %v, want ErrMalformedSecret", bad, err)
		}
	}
}

// A secret formatted by mistake (a log line, an error) prints no key.
func TestSecretNeverFormats(t *testing.T) {
	s := webhook.NewSecret()
	key := strings.TrimPrefix(s.Reveal(), "whsec_")
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
		if got := fmt.Sprintf(verb, s); strings.Contains(got, key) || !strings.Contains(got, "redacted") {
			t.Errorf("Sprintf(%s, secret) = %q", verb, got)
		}
	}
	if got := fmt.Sprint(struct{ S webhook.Secret }{s}); strings.Contains(got, key) {
		t.Errorf("a struct holding a secret prints %q", got)
	}
}

// The Standard Webhooks library, an implementation we did not write,
// accepts our signatures, with either secret of a rotation's pair, and
// refuses a message changed on the way.
func TestSignaturesVerifyWithTheStandardLibrary(t *testing.T) {
	newer, older, other := webhook.NewSecret(), webhook.NewSecret(), webhook.NewSecret()
	body := []byte(`{"id":"evt_1","type":"workspace.created","data":{"name":"Zoë's school"}}`)
	now := time.Now()
	h := webhook.Headers("evt_1", now, body, newer, older)

	if got := h.Get("content-type"); got != "application/json" {
		t.Errorf("content-type %q", got)
	}
	if got := h.Get("webhook-timestamp"); got != strconv.FormatInt(now.Unix(), 10) {
		t.Errorf("webhook-timestamp %q, want %d", got, now.Unix())
	}
	if sigs := strings.Fields(h.Get("webhook-signature")); len(sigs) != 2 || !strings.HasPrefix(sigs[0], "v1,") {
		t.Errorf("webhook-signature %q, want two v1 signatures", h.Get("webhook-signature"))
	}
	for name, s := range map[string]webhook.Secret{"new": newer, "old": older} {
		if err := verifier(t, s).Verify(body, h); err != nil {
			t.Errorf("the %s secret: %v", name, err)
		}
	}
	if err := verifier(t, other).Verify(body, h); !errors.Is(err, standardwebhooks.ErrNoMatchingSignature) {
		t.Errorf("another secret: %v, want no matching signature", err)
	}

	tampered := append([]byte(nil), body...)
	tampered[len(tampered)-3] = 'X'
	if err := verifier(t, newer).Verify(tampered, h); !errors.Is(err, standardwebhooks.ErrNoMatchingSignature) {
		t.Errorf("a changed body: %v, want no matching signature", err)
	}
	moved := h.Clone()
	moved.Set("webhook-timestamp", strconv.FormatInt(now.Unix()+1, 10))
	if err := verifier(t, newer).Verify(body, moved); !errors.Is(err, standardwebhooks.ErrNoMatchingSignature) {
		t.Errorf("a changed timestamp: %v, want no matching signature", err)
	}
	renamed := h.Clone()
	renamed.Set("webhook-id", "evt_2")
	if err := verifier(t, newer).Verify(body, renamed); !errors.Is(err, standardwebhooks.ErrNoMatchingSignature) {
		t.Errorf("a changed id: %v, want no matching signature", err)
	}
	stale := webhook.Headers("evt_1", now.Add(-time.Hour), body, newer)
	if err := verifier(t, newer).Verify(body, stale); !errors.Is(err, standardwebhooks.ErrMessageTooOld) {
		t.Errorf("a message signed an hour ago: %v, want too old", err)
	}
}

// The Standard Webhooks libraries' published vector (their Go library's
// webhook_test.go, TestSign; recomputed here with Python's hmac): a change
// in what is signed shows even if the library changed with it.
func TestSignPublishedVector(t *testing.T) {
	s, err := webhook.ParseSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if err != nil {
		t.Fatal(err)
	}
	got := webhook.Sign("msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`), s)
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Fatalf("Sign = %q, want %q", got, want)
	}
}

func verifier(t *testing.T, s webhook.Secret) *standardwebhooks.Webhook {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(s.Reveal())
	if err != nil {
		t.Fatal(err)
	}
	return wh
}
