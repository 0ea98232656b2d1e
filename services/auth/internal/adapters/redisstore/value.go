package redisstore

import (
	"strconv"
	"strings"
	"time"

	"github.com/liveproctor/workspaces/services/auth/internal/domain"
)

// A token's key holds one string, its fields separated by spaces:
//
//	1 <gen> <ugen> <issuedAt> <expiresAt> <workspaceId> <email>
//
// 1 is the format's version; gen and ugen are the workspace and user
// generations the token was issued under; issuedAt and expiresAt are Unix
// milliseconds. Workspace ids hold no spaces (pkg/ident), and the email
// comes last, so whatever it holds is read back whole. One string costs
// Redis a third of what the six-field hash of the earlier layout did, and
// one SET with PXAT writes it with its expiry.
const valueVersion = "1"

// valueFields is how many fields a value has.
const valueFields = 7

// sessionSuffix is the part of a value that does not depend on the
// generations, which only the save script knows: it appends it to
// "1 <gen> <ugen> ".
func sessionSuffix(s domain.Session) string {
	var b strings.Builder
	b.Grow(40 + len(s.WorkspaceID) + len(s.Email))
	b.WriteString(strconv.FormatInt(s.IssuedAt.UnixMilli(), 10))
	b.WriteByte(' ')
	b.WriteString(strconv.FormatInt(s.ExpiresAt.UnixMilli(), 10))
	b.WriteByte(' ')
	b.WriteString(s.WorkspaceID)
	b.WriteByte(' ')
	b.WriteString(s.Email)
	return b.String()
}

// encodeValue is the whole value, for the path that knows the generations.
func encodeValue(gen, ugen string, s domain.Session) string {
	return valueVersion + " " + gen + " " + ugen + " " + sessionSuffix(s)
}

// decodeValue reads a value back; false when it is not one this version
// wrote (a foreign or damaged key is not a token).
func decodeValue(v string) (stored, bool) {
	f := strings.SplitN(v, " ", valueFields)
	if len(f) != valueFields || f[0] != valueVersion || f[1] == "" || f[2] == "" || f[5] == "" || f[6] == "" {
		return stored{}, false
	}
	return storedFrom(f[6], f[5], f[3], f[4], f[1], f[2])
}

// storedFrom is a token from its fields as stored (the times in Unix
// milliseconds); false when a time is not a number.
func storedFrom(email, workspaceID, issuedAt, expiresAt, gen, ugen string) (stored, bool) {
	iat, err1 := strconv.ParseInt(issuedAt, 10, 64)
	exp, err2 := strconv.ParseInt(expiresAt, 10, 64)
	if err1 != nil || err2 != nil {
		return stored{}, false
	}
	return stored{
		session: domain.Session{
			Email:       email,
			WorkspaceID: workspaceID,
			IssuedAt:    time.UnixMilli(iat).UTC(),
			ExpiresAt:   time.UnixMilli(exp).UTC(),
		},
		gen:  gen,
		ugen: ugen,
	}, true
}
