package jose

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"
)

// Claims is a claims set's registered claims (RFC 7519 §4.1) and nonce, as
// LTI's id_token uses them, and every member as sent.
type Claims struct {
	Issuer          string    // iss
	Subject         string    // sub
	Audience        []string  // aud: one string or an array of strings in the token
	AuthorizedParty string    // azp
	Expiry          time.Time // exp; zero when absent
	IssuedAt        time.Time // iat; zero when absent
	NotBefore       time.Time // nbf; zero when absent
	Nonce           string    // nonce
	// Raw holds every member by its exact name, as sent, for the claims
	// named here and the others (LTI's https://purl.imsglobal.org/spec/lti/claim/…);
	// decode one with json.Unmarshal(c.Raw[name], &v). Exact names keep
	// encoding/json's case-insensitive struct matching out.
	Raw map[string]json.RawMessage
}

// maxDate is 9999-12-31T23:59:59Z, a bound on a NumericDate well inside
// what time.Time and int64 seconds hold.
const maxDate = 253402300799

// ParseClaims reads a claims set, the payload Verify returned. It must be a
// JSON object naming each member once; iss, sub, azp and nonce, when present,
// strings; aud a string or an array of strings; exp, iat and nbf JSON
// numbers (a fraction allowed) from 0 to the end of year 9999. Anything else is
// ErrMalformed. Which claims are required is the caller's (and CheckTime's).
func ParseClaims(payload []byte) (Claims, error) {
	m, err := members(payload)
	if err != nil {
		return Claims{}, err
	}
	c := Claims{Raw: m}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"iss", &c.Issuer}, {"sub", &c.Subject}, {"azp", &c.AuthorizedParty}, {"nonce", &c.Nonce}} {
		if err := stringMember(m, f.name, f.dst); err != nil {
			return Claims{}, err
		}
	}
	for _, f := range []struct {
		name string
		dst  *time.Time
	}{{"exp", &c.Expiry}, {"iat", &c.IssuedAt}, {"nbf", &c.NotBefore}} {
		if err := dateMember(m, f.name, f.dst); err != nil {
			return Claims{}, err
		}
	}
	if c.Audience, err = audience(m["aud"]); err != nil {
		return Claims{}, err
	}
	return c, nil
}

// CheckTime checks the token's lifetime at now, allowing leeway for clocks
// that disagree (a negative leeway counts as none). exp and iat are required,
// as LTI requires both (ErrMissingClaim). The token is expired when now is at
// or after exp+leeway (ErrExpired); refused when iat is after now+leeway
// (ErrIssuedInFuture) or nbf, when present, is after now+leeway
// (ErrNotYetValid).
func (c Claims) CheckTime(now time.Time, leeway time.Duration) error {
	leeway = max(leeway, 0)
	switch {
	case c.Expiry.IsZero():
		return fmt.Errorf("%w: exp", ErrMissingClaim)
	case c.IssuedAt.IsZero():
		return fmt.Errorf("%w: iat", ErrMissingClaim)
	case !now.Before(c.Expiry.Add(leeway)):
		return ErrExpired
	case c.IssuedAt.After(now.Add(leeway)):
		return ErrIssuedInFuture
	case !c.NotBefore.IsZero() && c.NotBefore.After(now.Add(leeway)):
		return ErrNotYetValid
	}
	return nil
}

// dateMember sets *dst to member name of m, a NumericDate, when present.
func dateMember(m map[string]json.RawMessage, name string, dst *time.Time) error {
	raw, ok := m[name]
	if !ok {
		return nil
	}
	// encoding/json would take "123" for a json.Number; only a JSON number
	// starts with a digit or '-'.
	if len(raw) == 0 || raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
		return malformed(name + " is not a number")
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil || f < 0 || f > maxDate {
		return malformed(name + " is out of range")
	}
	sec := math.Floor(f)
	*dst = time.Unix(int64(sec), int64(math.Round((f-sec)*1e9))).UTC()
	return nil
}

// audience reads aud, absent (nil), one string or an array of strings.
func audience(raw json.RawMessage) ([]string, error) {
	if raw == nil {
		return nil, nil
	}
	if s, ok := stringOf(raw); ok {
		return []string{s}, nil
	}
	var list []json.RawMessage
	if raw[0] != '[' || json.Unmarshal(raw, &list) != nil {
		return nil, malformed("aud is neither a string nor an array of strings")
	}
	out := make([]string, 0, len(list))
	for _, r := range list {
		s, ok := stringOf(r)
		if !ok {
			return nil, malformed("aud is neither a string nor an array of strings")
		}
		out = append(out, s)
	}
	return out, nil
}
