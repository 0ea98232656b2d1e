// Package domain holds what the auth service is about: SDK tokens, the
// sessions they stand for, and the store that keeps them. It imports only
// the standard library and the shared fault kinds and identifier rules.
package domain

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
)

// TokenTTL is how long a token lives: exactly 8 hours from issue.
const TokenTTL = 8 * time.Hour

// tokenBytes is the size of a token before encoding.
const tokenBytes = 32

// Token is a bearer token as the caller holds it: 32 random bytes, standard
// Base64. It is shown once; the service keeps only its Digest.
type Token string

// NewToken returns a fresh random token.
func NewToken() Token {
	b := make([]byte, tokenBytes)
	_, _ = rand.Read(b) // never fails (crypto/rand panics on a broken source)
	return Token(base64.StdEncoding.EncodeToString(b))
}

// Valid reports whether t has the shape of a token, so garbage never
// reaches the store: the one text of 32 bytes in standard Base64. The
// length rules out the line breaks the decoder skips even in strict mode,
// which would give one token several texts.
func (t Token) Valid() bool {
	if len(t) != base64.StdEncoding.EncodedLen(tokenBytes) {
		return false
	}
	b, err := base64.StdEncoding.Strict().DecodeString(string(t))
	return err == nil && len(b) == tokenBytes
}

// Digest is the SHA-256 of a token's text: the only form a store keeps.
type Digest [sha256.Size]byte

// Digest returns the token's digest.
func (t Token) Digest() Digest { return sha256.Sum256([]byte(t)) }

// Session is what a token stands for.
type Session struct {
	Email       string
	WorkspaceID string
	IssuedAt    time.Time
	ExpiresAt   time.Time
	// LTILaunchID is the launch id of the LTI 1.3 resource-link launch
	// that opened the session (the workspace service remembers it); empty
	// for any other session.
	LTILaunchID string
}

// UserKey is the form of an email that identifies a user within a
// workspace: addresses differing only in case are one user.
func UserKey(email string) string { return strings.ToLower(email) }

// ErrTokenNotFound: the token is unknown, expired or revoked. Callers get
// one answer for all three.
var ErrTokenNotFound = fault.New(fault.Unauthenticated, "the token is unknown, expired or revoked")

// TokenStore keeps sessions by token digest.
//
// Implementations must never keep a raw token, and must never leave a
// stored token that a revocation of its user or workspace would miss, even
// if the process dies between two writes. A store that cannot be reached
// answers fault.Unavailable, within the context's deadline.
type TokenStore interface {
	// Save stores s under d until s.ExpiresAt.
	Save(ctx context.Context, d Digest, s Session) error
	// Lookup returns the session of a live, unrevoked token, or
	// ErrTokenNotFound. It leaves out the session's LTILaunchID, which
	// only the SDK's read of its own session needs, so that the checks of
	// a token (introspection above all) read nothing more for it.
	Lookup(ctx context.Context, d Digest) (Session, error)
	// LookupWithLaunch is Lookup with the session's LTILaunchID.
	LookupWithLaunch(ctx context.Context, d Digest) (Session, error)
	// Revoke revokes one token; revoking an unknown token is not an error.
	Revoke(ctx context.Context, d Digest) error
	// RevokeUser revokes every token of the user (by UserKey(email)) in
	// the workspace.
	RevokeUser(ctx context.Context, workspaceID, email string) error
	// RevokeWorkspace revokes every token of the workspace.
	RevokeWorkspace(ctx context.Context, workspaceID string) error
}
