// Package webhook is the wire side of signed webhooks, to the Standard
// Webhooks specification v1 (standard-webhooks/standard-webhooks,
// spec/standard-webhooks.md), so that receivers can verify what we send
// with that project's libraries: an endpoint's secret, the signature and
// headers of a message, one attempt to deliver it and what its outcome
// means, and when the next attempt is due.
//
// It holds no state and decides nothing about storage. Keeping the
// messages and their attempts, the order in which an endpoint receives
// them, making sure one replica makes each attempt (leases, conditional
// claims), disabling an endpoint, and sealing its secrets are its
// caller's: this package says what an attempt's outcome asks for
// (Schedule.NextAttempt), and the caller records it.
package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The headers of a message, as the specification names them.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// secretPrefix marks a secret's text, as the specification suggests, so
// that a receiver's library and a human tell it from other keys.
const secretPrefix = "whsec_"

// The length of a secret's key: NewSecret's, and the bounds the
// specification sets for one given to ParseSecret.
const (
	secretBytes    = 32
	minSecretBytes = 24
	maxSecretBytes = 64
)

// ErrMalformedSecret: ParseSecret's input is not a secret's text.
var ErrMalformedSecret = errors.New("webhook: a secret is whsec_ followed by the base64 of 24 to 64 bytes")

// Secret is an endpoint's signing key. Formatted with any verb it prints
// a placeholder, so a secret that slips into a log line or an error
// stays secret; Reveal is the one way to its text.
type Secret struct {
	key []byte
}

// NewSecret returns a secret of 32 random bytes.
func NewSecret() Secret {
	key := make([]byte, secretBytes)
	_, _ = rand.Read(key) // crypto/rand.Read never fails (it crashes the program instead)
	return Secret{key: key}
}

// ParseSecret reads a secret's text, as Reveal writes it.
func ParseSecret(text string) (Secret, error) {
	encoded, ok := strings.CutPrefix(text, secretPrefix)
	if !ok {
		return Secret{}, ErrMalformedSecret
	}
	key, err := base64.StdEncoding.DecodeString(encoded)
	if err != nil || len(key) < minSecretBytes || len(key) > maxSecretBytes {
		return Secret{}, ErrMalformedSecret
	}
	return Secret{key: key}, nil
}

// Reveal returns the secret's text, "whsec_" and the base64 of its key:
// what the endpoint's owner is shown once, and what is sealed to store it.
func (s Secret) Reveal() string {
	return secretPrefix + base64.StdEncoding.EncodeToString(s.key)
}

// Format prints a placeholder whatever the verb.
func (Secret) Format(f fmt.State, _ rune) {
	_, _ = io.WriteString(f, secretPrefix+"[redacted]")
}

// Sign returns the webhook-signature header of a message: "v1," and the
// base64 of HMAC-SHA256(key, id.timestamp.body) for each secret, space
// separated. During a rotation's overlap the caller passes the new secret
// first, then the old one, and a receiver that knows either accepts it.
func Sign(msgID string, ts time.Time, body []byte, secrets ...Secret) string {
	signed := make([]byte, 0, len(msgID)+len(body)+22) // two dots, at most 20 digits
	signed = append(signed, msgID...)
	signed = append(signed, '.')
	signed = strconv.AppendInt(signed, ts.Unix(), 10)
	signed = append(signed, '.')
	signed = append(signed, body...)

	signatures := make([]string, len(secrets))
	for i, s := range secrets {
		mac := hmac.New(sha256.New, s.key)
		mac.Write(signed)
		signatures[i] = "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	}
	return strings.Join(signatures, " ")
}

// Headers returns the headers of a message whose body is JSON, signed
// with secrets (at least one) at ts: webhook-id (the message's id, the
// same on every attempt, by which a receiver drops a message it already
// has), webhook-timestamp (ts in Unix seconds; a receiver refuses one far
// from its clock, so ts is the attempt's time), webhook-signature and
// content-type.
func Headers(msgID string, ts time.Time, body []byte, secrets ...Secret) http.Header {
	h := make(http.Header, 4)
	h.Set(HeaderID, msgID)
	h.Set(HeaderTimestamp, strconv.FormatInt(ts.Unix(), 10))
	h.Set(HeaderSignature, Sign(msgID, ts, body, secrets...))
	h.Set("Content-Type", "application/json")
	return h
}
