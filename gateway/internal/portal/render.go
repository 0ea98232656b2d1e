package portal

import (
	"bytes"
	"embed"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/liveproctor/workspaces/gateway/internal/httperr"
	"github.com/liveproctor/workspaces/gateway/internal/reqstate"
	"github.com/liveproctor/workspaces/pkg/fault"
	restv1 "github.com/liveproctor/workspaces/pkg/gen/rest/v1"
)

//go:embed templates
var templateFiles embed.FS

// pages are the portal's templates by name (a file of templates/ without
// its extension), each with the layout (layout.html) and the pieces it
// shares.
var pages = parsePages()

func parsePages() map[string]*template.Template {
	base := template.Must(template.New("layout.html").Funcs(template.FuncMap{"when": when}).
		ParseFS(templateFiles, "templates/layout.html"))
	names, err := fs.Glob(templateFiles, "templates/*.html")
	if err != nil {
		panic(err)
	}
	out := map[string]*template.Template{}
	for _, name := range names {
		if name == "templates/layout.html" {
			continue
		}
		out[strings.TrimSuffix(path.Base(name), ".html")] = template.Must(template.Must(base.Clone()).ParseFS(templateFiles, name))
	}
	return out
}

// view is what a page's template is given: the layout's parts, and the
// page's own data.
type view struct {
	// Title is the page's one h1 and its window's title.
	Title string
	// Section is the navigation's current entry.
	Section string
	// Session is nil on the pages of no session (the link, refusals
	// before a session is known).
	Session *sessionView
	// Notice is what the last action did, for a page it redirected to.
	Notice    string
	RequestID string
	Page      any
}

// sessionView is what the layout shows of a session.
type sessionView struct {
	WorkspaceName, WorkspaceID string
	Ends                       string
	ReturnURL                  string
	CSRF                       string
}

// newView returns the view of a page a session sees.
func newView(r *http.Request, s *session, title, section string, page any) view {
	v := view{Title: title, Section: section, RequestID: reqstate.ID(r.Context()), Page: page}
	if s != nil {
		v.Session = &sessionView{
			WorkspaceName: s.info.GetWorkspaceName(), WorkspaceID: s.id(), Ends: s.info.GetExpireTime(),
			ReturnURL: s.info.GetReturnUrl(), CSRF: s.csrf,
		}
	}
	return v
}

