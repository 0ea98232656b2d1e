package domain

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/liveproctor/workspaces/pkg/fault"
)

// Bounds of a workspace's key pairs.
const (
	// MaxActiveKeys bounds the pairs a workspace holds that have not
	// expired: the workspace document and each replica's credential cache
	// stay small, and ten leave room for a rotation's overlap of every pair
	// a vendor runs (server, LTI, a few per environment).
	MaxActiveKeys = 10
	// MaxKeyNameLength bounds a key pair's name, in characters.
	MaxKeyNameLength = 100
	// MaxKeyTags bounds a key pair's tags; each part is at most
	// maxTagPartLength characters.
	MaxKeyTags       = 20
	maxTagPartLength = 200
	// MaxExpireAfter bounds a rotation's overlap; DefaultExpireAfter is the
	// overlap when the caller names none.
	MaxExpireAfter     = 7 * 24 * time.Hour
	DefaultExpireAfter = 24 * time.Hour
)

// Errors of the key pair rules.
var (
	// ErrKeyNotFound: the workspace has no such (unexpired) pair.
	ErrKeyNotFound = fault.New(fault.NotFound, "key pair not found")
	// ErrLastLastingKey: the change would leave no REST pair without an
	// expiry, and so no way to call the API once the others expire.
	ErrLastLastingKey = fault.New(fault.FailedPrecondition,
		"the workspace must keep a REST key pair (tagged allow-rest-api-access) that does not expire: "+
			"create or rotate one first")
	// ErrTooManyKeys: the workspace holds MaxActiveKeys pairs that have not
	// expired.
	ErrTooManyKeys = fault.New(fault.FailedPrecondition,
		"the workspace already has %d key pairs that have not expired: revoke one, or wait for a rotated one to expire", MaxActiveKeys)
	// ErrKeyExpiring: the pair was rotated already; its successor is the
	// one to rotate.
	ErrKeyExpiring = fault.New(fault.FailedPrecondition,
		"the key pair was rotated already and expires at its expiresAt: rotate its successor, or revoke it")
)

// NewKey is what a caller chooses for a key pair it creates.
type NewKey struct {
	Name string
	Tags []Tag
}

// CheckNewKey checks a new pair's name and tags, naming every field that
// breaks a rule, and returns them as they are kept (the name trimmed).
func CheckNewKey(k NewKey) (NewKey, error) {
	var v violations
	sent := utf8.RuneCountInString(k.Name)
	k.Name = strings.TrimSpace(k.Name)
	switch {
	case k.Name == "":
		v.add("name", "is required")
	case sent > MaxKeyNameLength:
		v.add("name", fmt.Sprintf("must be at most %d characters", MaxKeyNameLength))
	case hasControl(k.Name):
		v.add("name", "must not contain control characters")
	}
	if len(k.Tags) > MaxKeyTags {
		v.add("tags", fmt.Sprintf("must have at most %d elements", MaxKeyTags))
	} else {
		for i, t := range k.Tags {
			for _, part := range []struct{ name, value string }{{"key", t.Key}, {"type", t.Type}, {"value", t.Value}} {
				field := fmt.Sprintf("tags[%d].%s", i, part.name)
				switch {
				case part.name == "key" && part.value == "":
					v.add(field, "is required")
				case utf8.RuneCountInString(part.value) > maxTagPartLength:
					v.add(field, fmt.Sprintf("must be at most %d characters", maxTagPartLength))
				case hasControl(part.value):
					v.add(field, "must not contain control characters")
				}
			}
		}
	}
	k.Tags = slices.Clone(k.Tags)
	if k.Tags == nil {
		k.Tags = []Tag{}
	}
	return k, v.err()
}

// CheckExpireAfter checks a rotation's overlap: 0 to MaxExpireAfter.
func CheckExpireAfter(d time.Duration) error {
	if d < 0 || d > MaxExpireAfter {
		return fault.InvalidField("expireAfter", fmt.Sprintf("must be between 0s and %.0fs (7 days)", MaxExpireAfter.Seconds()))
	}
	return nil
}

// CreateKey adds a key pair named and tagged as k chooses. A pair with the
// REST access tag is a server pair; one without it can only sign LTI
// launches, so it is an LTI pair. It returns the pair added.
func (w *Workspace) CreateKey(k NewKey, sealed SealedKey, now time.Time) (KeyPair, error) {
	if w.Deleted() {
		return KeyPair{}, ErrDeleted
	}
	k, err := CheckNewKey(k)
	if err != nil {
		return KeyPair{}, err
	}
	if w.activeKeys(now) >= MaxActiveKeys {
		return KeyPair{}, ErrTooManyKeys
	}
	role := RoleLTI
	if slices.Contains(k.Tags, RESTAccessTag) {
		role = RoleServer
	}
	p := NewKeyPair(role, sealed, now)
	p.Name, p.Tags = k.Name, k.Tags
	w.keys = append(w.keys, p)
	w.record(EventKeyPairCreated, keyTarget(p.AppKey), now, nil)
	return p.clone(), nil
}

