// Package secretbox protects key-pair secrets at rest: AES-256-GCM under a
// key-encryption key so the keys route can return them, and HMAC-SHA-256
// under a separate key to verify them without decrypting. A database dump
// alone yields neither.
package secretbox

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
)

// KeySize is the size of both keys, in bytes.
const KeySize = 32

// formatV1 prefixes sealed values, so the format (or the key) can change later.
const formatV1 byte = 1

// Box seals, opens and digests secrets.
type Box struct {
	aead    cipher.AEAD
	hmacKey []byte
}

// New returns a Box over a 32-byte key-encryption key and a 32-byte HMAC key.
func New(encryptionKey, hmacKey []byte) (*Box, error) {
	if len(encryptionKey) != KeySize || len(hmacKey) != KeySize {
		return nil, fmt.Errorf("secretbox: both keys must be %d bytes", KeySize)
	}
	block, err := aes.NewCipher(encryptionKey)
	if err != nil {
		return nil, fmt.Errorf("secretbox: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secretbox: %w", err)
	}
	return &Box{aead: aead, hmacKey: append([]byte(nil), hmacKey...)}, nil
}

// Seal encrypts secret, authenticating appKey with it, as
// version || nonce || ciphertext.
func (b *Box) Seal(appKey, secret string) ([]byte, error) {
	out := make([]byte, 1+b.aead.NonceSize(), 1+b.aead.NonceSize()+len(secret)+b.aead.Overhead())
	out[0] = formatV1
	if _, err := rand.Read(out[1:]); err != nil {
		return nil, fmt.Errorf("secretbox: nonce: %w", err)
	}
	return b.aead.Seal(out, out[1:], []byte(secret), []byte(appKey)), nil
}

// ErrOpen means a sealed value was not made by this box for this app key.
var ErrOpen = errors.New("secretbox: cannot open sealed secret (wrong key-encryption key or tampered value)")

// Open decrypts a value made by Seal for the same app key.
func (b *Box) Open(appKey string, sealed []byte) (string, error) {
	n := b.aead.NonceSize()
	if len(sealed) < 1+n || sealed[0] != formatV1 {
		return "", ErrOpen
	}
	plain, err := b.aead.Open(nil, sealed[1:1+n], sealed[1+n:], []byte(appKey))
	if err != nil {
		return "", ErrOpen
	}
	return string(plain), nil
}

// Digest is HMAC-SHA-256 over appKey and secret, separated by a zero byte
// (neither contains one).
func (b *Box) Digest(appKey, secret string) []byte {
	m := hmac.New(sha256.New, b.hmacKey)
	m.Write([]byte(appKey))
	m.Write([]byte{0})
	m.Write([]byte(secret))
	return m.Sum(nil)
}
