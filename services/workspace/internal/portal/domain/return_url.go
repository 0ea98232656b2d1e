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
// 127.0.0.0/8, ::1, for a vendor's own machine), without a user name or
// password, of at most MaxReturnURLLength characters.
func CheckReturnURL(raw string) error {
	switch {
	case raw == "":
		return nil
	case utf8.RuneCountInString(raw) > MaxReturnURLLength:
		return fault.InvalidField("returnUrl", fmt.Sprintf("must be at most %d characters", MaxReturnURLLength))
	case !returnURL(raw):
		return errReturnURL
	}
	return nil
}

// errReturnURL states the rule as the document does.
var errReturnURL = fault.InvalidField("returnUrl",
	"must be an absolute https URL (http only on a loopback host: localhost, 127.0.0.0/8, ::1), without a user name or password")

// returnURL reports whether raw is an absolute https URL, or http on a
// loopback host, without userinfo.
func returnURL(raw string) bool {
	u, err := url.Parse(raw)
	if err != nil || u.Opaque != "" || u.User != nil || u.Hostname() == "" {
		return false
	}
	return u.Scheme == "https" || u.Scheme == "http" && loopback(u.Hostname())
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
