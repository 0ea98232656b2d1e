// Package envconfig reads a binary's settings from environment variables.
//
// A Reader collects every bad value instead of stopping at the first, so a
// misconfigured deployment learns all of its mistakes from one failed start,
// each naming its variable.
package envconfig

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// Reader reads variables through a lookup function (os.LookupEnv by default).
type Reader struct {
	lookup func(string) (string, bool)
	errs   []error
}

// New returns a Reader over the process environment.
func New() *Reader { return &Reader{lookup: os.LookupEnv} }

// FromMap returns a Reader over a map, for tests.
func FromMap(m map[string]string) *Reader {
	return &Reader{lookup: func(k string) (string, bool) { v, ok := m[k]; return v, ok }}
}

func (r *Reader) get(name string) (string, bool) {
	v, ok := r.lookup(name)
	v = strings.TrimSpace(v)
	return v, ok && v != ""
}

// Invalid records that the variable's value is unusable, for the checks a
// setting needs beyond the readers below.
func (r *Reader) Invalid(name, format string, args ...any) {
	r.errs = append(r.errs, fmt.Errorf("%s: %s", name, fmt.Sprintf(format, args...)))
}

// Err returns every problem found so far, or nil.
func (r *Reader) Err() error { return errors.Join(r.errs...) }

// String returns the variable, or def when it is unset or empty.
func (r *Reader) String(name, def string) string {
	if v, ok := r.get(name); ok {
		return v
	}
	return def
}

// Required returns the variable, recording an error when it is unset.
func (r *Reader) Required(name string) string {
	v, ok := r.get(name)
	if !ok {
		r.Invalid(name, "is required")
	}
	return v
}

// Pair returns two variables that only work together, such as a key and
// its secret, and whether either is set. Setting one without the other is
// an error.
func (r *Reader) Pair(first, second string) (string, string, bool) {
	a, aSet := r.get(first)
	b, bSet := r.get(second)
	switch {
	case aSet && !bSet:
		r.Invalid(second, "is required with %s", first)
	case bSet && !aSet:
		r.Invalid(first, "is required with %s", second)
	}
	return a, b, aSet || bSet
}

// Addr returns a host:port listen or dial address.
func (r *Reader) Addr(name, def string) string {
	v := r.String(name, def)
	if _, _, err := net.SplitHostPort(v); err != nil {
		r.Invalid(name, "must be host:port, got %q", v)
	}
	return v
}

// OptionalAddr is Addr where an empty value means "off": it returns def
// when unset, "" when set empty, and the address otherwise.
func (r *Reader) OptionalAddr(name, def string) string {
	v, ok := r.lookup(name)
	v = strings.TrimSpace(v)
	if !ok {
		v = def
	}
	if v == "" {
		return ""
	}
	if _, _, err := net.SplitHostPort(v); err != nil {
		r.Invalid(name, "must be host:port or empty, got %q", v)
	}
	return v
}

// Duration returns a positive Go duration such as 5s or 250ms.
func (r *Reader) Duration(name string, def time.Duration) time.Duration {
	v, ok := r.get(name)
	if !ok {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		r.Invalid(name, "must be a positive duration such as 5s, got %q", v)
		return def
	}
	return d
}

// Int returns an integer between min and max inclusive.
func (r *Reader) Int(name string, def, min, max int) int {
	v, ok := r.get(name)
	if !ok {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < min || n > max {
		r.Invalid(name, "must be an integer from %d to %d, got %q", min, max, v)
		return def
	}
	return n
}

// List returns a comma-separated list with empty elements dropped.
func (r *Reader) List(name string) []string {
	v, ok := r.get(name)
	if !ok {
		return nil
	}
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Key returns standard-Base64 bytes of exactly size bytes, recording an
// error (without echoing the value: it is a secret) when it is malformed.
// An unset variable returns nil and no error; use Required-style checks at
// the call site when the key is mandatory.
func (r *Reader) Key(name string, size int) []byte {
	v, ok := r.get(name)
	if !ok {
		return nil
	}
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil || len(b) != size {
		r.Invalid(name, "must be %d bytes in standard Base64 (for example: head -c %d /dev/urandom | base64)", size, size)
		return nil
	}
	return b
}