// render answers the page name with status. The page is written whole
// or not at all: a template that fails answers the internal error page.
func (p *portal) render(w http.ResponseWriter, r *http.Request, status int, name string, v view) {
	var buf bytes.Buffer
	if err := pages[name].ExecuteTemplate(&buf, "layout.html", v); err != nil {
		p.logger.Error("render a portal page", "request_id", reqstate.ID(r.Context()), "page", name, "error", err)
		status, buf = http.StatusInternalServerError, bytes.Buffer{}
		_ = pages["refused"].ExecuteTemplate(&buf, "layout.html", view{
			Title: headingOurSide, RequestID: v.RequestID, Page: refusal{Message: msgOurSide},
		})
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// Texts of refusals that are not the administrator's to fix.
const (
	headingOurSide    = "Something went wrong on our side"
	msgOurSide        = "The page could not be shown because of an error on our side. Try again; if it lasts, tell your vendor the request id below."
	headingBusy       = "The portal is unavailable for a moment"
	msgUnavailable    = "The service is unavailable for a moment: try again in a minute."
	headingRefused    = "That did not work"
	headingEnded      = "Your portal session has ended"
	msgEnded          = "Your portal session has ended or was never started. Ask your vendor for a new link to the portal."
	headingForbidden  = "This form cannot be accepted"
	msgForbidden      = "The form was not sent from this portal's own page, or it belongs to an earlier session. Go back, reload the page and try again."
	headingNotFound   = "There is no such page"
	msgNotFound       = "The portal has no page at this address."
	headingLinkFailed = "This link cannot open the portal"
)

// refusal is the page of a refusal: what happened, the fields the service
// blamed, and where to go on.
type refusal struct {
	Message string
	Fields  []*restv1.FieldViolation
	// Advice says what to do, when the message does not.
	Advice string
	// Back is the page to go back to, empty for none.
	Back string
}

// answer is how the portal shows err, a call's failure: the service's
// message for what the administrator can act on, a fixed text for the rest
// (logged when it is not a passing unavailability), with the status and
// headers of httperr's one table.
func (p *portal) answer(r *http.Request, err error) (httperr.Answer, string) {
	f := httperr.Read(err)
	kind, message, heading := f.Kind, f.Status.Message(), headingRefused
	switch {
	case kind == fault.Unavailable || kind == fault.DeadlineExceeded:
		message, heading = msgUnavailable, headingBusy
	case !f.Named || kind == fault.Internal:
		p.logger.Error("portal call failed", "request_id", reqstate.ID(r.Context()), "code", f.Status.Code().String(), "error", f.Status.Message())
		kind, message, heading = fault.Internal, msgOurSide, headingOurSide
	}
	a := httperr.New(kind, message, "", f.RetryAfter)
	if f.Named {
		a.Details = f.Violations
	}
	return a, heading
}

// fail answers a call's failure: the session-ended page when the service
// no longer knows the session, else the refusal page, with the way back
// to back ("" for none). s is nil before the session is known.
func (p *portal) fail(w http.ResponseWriter, r *http.Request, s *session, err error, back string) {
	if httperr.Read(err).Kind == fault.Unauthenticated {
		p.sessionEnded(w, r)
		return
	}
	a, heading := p.answer(r, err)
	p.refusePage(w, r, s, a, heading, back)
}

// refuse answers a refusal of kind the portal itself makes.
func (p *portal) refuse(w http.ResponseWriter, r *http.Request, s *session, kind fault.Kind, message string) {
	p.refusePage(w, r, s, httperr.New(kind, message, "", 0), headingRefused, "")
}

// refusePage answers a's status, headers and message under heading.
func (p *portal) refusePage(w http.ResponseWriter, r *http.Request, s *session, a httperr.Answer, heading, back string) {
	p.refusePageWith(w, r, s, a, heading, refusal{Message: a.Message, Fields: a.Details, Back: back})
}

// refusePageWith answers a's status and headers with the page of f.
func (p *portal) refusePageWith(w http.ResponseWriter, r *http.Request, s *session, a httperr.Answer, heading string, f refusal) {
	for k, vs := range a.Header {
		w.Header()[k] = vs
	}
	p.render(w, r, a.Status, "refused", newView(r, s, heading, "", f))
}

// sessionEnded answers 401: no session, or one the service no longer
// knows. The cookie goes.
func (p *portal) sessionEnded(w http.ResponseWriter, r *http.Request) {
	clearCookie(w)
	p.render(w, r, http.StatusUnauthorized, "refused", newView(r, nil, headingEnded, "", refusal{Message: msgEnded}))
}

// forbidden answers 403 to a post from another site or without the
// session's CSRF token.
func (p *portal) forbidden(w http.ResponseWriter, r *http.Request) {
	p.render(w, r, http.StatusForbidden, "refused", newView(r, nil, headingForbidden, "", refusal{Message: msgForbidden}))
}

// notFound answers 404 for a path the portal has no page at.
func (p *portal) notFound(w http.ResponseWriter, r *http.Request) {
	p.render(w, r, http.StatusNotFound, "refused", newView(r, nil, headingNotFound, "", refusal{Message: msgNotFound, Back: Root}))
}

// seeOther ends an action that changed something: the browser fetches
// the page to show next (post, redirect, get), with what happened as a
// notice of the closed set in notices.
func seeOther(w http.ResponseWriter, r *http.Request, page, notice string) {
	if notice != "" {
		page += "?done=" + notice
	}
	http.Redirect(w, r, page, http.StatusSeeOther)
}

// notices are what an action's redirect may say it did; the query names
// one, so that no text of the request's reaches the page.
var notices = map[string]string{
	"registration-created": "The platform is registered. Add its deployment ids if the LMS gave any later.",
	"registration-deleted": "The registration is deleted: the platform's launches are refused from now on.",
	"deployment-added":     "The deployment is added: its launches are accepted from now on.",
	"deployment-removed":   "The deployment is removed: its launches are refused from now on.",
	"key-revoked":          "The key pair is revoked: it no longer works anywhere.",
}

// notice is the notice the request's query names, if any.
func notice(r *http.Request) string { return notices[r.URL.Query().Get("done")] }

// when shows an RFC 3339 time the services answer, to the minute in UTC;
// text that is not one is shown as it is.
func when(s string) string {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return s
	}
	return t.UTC().Format("2 Jan 2006, 15:04 UTC")
}
