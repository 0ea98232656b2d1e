package domain

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/liveproctor/workspaces/pkg/fault"
)

// MaxReturnURLLength bounds a link's returnUrl, in characters.
const MaxReturnURLLength = 2000

// CheckReturnURL checks a link's returnUrl, the portal's way back to the
// vendor's site, which the portal's pages offer as a link: empty, or an
// absolute https URL (http only on a loopback host: localhost,
// 127.0.0.0/8, ::1, for a vendor's own machine), without credentials in
// it, of at most MaxReturnURLLength characters.
func CheckReturnURL(raw string) error {
	if raw == "" {
		return nil
	}
	if why := returnURLProblem(raw); why != "" {
		return fault.InvalidField("returnUrl", why)
	}
	return nil
}

func returnURLProblem(raw string) string {
	if utf8.RuneCountInString(raw) > MaxReturnURLLength {
		return fmt.Sprintf("must be at most %d characters", MaxReturnURLLength)
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil || !u.IsAbs() || u.Opaque != "" || u.Host == "" || u.Hostname() == "":
		return "must be an absolute URL, such as https://vendor.example/settings"
	case u.User != nil:
		return "must not carry a user name or password"
	case u.Scheme == "https":
		return ""
	case u.Scheme == "http" && loopback(u.Hostname()):
		return ""
	case u.Scheme == "http":
		return "must be https (http only on a loopback host: localhost, 127.0.0.1, ::1)"
	}
	return "must be an https URL"
}

// loopback reports whether host names this machine: localhost, or an
// address of 127.0.0.0/8 or ::1.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
