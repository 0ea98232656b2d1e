package lti

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
)

// The cookie in which a browser keeps an LTI 1.3 login's state from the
// login initiation (lti13_login.go) to its launch (lti13_launch.go), which
// the workspace service compares with the state the platform posts back:
// a launch is accepted only in the browser that started its login. A
// login with the platform's storage keeps it there instead
// (lti13_storage.go).

// stateCookiePrefix starts the name of every state cookie.
const stateCookiePrefix = "lti1p3_state_"

// StateCookieName is the cookie that keeps state: one per login, so that
// launches started at once in one browser (two tabs) keep their own.
// The name is the first 16 characters of base64url(SHA-256(state)), which
// the launch finds from the state the platform posts.
func StateCookieName(state string) string {
	sum := sha256.Sum256([]byte(state))
	return stateCookiePrefix + base64.RawURLEncoding.EncodeToString(sum[:])[:16]
}

// StateCookie is the cookie that keeps state for maxAge seconds (a
// negative maxAge removes it). The launch is a cross-site form post from
// the platform, so the cookie is SameSite=None (which requires Secure), and
// Partitioned so that browsers blocking third-party cookies still keep it
// for the LMS page that frames the tool; only the launch reads it.
func StateCookie(state string, maxAge int) *http.Cookie {
	value := state
	if maxAge < 0 {
		value = ""
	}
	return &http.Cookie{
		Name: StateCookieName(state), Value: value, Path: LTI13LaunchPath, MaxAge: maxAge,
		Secure: true, HttpOnly: true, SameSite: http.SameSiteNoneMode, Partitioned: true,
	}
}
