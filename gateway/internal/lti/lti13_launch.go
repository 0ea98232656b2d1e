package lti

import (
	"context"
	"html/template"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"unicode/utf8"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/liveproctor/workspaces/gateway/internal/httperr"
	"github.com/liveproctor/workspaces/gateway/internal/reqstate"
	"github.com/liveproctor/workspaces/gateway/internal/sdk"
	"github.com/liveproctor/workspaces/pkg/clip"
	"github.com/liveproctor/workspaces/pkg/fault"
	authv1 "github.com/liveproctor/workspaces/pkg/gen/auth/v1"
	"github.com/liveproctor/workspaces/pkg/ltistorage"
)

// LTI13LaunchPath is where platforms post LTI 1.3 launches (the OIDC
// form_post of id_token and state): the redirect URI and target link URI
// registered with them.
const LTI13LaunchPath = "/lti/v1p3/launch"

// DeepLinkingPath is where the deep-linking page posts the exam the
// teacher picked.
const DeepLinkingPath = "/lti/v1p3/deep-linking"

// messageDeepLinking is the message type of a deep-linking launch.
const messageDeepLinking = "LtiDeepLinkingRequest"

// maxPlatformError bounds, in characters, the platform's error text a refusal
// page repeats: at most 800 bytes, so the page's whole message stays under the
// 1 KiB an answer's message keeps to whatever the caller sent.
const maxPlatformError = 200

// LTI13SessionOpener is the call an LTI 1.3 launch makes: the auth service
// has the workspace service verify it and opens a session for its user.
type LTI13SessionOpener interface {
	CreateLti13Session(ctx context.Context, in *authv1.CreateLti13SessionRequest, opts ...grpc.CallOption) (*authv1.LtiSession, error)
}

// LTI13Launch answers a platform's LTI 1.3 launch on LTI13LaunchPath, a
// form post of id_token and state, with the state the browser kept in the
// cookie its login set (StateCookie), or in the platform's storage, which
// a page reads back and posts with the launch (lti13BrowserProof): the
// auth service has the workspace service verify them and opens a session.
// A resource-link launch gets the same page as an LTI 1.1 launch; a
// deep-linking launch a page where the teacher names the exam to add. The state's cookie is then removed. A
// refused launch gets a short page saying why. Nothing is cached.
func LTI13Launch(sessions LTI13SessionOpener, md Metadata, maxBodyBytes int64, logger *slog.Logger) runtime.HandlerFunc {
	maxParams := max(1, int(maxBodyBytes/bytesPerParameter))
	return func(w http.ResponseWriter, r *http.Request, _ map[string]string) {
		form, ok := readLTI13Launch(w, r, maxParams, maxBodyBytes)
		if !ok {
			return
		}
		req, ok := lti13BrowserProof(w, r, form)
		if !ok {
			return
		}
		ctx := metadata.NewOutgoingContext(r.Context(), md(r.Context(), r))
		session, err := sessions.CreateLti13Session(ctx, req)
		if err != nil {
			refuseError(w, r, err, logger)
			return
		}
		header := pageHeaders(w)
		http.SetCookie(w, StateCookie(req.GetState(), -1))
		header.Set("Content-Type", "text/html; charset=utf-8")
		if session.GetMessageType() == messageDeepLinking {
			header.Set("Content-Security-Policy", deepLinkingCSP)
			w.WriteHeader(http.StatusOK)
			_ = deepLinkingPage.Execute(w, deepLinkingView{Email: session.GetEmail(), Action: DeepLinkingPath, DeepLinkID: session.GetDeepLinkId()})
			return
		}
		w.WriteHeader(http.StatusOK)
		_ = launchPage.Execute(w, launchView{
			Email: session.GetEmail(), Auth: session.GetAuth(), ExamConfigID: examConfigID(session),
			SDKScript: sdk.ScriptPath, LaunchScript: sdk.LaunchScriptPath,
		})
	}
}

// readLTI13Launch returns the launch's form fields (id_token, state, and
// what a launch page read from the platform's storage), or answers why it
// cannot and reports false. Whether they are present and sound is the
// workspace service's to say; a platform that posts an OIDC error instead
// of a token gets its error repeated.
func readLTI13Launch(w http.ResponseWriter, r *http.Request, maxParams int, maxBodyBytes int64) (map[string]string, bool) {
	if !isForm(r.Header.Get("Content-Type")) {
		refuse(w, r, httperr.New(fault.UnsupportedMediaType,
			"The launch must be a form post (Content-Type: application/x-www-form-urlencoded) of id_token and state, as LTI 1.3 platforms send it.", "", 0))
		return nil, false
	}
	params, ok := readFormBody(w, r, maxParams, maxBodyBytes, "The launch's form is malformed: ")
	if !ok {
		return nil, false
	}
	form, why := formFields(params, "launch", "id_token", "state", "error", "error_description", fieldStorageState, fieldStorageNonce)
	switch {
	case why != "":
		refuse(w, r, httperr.New(fault.Invalid, why, "", 0))
		return nil, false
	case form["id_token"] == "" && form["error"] != "":
		refuse(w, r, httperr.New(fault.Invalid, "The LMS answered the login with an error instead of a launch: "+
			clip.Runes(form["error"]+": "+form["error_description"], maxPlatformError)+". Open the link again from the LMS.", "", 0))
		return nil, false
	}
	return form, true
}

