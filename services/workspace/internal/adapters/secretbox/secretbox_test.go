package secretbox_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/secretbox"
)

func newBox(t *testing.T, fill byte) *secretbox.Box {
	t.Helper()
	b, err := secretbox.New(bytes.Repeat([]byte{fill}, 32), bytes.Repeat([]byte{fill + 1}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSealOpen(t *testing.T) {
	box := newBox(t, 1)
	sealed, err := box.Seal("key-1", "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte("s3cret")) {
		t.Fatal("sealed value contains the plaintext")
	}
	got, err := box.Open("key-1", sealed)
	if err != nil || got != "s3cret" {
		t.Fatalf("Open = %q, %v", got, err)
	}
	again, _ := box.Seal("key-1", "s3cret")
	if bytes.Equal(sealed, again) {
		t.Error("two seals of the same secret are equal: nonce reused")
	}
}

func TestOpenRefuses(t *testing.T) {
	box := newBox(t, 1)
	sealed, _ := box.Seal("key-1", "s3cret")
	tampered := append([]byte(nil), sealed...)
	tampered[len(tampered)-1] ^= 1
	tests := map[string]struct {
		box    *secretbox.Box
		appKey string
		sealed []byte
	}{
		"other app key":  {box, "key-2", sealed},
		"other KEK":      {newBox(t, 7), "key-1", sealed},
		"tampered":       {box, "key-1", tampered},
		"truncated":      {box, "key-1", sealed[:5]},
		"unknown format": {box, "key-1", append([]byte{9}, sealed[1:]...)},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := tt.box.Open(tt.appKey, tt.sealed); !errors.Is(err, secretbox.ErrOpen) {
				t.Errorf("Open = %v, want ErrOpen", err)
			}
		})
	}
}

func TestDigest(t *testing.T) {
	box := newBox(t, 1)
	d := box.Digest("key-1", "s3cret")
	if len(d) != 32 || !bytes.Equal(d, box.Digest("key-1", "s3cret")) {
		t.Fatal("digest is not a stable 32-byte value")
	}
	for _, other := range [][]byte{box.Digest("key-2", "s3cret"), box.Digest("key-1", "s3cres"), newBox(t, 7).Digest("key-1", "s3cret")} {
		if bytes.Equal(d, other) {
			t.Error("digest collides across key, secret or HMAC key")
		}
	}
}

func TestNewRejectsShortKeys(t *testing.T) {
	if _, err := secretbox.New(make([]byte, 16), make([]byte, 32)); err == nil {
		t.Error("New accepted a 16-byte key-encryption key")
	}
}

func BenchmarkDigest(b *testing.B) {
	box, _ := secretbox.New(make([]byte, 32), make([]byte, 32))
	for b.Loop() {
		box.Digest("6f1c2a8e-8a0b-4f5e-9a51-0d6c7b1e2f3a", "0c9d8e7f-6a5b-4c3d-8e2f-1a0b9c8d7e6f")
	}
}
