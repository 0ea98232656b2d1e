package redisstore

import (
	"encoding/base64"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/services/auth/internal/domain"
)

// The bench's session makes the value the package documentation counts
// with, and its key is 24 bytes.
func TestBenchShapes(t *testing.T) {
	iat := time.UnixMilli(1764134400000)
	s := domain.Session{Email: "user0001@bench.example", WorkspaceID: "root", IssuedAt: iat, ExpiresAt: iat.Add(domain.TokenTTL)}
	const want = "2 0 0 1764134400000 28800000 root user0001@bench.example"
	if v := encodeValue("0", "0", s); v != want || len(v) != 56 {
		t.Errorf("encodeValue = %q (%d bytes), want %q", v, len(v), want)
	}
	d := domain.Token("token").Digest()
	if k := tokenKey(d); len(k) != 24 || k != "t:"+base64.RawURLEncoding.EncodeToString(d[:16]) {
		t.Errorf("tokenKey = %q (%d bytes), want t: and 22 characters of base64url", k, len(k))
	}
}

// Sessions of every shape come back exactly.
func TestValueRoundTrip(t *testing.T) {
	base := time.UnixMilli(1764134400123).UTC()
	for _, s := range []domain.Session{
		{Email: "ada@example.com", WorkspaceID: "w", IssuedAt: base, ExpiresAt: base.Add(domain.TokenTTL)},
		{Email: "Ada Lovelace <ada@example.com>", WorkspaceID: "w", IssuedAt: base, ExpiresAt: base.Add(time.Hour)},
		{Email: " two  spaces ", WorkspaceID: "team-7", IssuedAt: base, ExpiresAt: base.Add(time.Millisecond)},
		{Email: "a", WorkspaceID: "w", IssuedAt: base, ExpiresAt: base},
		{Email: "a", WorkspaceID: "w", IssuedAt: base, ExpiresAt: base.Add(-time.Minute)},
		{Email: "a", WorkspaceID: "w", IssuedAt: time.UnixMilli(-5).UTC(), ExpiresAt: time.UnixMilli(7).UTC()},
		{Email: "é@ü.example", WorkspaceID: "w", IssuedAt: base, ExpiresAt: base.Add(400 * 24 * time.Hour)},
	} {
		v := encodeValue("17", "4", s)
		got, ok := decodeValue(v)
		if !ok || got.session != s || got.gen != "17" || got.ugen != "4" {
			t.Errorf("decodeValue(%q) = %+v, %v; want %+v, 17, 4", v, got, ok, s)
		}
	}
}

// Anything but a whole value of version 2 is not a token: version 1, which
// an earlier layout wrote, included.
func TestDecodeValueRejectsMalformed(t *testing.T) {
	for _, v := range []string{
		"",
		"2",
		"2 0 0 1764134400000 28800000 root",
		"2 0 0 1764134400000 28800000 root ",
		"2 0 0 1764134400000 28800000  a@b",
		"2  0 1764134400000 28800000 root a@b",
		"2 0  1764134400000 28800000 root a@b",
		"2 0 0 1764134400000 8h root a@b",
		"2 0 0 1764134400000 28800000.5 root a@b",
		"2 0 0 x 28800000 root a@b",
		"2 0 0 1764134400000 9223372036854775807 root a@b",
		"2 0 0 -1764134400000 -9223372036854775807 root a@b",
		"2 0 0 99999999999999999999 28800000 root a@b",
		"1 0 0 1764134400000 1764163200000 root a@b",
		"0 0 0 1764134400000 28800000 root a@b",
		"3 0 0 1764134400000 28800000 root a@b",
		"12 0 0 1764134400000 28800000 root a@b",
		" 2 0 0 1764134400000 28800000 root a@b",
	} {
		if got, ok := decodeValue(v); ok {
			t.Errorf("decodeValue(%q) = %+v, want a refusal", v, got)
		}
	}
}

// FuzzDecodeValue: whatever a key holds (a damaged or foreign value), the
// decoder answers without panicking, and a value it accepts encodes back
// to one that decodes to the same token.
func FuzzDecodeValue(f *testing.F) {
	f.Add("2 0 0 1764134400000 28800000 root user0001@bench.example")
	f.Add("1 3 4 1764134400000 1764163200000 w Ada Lovelace <ada@example.com>")
	f.Add("2 0 0 9223372036854775807 1 w a")
	f.Add("2 0 0 -5 -5 w a")
	f.Fuzz(func(t *testing.T, v string) {
		got, ok := decodeValue(v)
		if !ok {
			return
		}
		again, ok := decodeValue(encodeValue(got.gen, got.ugen, got.session))
		if !ok || again != got {
			t.Fatalf("%q decodes to %+v, which encodes to a value that decodes to %+v (%v)", v, got, again, ok)
		}
	})
}
