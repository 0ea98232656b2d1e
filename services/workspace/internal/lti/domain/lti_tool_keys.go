package domain

import (
	"context"
	"crypto/rsa"
	"errors"
	"fmt"
	"slices"
	"time"
)

// ToolKey is one of the tool's LTI 1.3 signing keys: its public half is
// published in the tool's JWKS from when it is made, it signs from
// SignsFrom, and it stays published until Overlap after a newer key took
// over (RetiredAt), so a platform that cached the JWKS, or holds a token it
// signed, still finds it.
type ToolKey struct {
	KID    string
	Public *rsa.PublicKey
	// Sealed is the PKCS #8 private key sealed by the secret box, bound to
	// the kid; it is opened only to sign.
	Sealed    []byte
	CreatedAt time.Time
	SignsFrom time.Time
	RetiredAt time.Time // zero while it signs or waits to
}

// ToolKeyRotation is when keys change: a key signs for Every; its
// successor is published Lead before it signs (longer than platforms keep
// a JWKS: 24 h at most); a replaced key stays published for Overlap.
type ToolKeyRotation struct {
	Every, Lead, Overlap time.Duration
}

// DefaultToolKeyRotation: 90 days per key, the next published 2 days
// ahead, the last kept 7 days.
var DefaultToolKeyRotation = ToolKeyRotation{Every: 90 * 24 * time.Hour, Lead: 48 * time.Hour, Overlap: 7 * 24 * time.Hour}

// Check refuses a rotation whose successor could not be published ahead
// of its use.
func (r ToolKeyRotation) Check() error {
	if r.Lead <= 0 || r.Overlap <= 0 || r.Every <= r.Lead {
		return fmt.Errorf("key rotation: every (%s) must be longer than the lead (%s), and both the lead and the overlap positive", r.Every, r.Lead)
	}
	return nil
}

// ToolKeys is the tool's key set, stored as one document changed only by
// a revision-checked write.
type ToolKeys struct {
	Keys     []ToolKey
	Revision int64 // 0: never stored
}

// ErrNoToolKey: the set has no key that signs yet.
var ErrNoToolKey = errors.New("the tool has no LTI signing key yet")

// Signing returns the key that signs at now: the newest one whose SignsFrom
// has come.
func (s ToolKeys) Signing(now time.Time) (ToolKey, error) {
	var best *ToolKey
	for i, k := range s.Keys {
		if !k.SignsFrom.After(now) && (best == nil || k.SignsFrom.After(best.SignsFrom)) {
			best = &s.Keys[i]
		}
	}
	if best == nil {
		return ToolKey{}, ErrNoToolKey
	}
	return *best, nil
}

// Published returns the keys the tool's JWKS lists: all the set holds,
// oldest first.
func (s ToolKeys) Published() []ToolKey {
	keys := slices.Clone(s.Keys)
	slices.SortFunc(keys, func(a, b ToolKey) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return keys
}

// NewToolKey makes a key (sealed, with its kid) for the set.
type NewToolKey func(ctx context.Context) (ToolKey, error)

// Rotate brings the set up to date at now: the first key signs at once;
// the signing key's successor is made Lead before it is due; a key whose
// successor signs is retired; a retired key is dropped after Overlap. It
// reports whether anything changed.
func (s *ToolKeys) Rotate(ctx context.Context, now time.Time, r ToolKeyRotation, newKey NewToolKey) (bool, error) {
	changed := s.dropRetired(now, r)
	signing, err := s.Signing(now)
	if errors.Is(err, ErrNoToolKey) {
		return true, s.add(ctx, now, now, newKey)
	}
	if retired := s.retireReplaced(signing); retired {
		changed = true
	}
	due := signing.SignsFrom.Add(r.Every)
	if !now.Before(due.Add(-r.Lead)) && !s.waiting(now) {
		if earliest := now.Add(r.Lead); due.Before(earliest) {
			due = earliest // checked late: the successor still gets its lead
		}
		return true, s.add(ctx, now, due, newKey)
	}
	return changed, nil
}

// add makes a key that signs from signsFrom.
func (s *ToolKeys) add(ctx context.Context, now, signsFrom time.Time, newKey NewToolKey) error {
	k, err := newKey(ctx)
	if err != nil {
		return fmt.Errorf("make an LTI signing key: %w", err)
	}
	k.CreatedAt, k.SignsFrom = now, signsFrom
	s.Keys = append(s.Keys, k)
	return nil
}

// waiting reports whether a key waits to sign after now.
func (s *ToolKeys) waiting(now time.Time) bool {
	return slices.ContainsFunc(s.Keys, func(k ToolKey) bool { return k.SignsFrom.After(now) })
}

// retireReplaced retires the keys older than signing that are not yet.
func (s *ToolKeys) retireReplaced(signing ToolKey) bool {
	changed := false
	for i, k := range s.Keys {
		if k.RetiredAt.IsZero() && k.SignsFrom.Before(signing.SignsFrom) {
			s.Keys[i].RetiredAt = signing.SignsFrom
			changed = true
		}
	}
	return changed
}

// dropRetired drops the keys retired Overlap ago.
func (s *ToolKeys) dropRetired(now time.Time, r ToolKeyRotation) bool {
	n := len(s.Keys)
	s.Keys = slices.DeleteFunc(s.Keys, func(k ToolKey) bool {
		return !k.RetiredAt.IsZero() && !now.Before(k.RetiredAt.Add(r.Overlap))
	})
	return len(s.Keys) != n
}

// ToolKeyStore keeps the tool's key set.
type ToolKeyStore interface {
	// ToolKeys returns the stored set; an empty set of revision 0 when none
	// was stored.
	ToolKeys(ctx context.Context) (ToolKeys, error)
	// SaveToolKeys stores s when the stored revision is still s.Revision,
	// as revision s.Revision+1; ErrRevisionChanged otherwise.
	SaveToolKeys(ctx context.Context, s ToolKeys) error
}
