package redisstore

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"

	"github.com/liveproctor/workspaces/services/auth/internal/domain"
)

// Key names. Everything about one workspace shares the hash tag
// {ws:<id>}, so it lives in one Cluster slot and one script can touch it.
// A token's own key cannot: a lookup knows only the token.
//
//	t:<id>                   string: the token's session (see value.go)
//	{t:<id>}:lti             string: the LTI 1.3 launch id of the session,
//	                         for sessions a launch opened only
//	{ws:<id>}:gen            the workspace's revocation generation
//	{ws:<id>}:u:<user>:gen   the user's revocation generation
//
// The launch id has a key of its own, rather than a place in the token's
// value, so that the value stays as replicas of earlier versions read it:
// during a rolling deploy they serve a launch's session too (without its
// launch id, which they do not know of). Its hash tag is the token's key
// name, which has no braces and so hashes whole: both keys live in one
// Cluster slot, are written by one script or transaction with one expiry,
// and are read, or deleted, by one command.
//
// A token's <id> is the first 16 bytes of its SHA-256 digest (keyIDBytes)
// in base64url without padding (22 characters), and <user> the hex SHA-256
// of domain.UserKey(email): neither a token nor an address appears in a
// key. The base64url alphabet has no braces, so a token's key never
// carries a hash tag by accident.
//
// Base64 rather than hex is for memory. Redis keeps a key name as an sds
// string: a header (1 byte for names under 32 bytes, 3 from 32 to 255),
// the name, and a NUL; jemalloc rounds each allocation up to a size class,
// 16 bytes apart up to 128. The 24-byte name takes 1+24+1 = 26 bytes, a
// 32-byte class; the 34-byte hex name of the layout before 2026-11-26 took
// 3+34+1 = 38, a 48-byte class. That is 16 bytes less for every token.
//
// Tokens of earlier layouts are not read (CHANGELOG.md, 2026-11-28): their
// keys expire on their own, and their holders log in again.
type keys struct {
	workspaceGen, userGen string
}

// keyIDBytes is how much of a token's digest names its key. 128 bits keep
// accidental collisions out of reach (about 2^64 live tokens before one is
// likely) and finding a token that shares a live one's key as hard as
// guessing the token, at half the bytes per key of the whole digest.
const keyIDBytes = 16

// tokenKey is the key of the token with digest d.
func tokenKey(d domain.Digest) string {
	return "t:" + base64.RawURLEncoding.EncodeToString(d[:keyIDBytes])
}

// launchKey is the key of the launch id of the session of the token with
// digest d.
func launchKey(d domain.Digest) string {
	return "{" + tokenKey(d) + "}:lti"
}

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
