package server

import (
	"context"
	"errors"
	"html/template"
	"io"
	"log/slog"
	"math"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/liveproctor/workspaces/gateway/internal/sdk"
	"github.com/liveproctor/workspaces/pkg/fault"
	authv1 "github.com/liveproctor/workspaces/pkg/gen/auth/v1"
	"github.com/liveproctor/workspaces/pkg/grpcfault"
)

// ltiLaunchPath is where an LMS sends LTI 1.1 launches: the launchUrl of
// every workspace's create result.
const ltiLaunchPath = "/lti/v1/launch"

// maxLaunchParameters bounds a launch's parameters; LMSs send a few dozen.
const maxLaunchParameters = 500

// examConfigParameter names the exam configuration a launch opens, a UUID
// set as the custom parameter exam_config_id in the LMS.
const examConfigParameter = "custom_exam_config_id"

var uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// launchCSP lets the launch page run the SDK's scripts only and call only
// this gateway, and lets any LMS page frame it: LMSs open tools in iframes.
const launchCSP = "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'unsafe-inline'; " +
	"img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors *"

// ltiLaunch answers an LMS's launch: the auth service has the workspace
// service verify it and opens a session, and the page opens the LiveProctor
// component for the user; a refused launch gets a short page saying why,
// with the matching status. Nothing is cached, and the token is only in the
// page, never in a URL.
func ltiLaunch(sessions authv1.AuthServiceClient, annotate func(context.Context, *http.Request) metadata.MD, maxBodyBytes int64, logger *slog.Logger) runtime.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request, _ map[string]string) {
		if ct := r.Header.Get("Content-Type"); !isForm(ct) {
			refuseLaunch(w, r, http.StatusUnsupportedMediaType, "The launch must be a form post (Content-Type: application/x-www-form-urlencoded), as LTI 1.1 tools receive them.")
			return
		}
		params, err := launchParameters(r)
		// A body over the limit or past the deadline is answered as on
		// every route (JSON): the gateway may answer so before this runs.
		switch state := stateFrom(r.Context()); {
		case err != nil && state.bodyTooLarge:
			writeTooLarge(w, r, maxBodyBytes)
			return
		case err != nil && state.bodyTimedOut:
			writeKindError(w, r, fault.RequestTimeout, msgBodyTimeout)
			return
		case err != nil:
			refuseLaunch(w, r, http.StatusBadRequest, "The launch's parameters are malformed: "+err.Error()+".")
			return
		}
		examConfigID, problem := examConfig(params)
		if problem != "" {
			refuseLaunch(w, r, http.StatusBadRequest, problem)
			return
		}
		ctx := metadata.NewOutgoingContext(r.Context(), annotate(r.Context(), r))
		session, err := sessions.CreateLtiSession(ctx, &authv1.CreateLtiSessionRequest{Method: r.Method, Parameters: params})
		if err != nil {
			refuseLaunchError(w, r, err, logger)
			return
		}
		header := launchHeaders(w)
		header.Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		_ = launchPage.Execute(w, launchView{
			Email: session.GetEmail(), Auth: session.GetAuth(), ExamConfigID: examConfigID,
			SDKScript: sdk.ScriptPath, LaunchScript: sdk.LaunchScriptPath,
		})
	}
}

func isForm(contentType string) bool {
	mediaType, _, err := mime.ParseMediaType(contentType)
	return err == nil && mediaType == "application/x-www-form-urlencoded"
}

// launchParameters returns the launch's parameters: the query's, then the
// form body's, in order, duplicates kept, decoded ('+' is a space).
func launchParameters(r *http.Request) ([]*authv1.LtiParameter, error) {
	params, err := formPairs(r.URL.RawQuery, nil)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	return formPairs(string(body), params)
}