// errStorageCrossSite refuses what a launch page read from the platform's
// storage when another site posted it: only this gateway's own launch
// page reads it, in the browser that logged in.
var errStorageCrossSite = httperr.New(fault.Unauthenticated,
	"The launch's storage values were not posted by LiveProctor's own launch page. Open the link again from the LMS.", "", 0)

// lti13BrowserProof returns the session request of a launch with what its
// browser presents: what the launch page read back from the platform's
// storage, posted by that page (same origin); or, for a login that kept its
// state in the platform's storage, nothing yet: it answers the launch page
// that reads it (and reports false); or else the state cookie.
func lti13BrowserProof(w http.ResponseWriter, r *http.Request, form map[string]string) (*authv1.CreateLti13SessionRequest, bool) {
	req := &authv1.CreateLti13SessionRequest{IdToken: form["id_token"], State: form["state"]}
	if _, stored := form[fieldStorageState]; stored {
		if !sameOriginPost(r) {
			refuse(w, r, errStorageCrossSite)
			return nil, false
		}
		req.BrowserState, req.BrowserNonce, req.FromPlatformStorage = form[fieldStorageState], form[fieldStorageNonce], true
		return req, true
	}
	if target, origin, ok := ltistorage.ParseState(req.State); ok && req.IdToken != "" {
		writeStoragePage(w, storageView{
			Mode: "launch", Target: target, Origin: origin, State: req.State, Nonce: tokenNonce(req.IdToken),
			IDToken: req.IdToken, Action: LTI13LaunchPath,
		})
		return nil, false
	}
	if c, err := r.Cookie(StateCookieName(req.State)); err == nil {
		req.BrowserState = c.Value
	}
	return req, true
}

// readFormBody returns the pairs of a form body, or answers why it cannot
// (malformed starts the message of a malformed form) and reports false.
func readFormBody(w http.ResponseWriter, r *http.Request, maxParams int, maxBodyBytes int64, malformed string) ([]*authv1.LtiParameter, bool) {
	body, err := io.ReadAll(r.Body)
	var params []*authv1.LtiParameter
	if err == nil {
		params, err = formPairs(string(body), nil, maxParams)
	}
	// A body over the limit or past the deadline is answered as on every
	// route (JSON): the gateway may answer so before this runs.
	switch st := reqstate.From(r.Context()); {
	case err == nil:
		return params, true
	case st.BodyTooLarge:
		httperr.WriteTooLarge(w, r, maxBodyBytes)
	case st.BodyTimedOut:
		httperr.Write(w, r, fault.RequestTimeout, httperr.MsgBodyTimeout)
	default:
		refuse(w, r, httperr.New(fault.Invalid, malformed+err.Error()+".", "", 0))
	}
	return nil, false
}

// formFields picks the named fields out of params (others are ignored), or
// says why it cannot: a field sent twice with different values is
// ambiguous, and text that is not UTF-8 cannot travel. what names the form
// in the message ("launch").
func formFields(params []*authv1.LtiParameter, what string, names ...string) (map[string]string, string) {
	form := map[string]string{}
	for _, p := range params {
		name, value := p.GetName(), p.GetValue()
		if !slices.Contains(names, name) {
			continue
		}
		seen, ok := form[name]
		switch {
		case !utf8.ValidString(value):
			return nil, "The " + what + "'s " + name + " is not valid UTF-8."
		case ok && seen != value:
			return nil, "The " + what + " has two different values of " + name + "."
		}
		form[name] = value
	}
	return form, ""
}

// deepLinkingCSP is launchCSP with no scripts, and the form may post to
// this gateway.
const deepLinkingCSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'self'; frame-ancestors *"

type deepLinkingView struct {
	Email, Action, DeepLinkID string
}

var deepLinkingPage = template.Must(template.New("deep-linking").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>LiveProctor: add an exam</title>
</head>
<body>
<h1>Add a LiveProctor exam</h1>
<p>Signed in as {{.Email}}.</p>
<form method="post" action="{{.Action}}">
<input type="hidden" name="deep_link_id" value="{{.DeepLinkID}}">
<label for="exam_config_id">Exam configuration id</label>
<input id="exam_config_id" name="exam_config_id" required
 pattern="[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}"
 placeholder="0f8fad5b-d9cb-469f-a165-70867728950e">
<label for="score_maximum">Points in the gradebook (if the LMS makes a column)</label>
<input id="score_maximum" name="score_maximum" type="number" min="0.01" step="any" placeholder="100">
<button type="submit">Add to the course</button>
</form>
</body>
</html>
`))
