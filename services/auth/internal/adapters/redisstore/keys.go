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
//	tok:<digest>                  hash: email, workspaceId, issuedAt, expiresAt, gen, ugen
//	{ws:<id>}:tokens              set of the workspace's token digests
//	{ws:<id>}:u:<user>:tokens     set of one user's token digests
//	{ws:<id>}:gen                 the workspace's revocation generation
//	{ws:<id>}:u:<user>:gen        the user's revocation generation
//
// <digest> is the hex SHA-256 of the token and <user> the hex SHA-256 of
// domain.UserKey(email): neither a token nor an address appears in a key.
type keys struct {
	workspaceTokens, userTokens, workspaceGen, userGen string
}

// Fields of a token's hash. issuedAt and expiresAt are Unix milliseconds;
// gen and ugen are the workspace and user generations it was issued under.
const (
	fieldEmail       = "email"
	fieldWorkspaceID = "workspaceId"
	fieldIssuedAt    = "issuedAt"
	fieldExpiresAt   = "expiresAt"
	fieldGen         = "gen"
	fieldUserGen     = "ugen"
)

// digestHex is a digest as it appears in key names and index sets.
func digestHex(d domain.Digest) string { return hex.EncodeToString(d[:]) }

// tokenKey is the key of the token whose hex digest is h.
func tokenKey(h string) string { return "tok:" + h }

// keysOf returns the workspace's keys and those of the user with email in
// it (the user keys are meaningless when email is "").
func keysOf(workspaceID, email string) keys {
	user := sha256.Sum256([]byte(domain.UserKey(email)))
	ws := "{ws:" + workspaceID + "}:"
	u := ws + "u:" + hex.EncodeToString(user[:]) + ":"
	return keys{
		workspaceTokens: ws + "tokens",
		userTokens:      u + "tokens",
		workspaceGen:    ws + "gen",
		userGen:         u + "gen",
	}
}
