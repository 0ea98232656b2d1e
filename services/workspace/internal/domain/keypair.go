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

// KeyPair is an app key and its secret as stored: the secret is kept sealed
// (encrypted, so the keys route can return it) and as a keyed digest (to
// verify it without decrypting). Neither is usable without the service's keys.
type KeyPair struct {
	AppKey       string
	SealedSecret []byte
	SecretDigest []byte
	Role         KeyRole
	Tags         []Tag
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// HasRESTAccess reports whether the pair may call the API.
func (k KeyPair) HasRESTAccess() bool {
	return slices.Contains(k.Tags, RESTAccessTag)
}
