package portal

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"time"

	"google.golang.org/grpc/metadata"

	"github.com/liveproctor/workspaces/gateway/internal/reqstate"
	"github.com/liveproctor/workspaces/pkg/fault"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
)

// SessionMetadata is the metadata key a portal page's calls present the
// session's token under. Not authorization: grpc-gateway passes a REST
// client's Authorization header on, and the session must not become a
// credential of the REST routes.
const SessionMetadata = "portal-session"

// The session's cookie: sent with the portal's pages only, never to
// scripts, over https only, and with top-level navigations from other
// sites (a bookmark, the vendor's link back) but not their forms.
const (
	cookieName = "portal_session"
	cookiePath = "/portal"
)

// maxTokenLen bounds a cookie worth presenting: a token is 43 characters,
// and metadata over the service's limit would fail as an error of ours.
const maxTokenLen = 256

// csrfField is the hidden field of every form that changes something.
const csrfField = "csrf"

// session is the portal session a request presents, as the workspace
// service answered it (with the name of the workspace it may see).
type session struct {
	info *workspacev1.PortalSession
	csrf string
}

// id is the session's workspace.
func (s *session) id() string { return s.info.GetWorkspaceId() }

// sessionCookie is the cookie that keeps the token until the session ends.
func sessionCookie(token string, ends time.Time) *http.Cookie {
	return &http.Cookie{
		Name: cookieName, Value: token, Path: cookiePath,
		MaxAge:   max(1, int(time.Until(ends).Seconds())),
		HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode,
	}
}

// clearCookie tells the browser to forget the token.
func clearCookie(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: cookieName, Path: cookiePath, MaxAge: -1, HttpOnly: true, Secure: true, SameSite: http.SameSiteLaxMode})
}

// sessionToken is the token the request's cookie holds, if any.
func sessionToken(r *http.Request) (string, bool) {
	c, err := r.Cookie(cookieName)
	if err != nil || c.Value == "" || len(c.Value) > maxTokenLen {
		return "", false
	}
	return c.Value, true
}

// csrfToken is the CSRF token of the session whose token is given: a page
// of another site can read neither, and the gateway keeps nothing to
// check it against.
func csrfToken(token string) string {
	mac := hmac.New(sha256.New, []byte(token))
	mac.Write([]byte("portal csrf"))
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// validCSRF compares the form's token with the session's, in constant time.
func validCSRF(token, sent string) bool {
	return hmac.Equal([]byte(csrfToken(token)), []byte(sent))
}

// sameOrigin tells whether a form post comes from a page of this site:
// every current browser says so in Sec-Fetch-Site; older ones send
// Origin, whose host must then be the one the request was sent to. A post
// with neither is not a browser's, and the portal has no other callers.
func sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" {
		return site == "same-origin"
	}
	origin := r.Header.Get("Origin")
	if origin == "" || origin == "null" {
		return false
	}
	u, err := url.Parse(origin)
	return err == nil && u.Host != "" && strings.EqualFold(u.Host, r.Host)
}

// sessionCalls returns r with every call it makes carrying the session's
// token beside the request's metadata.
func (p *portal) sessionCalls(r *http.Request, token string) *http.Request {
	md := metadata.Join(p.md(r.Context(), r), metadata.Pairs(SessionMetadata, token))
	return r.WithContext(metadata.NewOutgoingContext(r.Context(), md))
}

// page serves a page to a session: without a cookie the session-ended
// page, without a call.
func (p *portal) page(h func(http.ResponseWriter, *http.Request, *session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		token, ok := sessionToken(r)
		if !ok {
			p.sessionEnded(w, r)
			return
		}
		p.serve(w, r, token, h)
	}
}

// action serves a form's post: it must come from one of the portal's own
// pages and carry the session's CSRF token, both checked before any call.
func (p *portal) action(h func(http.ResponseWriter, *http.Request, *session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !sameOrigin(r) {
			p.forbidden(w, r)
			return
		}
		token, ok := sessionToken(r)
		if !ok {
			p.sessionEnded(w, r)
			return
		}
		if !p.readForm(w, r) {
			return
		}
		if !validCSRF(token, r.PostForm.Get(csrfField)) {
			p.forbidden(w, r)
			return
		}
		p.serve(w, r, token, h)
	}
}

// serve asks the workspace service for the session, then hands it to h.
func (p *portal) serve(w http.ResponseWriter, r *http.Request, token string, h func(http.ResponseWriter, *http.Request, *session)) {
	r = p.sessionCalls(r, token)
	info, err := p.service.GetPortalSession(r.Context(), &workspacev1.GetPortalSessionRequest{})
	if err != nil {
		p.fail(w, r, nil, err, "")
		return
	}
	h(w, r, &session{info: info, csrf: csrfToken(token)})
}

// readForm reads a post's form, or answers why it cannot: a body over the
// gateway's limit, one that stalled, or a malformed one.
func (p *portal) readForm(w http.ResponseWriter, r *http.Request) bool {
	if err := r.ParseForm(); err != nil {
		state := reqstate.From(r.Context())
		switch {
		case state.BodyTooLarge:
			p.refuse(w, r, nil, fault.TooLarge, "The form is too large.")
		case state.BodyTimedOut:
			p.refuse(w, r, nil, fault.RequestTimeout, "The form did not arrive in time: send it again.")
		default:
			p.refuse(w, r, nil, fault.Invalid, "The form could not be read: send it again from its page.")
		}
		return false
	}
	return true
}
