package redisstore

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/liveproctor/workspaces/services/auth/internal/domain"
)

// Key names. Everything about one workspace shares the hash tag
// {ws:<id>}, so it lives in one Cluster slot and one script can touch it.
// A token's own key cannot: a lookup knows only the token.
//
//	t:<id>                   string: the token's session (see value.go)
//	{ws:<id>}:gen            the workspace's revocation generation
//	{ws:<id>}:u:<user>:gen   the user's revocation generation
//
// A token's <id> is the hex of the first 16 bytes of its SHA-256 digest
// (keyIDBytes), and <user> the hex SHA-256 of domain.UserKey(email):
// neither a token nor an address appears in a key.
//
// Stores written before this layout kept a token as a hash under
// tok:<full hex digest> and indexed it in {ws:<id>}:tokens and
// {ws:<id>}:u:<user>:tokens. Lookup and Revoke still read that key for a
// token's lifetime after the process starts (see legacy.go); the index
// sets are never written again and expire on their own.
type keys struct {
	workspaceGen, userGen string
}

// keyIDBytes is how much of a token's digest names its key. 128 bits keep
// accidental collisions out of reach (about 2^64 live tokens before one is
// likely) and finding a token that shares a live one's key as hard as
// guessing the token, at half the bytes per key of the whole digest.
const keyIDBytes = 16

// tokenKey is the key of the token with digest d.
func tokenKey(d domain.Digest) string { return "t:" + hex.EncodeToString(d[:keyIDBytes]) }

// keysOf returns the workspace's counter and that of the user with email
// in it (meaningless when email is "").
func keysOf(workspaceID, email string) keys {
	user := sha256.Sum256([]byte(domain.UserKey(email)))
	ws := "{ws:" + workspaceID + "}:"
	return keys{
		workspaceGen: ws + "gen",
		userGen:      ws + "u:" + hex.EncodeToString(user[:]) + ":gen",
	}
}
