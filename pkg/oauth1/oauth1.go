// Package oauth1 checks OAuth 1.0a (RFC 5849) HMAC signatures the way an
// LTI 1.1 tool provider receives them: a form POST whose parameters (query
// and body) carry the oauth_* protocol parameters, signed with the consumer
// secret alone (no token secret).
//
// The signature base string (RFC 5849 §3.4.1) is built from the request
// method, a base string URI the provider configures (never the Host header a
// proxy may have changed), and every parameter of the request, duplicates
// kept, oauth_signature left out. A realm is only excluded when it comes from
// an Authorization header, which launches do not use, so every parameter
// given here is signed.
//
// It imports nothing of this repository, so any service can use it.
package oauth1

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"net/url"
	"slices"
	"strings"
)

// Param is one request parameter, decoded (a '+' of a form body already a
// space).
type Param struct {
	Name  string
	Value string
}

// The signature methods Verify accepts (oauth_signature_method).
const (
	HMACSHA1   = "HMAC-SHA1"
	HMACSHA256 = "HMAC-SHA256"
)

// The protocol parameters Verify reads.
const (
	ParamSignature       = "oauth_signature"
	ParamSignatureMethod = "oauth_signature_method"
)

// Errors Verify and the builders answer. A caller maps them to its own
// messages; none of them carries a secret.
var (
	ErrMissingSignature  = errors.New("oauth1: oauth_signature is missing")
	ErrDuplicate         = errors.New("oauth1: a protocol parameter appears more than once")
	ErrUnsupportedMethod = errors.New("oauth1: unsupported oauth_signature_method")
	ErrSignatureMismatch = errors.New("oauth1: the signature does not match")
	ErrBadURL            = errors.New("oauth1: the base string URI must be an absolute http or https URL without query, fragment or user information")
	ErrBadForm           = errors.New("oauth1: malformed form encoding")
)

// Encode percent-encodes s as RFC 5849 §3.6 (RFC 3986) requires: every byte
// but the unreserved ALPHA, DIGIT, '-', '.', '_' and '~' becomes %XX with
// upper-case hex digits, so a space is %20 (never '+').
func Encode(s string) string {
	const hex = "0123456789ABCDEF"
	n := 0
	for i := 0; i < len(s); i++ {
		if !unreserved(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if unreserved(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&0x0f])
	}
	return b.String()
}

