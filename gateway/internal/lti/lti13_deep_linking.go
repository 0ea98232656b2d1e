package lti

import (
	"context"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/liveproctor/workspaces/gateway/internal/httperr"
	"github.com/liveproctor/workspaces/pkg/fault"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
)

// DeepLinkingResponder is the call the deep-linking page's form makes: the
// workspace service signs the reply to the request it kept.
type DeepLinkingResponder interface {
	CreateLtiDeepLinkingResponse(ctx context.Context, in *workspacev1.CreateLtiDeepLinkingResponseRequest,
		opts ...grpc.CallOption) (*workspacev1.LtiDeepLinkingResponse, error)
}

// DeepLinkingResponse answers the deep-linking page's form on
// DeepLinkingPath (deep_link_id, exam_config_id and an optional
// score_maximum, the gradebook column's points): the workspace service
// signs the LtiDeepLinkingResponse, and the answer is a page whose form
// posts it, as the field JWT, to the platform's deep_link_return_url, at
// once with a script, or by its button without one. A refusal is a short
// page saying why. Nothing is cached.
func DeepLinkingResponse(replies DeepLinkingResponder, md Metadata, maxBodyBytes int64, logger *slog.Logger) runtime.HandlerFunc {
	maxParams := max(1, int(maxBodyBytes/bytesPerParameter))
	return func(w http.ResponseWriter, r *http.Request, _ map[string]string) {
		if !isForm(r.Header.Get("Content-Type")) {
			refuse(w, r, httperr.New(fault.UnsupportedMediaType,
				"The exam must be sent by the page's form (Content-Type: application/x-www-form-urlencoded).", "", 0))
			return
		}
		params, ok := readFormBody(w, r, maxParams, maxBodyBytes, "The page's form is malformed: ")
		if !ok {
			return
		}
		form, why := formFields(params, "form", "deep_link_id", "exam_config_id", "score_maximum")
		if why != "" {
			refuse(w, r, httperr.New(fault.Invalid, why, "", 0))
			return
		}
		maximum, ok := scoreMaximum(form["score_maximum"])
		if !ok {
			refuse(w, r, httperr.New(fault.Invalid, "The score maximum is not a number.", "", 0))
			return
		}
		ctx := metadata.NewOutgoingContext(r.Context(), md(r.Context(), r))
		reply, err := replies.CreateLtiDeepLinkingResponse(ctx, &workspacev1.CreateLtiDeepLinkingResponseRequest{
			DeepLinkId: form["deep_link_id"], ExamConfigId: form["exam_config_id"], ScoreMaximum: maximum,
		})
		if err != nil {
			refuseError(w, r, err, logger)
			return
		}
		origin, ok := formOrigin(reply.GetReturnUrl())
		if !ok {
			refuse(w, r, httperr.New(fault.Invalid, "The LMS's deep_link_return_url cannot be posted to from this page: "+
				"add the LiveProctor link in the LMS by hand, with the custom parameter exam_config_id.", "", 0))
			return
		}
		header := pageHeaders(w)
		header.Set("Content-Type", "text/html; charset=utf-8")
		header.Set("Content-Security-Policy", deepLinkReturnCSP(origin))
		w.WriteHeader(http.StatusOK)
		_ = deepLinkReturnPage.Execute(w, deepLinkReturnView{Action: reply.GetReturnUrl(), JWT: reply.GetJwt()})
	}
}

// scoreMaximum reads the form's score_maximum: nil when left empty (the
// workspace service's default applies), false when it is no number. The
// workspace service judges its range.
func scoreMaximum(field string) (*float64, bool) {
	field = strings.TrimSpace(field)
	if field == "" {
		return nil, true
	}
	v, err := strconv.ParseFloat(field, 64)
	if err != nil {
		return nil, false
	}
	return &v, true
}

// plainOrigin is an origin a CSP source expression can name as it is.
var plainOrigin = regexp.MustCompile(`^https?://[A-Za-z0-9.-]+(:[0-9]{1,5})?$`)

// formOrigin is the origin of an http(s) URL, as a CSP source: false for
// one it cannot name safely (a host with characters a policy would read as
// syntax).
func formOrigin(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return "", false
	}
	origin := u.Scheme + "://" + u.Host
	return origin, plainOrigin.MatchString(origin)
}

// deepLinkReturnScript posts the page's form as soon as it is read; the
// policy allows it by its hash and no other script.
const deepLinkReturnScript = `document.getElementById("deep-link-return").submit();`

var deepLinkReturnScriptHash = scriptSource(deepLinkReturnScript)

// deepLinkReturnCSP lets the page run its one script and post its form to
// origin only, and lets any LMS page frame it.
func deepLinkReturnCSP(origin string) string {
	return inlineScriptCSP(deepLinkReturnScriptHash, origin)
}

type deepLinkReturnView struct {
	Action, JWT string
}

var deepLinkReturnPage = template.Must(template.New("deep-link-return").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>LiveProctor: adding the exam</title>
</head>
<body>
<h1>Adding the LiveProctor exam</h1>
<form id="deep-link-return" method="post" action="{{.Action}}">
<input type="hidden" name="JWT" value="{{.JWT}}">
<p>Returning to the LMS… If nothing happens, <button type="submit">add the exam to the course</button>.</p>
</form>
<script>` + deepLinkReturnScript + `</script>
</body>
</html>
`))