// RotateKey adds a successor to the pair appKey, with its name, role and
// tags, and makes the pair expire expireAfter from now: both work until
// then. A pair that expires already is not rotated again (its successor
// is). It returns the old pair as it now is and the successor.
func (w *Workspace) RotateKey(appKey string, successor SealedKey, expireAfter time.Duration, now time.Time) (old, added KeyPair, err error) {
	if w.Deleted() {
		return KeyPair{}, KeyPair{}, ErrDeleted
	}
	if err := CheckExpireAfter(expireAfter); err != nil {
		return KeyPair{}, KeyPair{}, err
	}
	i := w.keyIndex(appKey, now)
	if i < 0 {
		return KeyPair{}, KeyPair{}, ErrKeyNotFound
	}
	if !w.keys[i].ExpiresAt.IsZero() {
		return KeyPair{}, KeyPair{}, ErrKeyExpiring
	}
	if w.activeKeys(now) >= MaxActiveKeys {
		return KeyPair{}, KeyPair{}, ErrTooManyKeys
	}
	p := NewKeyPair(w.keys[i].Role, successor, now)
	p.Name, p.Tags = w.keys[i].Name, slices.Clone(w.keys[i].Tags)
	w.keys[i].ExpiresAt, w.keys[i].UpdatedAt = now.Add(expireAfter).Truncate(time.Millisecond), now
	w.keys = append(w.keys, p)
	w.record(EventKeyPairRotated, keyTarget(appKey), now, []string{"expiresAt"})
	w.record(EventKeyPairCreated, keyTarget(p.AppKey), now, nil)
	return w.keys[i].clone(), p.clone(), nil
}

// RevokeKey removes the pair appKey at once and returns it. The workspace
// keeps at least one REST pair that does not expire.
func (w *Workspace) RevokeKey(appKey string, now time.Time) (KeyPair, error) {
	if w.Deleted() {
		return KeyPair{}, ErrDeleted
	}
	i := w.keyIndex(appKey, now)
	if i < 0 {
		return KeyPair{}, ErrKeyNotFound
	}
	removed := w.keys[i]
	rest := slices.Delete(slices.Clone(w.keys), i, i+1)
	if removed.Lasting() && !slices.ContainsFunc(rest, KeyPair.Lasting) {
		return KeyPair{}, ErrLastLastingKey
	}
	w.keys = rest
	w.record(EventKeyPairRevoked, keyTarget(appKey), now, nil)
	return removed.clone(), nil
}

// RemoveExpiredKeys removes the pairs that have expired by now and returns
// them. It never removes a lasting pair, so the workspace stays reachable.
func (w *Workspace) RemoveExpiredKeys(now time.Time) []KeyPair {
	var removed []KeyPair
	w.keys = slices.DeleteFunc(w.keys, func(k KeyPair) bool {
		if k.Expired(now) {
			removed = append(removed, k.clone())
			w.record(EventKeyPairExpired, keyTarget(k.AppKey), now, nil)
			return true
		}
		return false
	})
	return removed
}

// ActiveKey returns the pair appKey if it has not expired by now.
func (w *Workspace) ActiveKey(appKey string, now time.Time) (KeyPair, bool) {
	if i := w.keyIndex(appKey, now); i >= 0 {
		return w.keys[i].clone(), true
	}
	return KeyPair{}, false
}

// keyIndex is the index of the unexpired pair appKey, or -1. An expired
// pair is as good as gone, whether or not it was swept yet.
func (w *Workspace) keyIndex(appKey string, now time.Time) int {
	return slices.IndexFunc(w.keys, func(k KeyPair) bool { return k.AppKey == appKey && !k.Expired(now) })
}

// activeKeys counts the pairs that have not expired by now.
func (w *Workspace) activeKeys(now time.Time) int {
	n := 0
	for _, k := range w.keys {
		if !k.Expired(now) {
			n++
		}
	}
	return n
}

// AddBootstrapKey adds the configured key pair of the root workspace. The
// configuration decides it, so it is exempt from MaxActiveKeys.
func (w *Workspace) AddBootstrapKey(sealed SealedKey, now time.Time) error {
	if w.Deleted() {
		return ErrDeleted
	}
	w.keys = append(w.keys, NewKeyPair(RoleBootstrap, sealed, now))
	w.record(EventKeyPairCreated, keyTarget(sealed.AppKey), now, nil)
	return nil
}

// keyTarget is a key pair as the target of an event: its app key, never
// its secret.
func keyTarget(appKey string) Target { return Target{Type: TargetKeyPair, ID: appKey} }