func unreserved(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// BaseURI normalizes a configured URL into the base string URI of RFC 5849
// §3.4.1.2: scheme and host lower-cased, the scheme's default port dropped,
// an empty path made "/". The URL must be absolute http or https, without a
// query (query parameters are passed as parameters), fragment or user
// information.
func BaseURI(rawURL string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", ErrBadURL
	}
	scheme := strings.ToLower(u.Scheme)
	if scheme != "http" && scheme != "https" || u.Host == "" || u.Opaque != "" ||
		u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return "", ErrBadURL
	}
	host := strings.ToLower(u.Hostname())
	if host == "" {
		return "", ErrBadURL
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port := u.Port(); port != "" && !(scheme == "http" && port == "80" || scheme == "https" && port == "443") {
		host += ":" + port
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	return scheme + "://" + host + path, nil
}

// NormalizeParams is the parameter string of RFC 5849 §3.4.1.3.2: every
// parameter but oauth_signature, name and value encoded, sorted by encoded
// name then encoded value, joined as name=value pairs with '&'.
func NormalizeParams(params []Param) string {
	pairs := make([][2]string, 0, len(params))
	for _, p := range params {
		if p.Name == ParamSignature {
			continue
		}
		pairs = append(pairs, [2]string{Encode(p.Name), Encode(p.Value)})
	}
	slices.SortFunc(pairs, func(a, b [2]string) int {
		if c := strings.Compare(a[0], b[0]); c != 0 {
			return c
		}
		return strings.Compare(a[1], b[1])
	})
	var b strings.Builder
	for i, p := range pairs {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(p[0])
		b.WriteByte('=')
		b.WriteString(p[1])
	}
	return b.String()
}

// BaseString is the signature base string of RFC 5849 §3.4.1: the
// upper-cased method, the base string URI of rawURL and the normalized
// parameters, each encoded, joined with '&'.
func BaseString(method, rawURL string, params []Param) (string, error) {
	uri, err := BaseURI(rawURL)
	if err != nil {
		return "", err
	}
	return Encode(strings.ToUpper(method)) + "&" + Encode(uri) + "&" + Encode(NormalizeParams(params)), nil
}

// Sign returns the Base64 HMAC signature of a base string (RFC 5849
// §3.4.2) with the key encode(consumerSecret)&encode(tokenSecret). LTI
// launches have no token: pass "".
func Sign(signatureMethod, baseString, consumerSecret, tokenSecret string) (string, error) {
	mac, err := sum(signatureMethod, baseString, consumerSecret, tokenSecret)
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(mac), nil
}

func sum(signatureMethod, baseString, consumerSecret, tokenSecret string) ([]byte, error) {
	var h func() hash.Hash
	switch signatureMethod {
	case HMACSHA1:
		h = sha1.New
	case HMACSHA256:
		h = sha256.New
	default:
		return nil, ErrUnsupportedMethod
	}
	m := hmac.New(h, []byte(Encode(consumerSecret)+"&"+Encode(tokenSecret)))
	m.Write([]byte(baseString))
	return m.Sum(nil), nil
}

// Verify checks the oauth_signature among params against the signature of
// method, rawURL and params under consumerSecret (and no token secret), in
// constant time. oauth_signature and oauth_signature_method must each
// appear once.
func Verify(method, rawURL string, params []Param, consumerSecret string) error {
	sig, err := Single(params, ParamSignature)
	if err != nil {
		return err
	}
	if sig == "" {
		return ErrMissingSignature
	}
	sigMethod, err := Single(params, ParamSignatureMethod)
	if err != nil {
		return err
	}
	base, err := BaseString(method, rawURL, params)
	if err != nil {
		return err
	}
	want, err := sum(sigMethod, base, consumerSecret, "")
	if err != nil {
		return err
	}
	// A signature that is not Base64 is compared as zero bytes: it fails
	// like any other wrong signature.
	got, _ := base64.StdEncoding.DecodeString(sig)
	if !hmac.Equal(got, want) {
		return ErrSignatureMismatch
	}
	return nil
}

// Single returns the value of the parameter named name, "" when absent, and
// ErrDuplicate when it appears more than once.
func Single(params []Param, name string) (string, error) {
	value, seen := "", false
	for _, p := range params {
		if p.Name != name {
			continue
		}
		if seen {
			return "", fmt.Errorf("%w: %s", ErrDuplicate, name)
		}
		value, seen = p.Value, true
	}
	return value, nil
}

// ParseForm decodes an application/x-www-form-urlencoded string (a query or
// a form body) into its parameters in order, duplicates kept, '+' decoded as
// a space. Empty pieces between '&'s are skipped; a name without '=' has an
// empty value. A malformed %-escape is ErrBadForm. At most maxParams
// parameters are decoded (0: no bound); more is an error.
func ParseForm(s string, maxParams int) ([]Param, error) {
	var params []Param
	for piece := range strings.SplitSeq(s, "&") {
		if piece == "" {
			continue
		}
		if maxParams > 0 && len(params) == maxParams {
			return nil, fmt.Errorf("%w: more than %d parameters", ErrBadForm, maxParams)
		}
		name, value, _ := strings.Cut(piece, "=")
		n, err := url.QueryUnescape(name)
		if err != nil {
			return nil, ErrBadForm
		}
		v, err := url.QueryUnescape(value)
		if err != nil {
			return nil, ErrBadForm
		}
		params = append(params, Param{Name: n, Value: v})
	}
	return params, nil
}
