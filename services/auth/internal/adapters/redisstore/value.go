package redisstore

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/liveproctor/workspaces/services/auth/internal/domain"
)

// A token's key holds one string, its fields separated by spaces:
//
//	2 <gen> <ugen> <issuedAt> <life> <workspaceId> <email>
//
// 2 is the format's version; gen and ugen are the workspace and user
// generations the token was issued under; issuedAt is in Unix
// milliseconds, and life is expiresAt - issuedAt in milliseconds, so any
// session comes back exactly. Workspace ids hold no spaces (pkg/ident),
// and the email comes last, so whatever it holds is read back whole. One
// string costs Redis a third of what the six-field hash of the oldest
// layout did, and one SET with PXAT writes it with its expiry.
//
// Life rather than expiresAt is for memory: 8 digits for the usual 8 hours
// instead of 13. A value over 44 bytes is a 16-byte object plus an sds
// string of its own (a 3-byte header, the bytes and a NUL) in a jemalloc
// size class, classes being 16 bytes apart up to 128. The bench's value,
// "2 0 0 1764134400000 28800000 root user0001@bench.example", is 56 bytes:
// 60 with header and NUL, a 64-byte class, where the 61 bytes of version 1
// (expiresAt in place of life) took 65 and an 80-byte class. The 5 bytes save a class for 5 of every 16
// value lengths, the bench's among them.
const valueVersion = "2"

// valueFields is how many fields a value has.
const valueFields = 7

// sessionSuffix is the part of a value that does not depend on the
// generations, which only the save script knows: it appends it to
// "2 <gen> <ugen> ".
func sessionSuffix(s domain.Session) string {
	iat := s.IssuedAt.UnixMilli()
	var b strings.Builder
	b.Grow(32 + len(s.WorkspaceID) + len(s.Email))
	b.WriteString(strconv.FormatInt(iat, 10))
	b.WriteByte(' ')
	b.WriteString(strconv.FormatInt(s.ExpiresAt.UnixMilli()-iat, 10))
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

// decodeValue reads a value back; false when it is not one of version 2
// (a foreign or damaged key is not a token).
func decodeValue(v string) (stored, bool) {
	f := strings.SplitN(v, " ", valueFields)
	if len(f) != valueFields || f[0] != valueVersion || f[1] == "" || f[2] == "" || f[5] == "" || f[6] == "" {
		return stored{}, false
	}
	iat, err1 := strconv.ParseInt(f[3], 10, 64)
	life, err2 := strconv.ParseInt(f[4], 10, 64)
	if err1 != nil || err2 != nil {
		return stored{}, false
	}
	exp, ok := addMillis(iat, life)
	if !ok {
		return stored{}, false
	}
	return storedAt(f[6], f[5], iat, exp, f[1], f[2]), true
}

// addMillis is a + b; false when that overflows, which no value this
// package wrote does.
func addMillis(a, b int64) (int64, bool) {
	if (b > 0 && a > math.MaxInt64-b) || (b < 0 && a < math.MinInt64-b) {
		return 0, false
	}
	return a + b, true
}

// storedAt is a token from its fields, the times in Unix milliseconds.
func storedAt(email, workspaceID string, issuedAt, expiresAt int64, gen, ugen string) stored {
	return stored{
		session: domain.Session{
			Email:       email,
			WorkspaceID: workspaceID,
			IssuedAt:    time.UnixMilli(issuedAt).UTC(),
			ExpiresAt:   time.UnixMilli(expiresAt).UTC(),
		},
		gen:  gen,
		ugen: ugen,
	}
}
