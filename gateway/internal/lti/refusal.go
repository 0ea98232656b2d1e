package lti

import (
	"crypto/sha256"
	"encoding/base64"
	"html/template"
	"log/slog"
	"net/http"
	"slices"

	"github.com/liveproctor/workspaces/gateway/internal/httperr"
	"github.com/liveproctor/workspaces/gateway/internal/reqstate"
	"github.com/liveproctor/workspaces/pkg/fault"
)

// Teacher-facing texts for refusals that are not the teacher's to fix.
const (
	msgUnavailable = "LiveProctor is unavailable for a moment: launch again in a minute."
	msgOurSide     = "The launch could not be completed because of an error on our side."
)

// launchCSP lets the launch page run the SDK's scripts only and call only
// this gateway, and lets any LMS page frame it: LMSs open tools in iframes.
const launchCSP = "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; " +
	"img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors *"

// refuseError answers a refusal from the services with the status and
// headers the error answers' table gives its kind: the service's message
// says what to fix for the kinds a teacher can act on; anything else is a
// fixed text and the log has the cause. A refusal carries no challenge:
// a launch's credentials are its signature, which no browser can supply.
func refuseError(w http.ResponseWriter, r *http.Request, err error, logger *slog.Logger) {
	refuse(w, r, pageAnswer(r, err, logger, "LTI launch failed", fault.Invalid, fault.Unauthenticated, fault.Throttled))
}

// pageAnswer is the answer a page gives err: the service's message for the
// kinds named shown, a fixed text for the rest (logged as failed, with the
// cause, when it is not a passing unavailability).
func pageAnswer(r *http.Request, err error, logger *slog.Logger, failed string, shown ...fault.Kind) httperr.Answer {
	f := httperr.Read(err)
	kind, message := f.Kind, f.Status.Message()
	switch {
	case kind == fault.Unavailable || kind == fault.DeadlineExceeded:
		message = msgUnavailable
	case !f.Named || !slices.Contains(shown, kind):
		// Anything else (a refused service key pair, a bug) is ours to
		// fix, not the teacher's.
		logger.Error(failed, "request_id", reqstate.ID(r.Context()), "code", f.Status.Code().String(), "error", f.Status.Message())
		kind, message = fault.Internal, msgOurSide
	}
	return httperr.New(kind, message, "", f.RetryAfter)
}

// refuse answers a short page with a's status, headers and message, for
// the teacher or student who sees it inside the LMS.
func refuse(w http.ResponseWriter, r *http.Request, a httperr.Answer) {
	refusePage(w, r, a, "LiveProctor could not open")
}

// refusePage answers a short page with a's status, headers and message
// under heading.
func refusePage(w http.ResponseWriter, r *http.Request, a httperr.Answer, heading string) {
	header := pageHeaders(w)
	for k, vs := range a.Header {
		header[k] = vs
	}
	header.Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(a.Status)
	_ = refusedPage.Execute(w, refusedView{Heading: heading, Reason: a.Message, RequestID: reqstate.ID(r.Context())})
}

// inlineScriptCSP is the policy of a page whose one script is inline,
// allowed by its source (scriptSource), whose form may post to formAction
// (a CSP source list), and which any LMS page may frame.
func inlineScriptCSP(source, formAction string) string {
	return "default-src 'none'; script-src " + source + "; style-src 'unsafe-inline'; base-uri 'none'; " +
		"form-action " + formAction + "; frame-ancestors *"
}

// scriptSource is the Content-Security-Policy source that allows one
// inline script, by its SHA-256: a page's only script is a constant, so
// the policy names exactly it.
func scriptSource(script string) string {
	sum := sha256.Sum256([]byte(script))
	return "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
}

// pageHeaders sets what every launch answer carries.
func pageHeaders(w http.ResponseWriter) http.Header {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", launchCSP)
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	return h
}

type refusedView struct {
	Heading, Reason, RequestID string
}

var refusedPage = template.Must(template.New("refused").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Heading}}</title>
</head>
<body>
<h1>{{.Heading}}</h1>
<p id="reason">{{.Reason}}</p>
<p><small>Request id: <code>{{.RequestID}}</code></small></p>
</body>
</html>
`))