// formPairs appends the pairs of an application/x-www-form-urlencoded text.
func formPairs(s string, params []*authv1.LtiParameter) ([]*authv1.LtiParameter, error) {
	for part := range strings.SplitSeq(s, "&") {
		if part == "" {
			continue
		}
		if len(params) == maxLaunchParameters {
			return nil, errors.New("more than " + strconv.Itoa(maxLaunchParameters) + " parameters")
		}
		k, v, _ := strings.Cut(part, "=")
		name, err1 := url.QueryUnescape(k)
		value, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil {
			return nil, errors.New("a parameter is not properly percent-encoded")
		}
		params = append(params, &authv1.LtiParameter{Name: name, Value: value})
	}
	return params, nil
}

// examConfig returns the launch's exam configuration id, or what a teacher
// should change when there is none or it is not a UUID.
func examConfig(params []*authv1.LtiParameter) (id, problem string) {
	for _, p := range params {
		if p.GetName() == examConfigParameter {
			id = strings.TrimSpace(p.GetValue())
		}
	}
	switch {
	case id == "":
		return "", "This link opens no exam: in the LMS, add the custom parameter exam_config_id=<the exam configuration's id> to the LiveProctor tool or link."
	case !uuidPattern.MatchString(id):
		return "", "This link's exam_config_id is not an exam configuration id (a UUID such as 0f8fad5b-d9cb-469f-a165-70867728950e): correct the custom parameter in the LMS."
	}
	return id, ""
}

// refuseLaunchError answers a refusal from the services: their message
// says what to fix for the kinds a caller can act on; anything else is a
// fixed text and the log has the cause.
func refuseLaunchError(w http.ResponseWriter, r *http.Request, err error, logger *slog.Logger) {
	st := status.Convert(err)
	kind, named := grpcfault.KindOf(st)
	message := st.Message()
	switch {
	case kind == fault.Unavailable || kind == fault.DeadlineExceeded:
		message = "LiveProctor is unavailable for a moment: launch again in a minute."
	case !named || (kind != fault.Invalid && kind != fault.Unauthenticated && kind != fault.Throttled):
		// Anything else (a refused service key pair, a bug) is ours to
		// fix, not the teacher's.
		logger.Error("LTI launch failed", "request_id", requestIDFrom(r.Context()), "code", st.Code().String(), "error", st.Message())
		kind, message = fault.Internal, "The launch could not be completed because of an error on our side."
	}
	for _, d := range st.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok && (kind == fault.Throttled || kind == fault.Unavailable) {
			w.Header().Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(ri.GetRetryDelay().AsDuration().Seconds())))))
		}
	}
	if (kind == fault.Throttled || kind == fault.Unavailable) && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", "1")
	}
	refuseLaunch(w, r, grpcfault.SpecOf(kind).HTTPStatus, message)
}

// refuseLaunch answers a short page with the reason, for the teacher or
// student who sees it inside the LMS.
func refuseLaunch(w http.ResponseWriter, r *http.Request, httpStatus int, reason string) {
	header := launchHeaders(w)
	header.Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(httpStatus)
	_ = refusedPage.Execute(w, refusedView{Reason: reason, RequestID: requestIDFrom(r.Context())})
}

// launchHeaders sets what every launch answer carries.
func launchHeaders(w http.ResponseWriter) http.Header {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", launchCSP)
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
	return h
}

type launchView struct {
	Email, Auth, ExamConfigID string
	SDKScript, LaunchScript   string
}

type refusedView struct {
	Reason, RequestID string
}

var launchPage = template.Must(template.New("launch").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>LiveProctor</title>
<script src="{{.SDKScript}}"></script>
<script src="{{.LaunchScript}}" defer></script>
</head>
<body>
<div id="proctor" data-auth="{{.Auth}}" data-exam-config-id="{{.ExamConfigID}}" data-email="{{.Email}}"></div>
</body>
</html>
`))

var refusedPage = template.Must(template.New("refused").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>LiveProctor: launch refused</title>
</head>
<body>
<h1>LiveProctor could not open</h1>
<p id="reason">{{.Reason}}</p>
<p><small>Request id: <code>{{.RequestID}}</code></small></p>
</body>
</html>
`))
