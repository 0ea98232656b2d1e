package domain

import (
	"slices"
	"time"
)

// RESTAccessTag on a key pair lets it call the API. The LTI pair lacks it.
var RESTAccessTag = Tag{Key: "allow-rest-api-access", Type: "string", Value: "TRUE"}

// KeyRole says what a key pair was made for.
type KeyRole string

const (
	// RoleServer is the pair a vendor's back end calls the API with.
	RoleServer KeyRole = "server"
	// RoleLTI is the LTI consumer key and shared secret; it has no API access.
	RoleLTI KeyRole = "lti"
	// RoleBootstrap is the configured pair of the bootstrap workspace.
	RoleBootstrap KeyRole = "bootstrap"
)

// SealedKey is an app key with its secret as the service keeps it: sealed
// (encrypted, so the keys route can return it) and as a keyed digest (to
// verify it without decrypting). Neither is usable without the service's
// keys.
type SealedKey struct {
	AppKey       string
	SealedSecret []byte
	SecretDigest []byte
}

// KeyPair is an app key and its secret as stored, with what it was made for.
type KeyPair struct {
	AppKey       string
	SealedSecret []byte
	SecretDigest []byte
	Role         KeyRole
	// Name is what the workspace calls the pair; a rotation's successor
	// keeps it. Pairs stored before pairs had names are named by role.
	Name      string
	Tags      []Tag
	CreatedAt time.Time
	UpdatedAt time.Time
	// ExpiresAt, when set, is when the pair stops authenticating: a
	// rotated pair's end of overlap. Zero: it does not expire.
	ExpiresAt time.Time
}

// NewKeyPair returns a key pair made for role. Every role but LTI may call
// the API.
func NewKeyPair(role KeyRole, k SealedKey, now time.Time) KeyPair {
	p := KeyPair{
		AppKey:       k.AppKey,
		SealedSecret: k.SealedSecret,
		SecretDigest: k.SecretDigest,
		Role:         role,
		Name:         string(role),
		Tags:         []Tag{},
		CreatedAt:    now,
		UpdatedAt:    now,
	}
	if role != RoleLTI {
		p.Tags = []Tag{RESTAccessTag}
	}
	return p
}

// HasRESTAccess reports whether the pair may call the API.
func (k KeyPair) HasRESTAccess() bool {
	return slices.Contains(k.Tags, RESTAccessTag)
}

// Expired reports whether the pair has stopped authenticating by now.
func (k KeyPair) Expired(now time.Time) bool {
	return !k.ExpiresAt.IsZero() && !now.Before(k.ExpiresAt)
}

// Lasting reports whether the pair is a REST pair without an expiry: what
// keeps a workspace reachable. Every workspace keeps at least one.
func (k KeyPair) Lasting() bool {
	return k.ExpiresAt.IsZero() && k.HasRESTAccess()
}

func (k KeyPair) clone() KeyPair {
	k.SealedSecret = slices.Clone(k.SealedSecret)
	k.SecretDigest = slices.Clone(k.SecretDigest)
	k.Tags = slices.Clone(k.Tags)
	return k
}

// What a workspace does with its key pairs.

// Keys returns copies of the workspace's key pairs.
func (w *Workspace) Keys() []KeyPair {
	keys := make([]KeyPair, len(w.keys))
	for i, k := range w.keys {
		keys[i] = k.clone()
	}
	return keys
}

// KeyByAppKey returns the key pair with the given app key.
func (w *Workspace) KeyByAppKey(appKey string) (KeyPair, bool) {
	for _, k := range w.keys {
		if k.AppKey == appKey {
			return k.clone(), true
		}
	}
	return KeyPair{}, false
}

// KeyByRole returns the first key pair with the given role.
func (w *Workspace) KeyByRole(role KeyRole) (KeyPair, bool) {
	for _, k := range w.keys {
		if k.Role == role {
			return k.clone(), true
		}
	}
	return KeyPair{}, false
}
