package lti

import (
	"context"
	"errors"
	"html/template"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/liveproctor/workspaces/gateway/internal/httperr"
	"github.com/liveproctor/workspaces/gateway/internal/reqstate"
	"github.com/liveproctor/workspaces/gateway/internal/sdk"
	"github.com/liveproctor/workspaces/pkg/fault"
	authv1 "github.com/liveproctor/workspaces/pkg/gen/auth/v1"
)

// LaunchPath is where an LMS sends LTI 1.1 launches: the launchUrl of
// every workspace's create result.
const LaunchPath = "/lti/v1/launch"

// bytesPerParameter bounds how many parameters the gateway reads from a
// launch, a safety cap on parsing: one per that many bytes of the largest
// body it accepts. Each costs some 80 bytes of memory beside its text, so a
// launch's parameters take a few times the memory of its body at most,
// where the parameters LMSs send average far more than 32 bytes. How many a
// launch may have is the workspace service's rule, not the gateway's.
const bytesPerParameter = 32

// examConfigParameter names the exam configuration a launch opens, the
// custom parameter exam_config_id in the LMS. The workspace service checks
// it; the page only shows it.
const examConfigParameter = "custom_exam_config_id"

// SessionOpener is the call a launch makes: the auth service has the
// workspace service verify the launch and opens a session for its user.
type SessionOpener interface {
	CreateLtiSession(ctx context.Context, in *authv1.CreateLtiSessionRequest, opts ...grpc.CallOption) (*authv1.LtiSession, error)
}

// Metadata returns the gRPC metadata every call for r carries (the request
// id and the client's address).
type Metadata func(ctx context.Context, r *http.Request) metadata.MD

// Launch answers an LMS's LTI 1.1 launch on LaunchPath: the auth service
// has the workspace service verify it and opens a session, and the page
// opens the LiveProctor component for the user; a refused launch gets a
// short page saying why, with the matching status. Nothing is cached, and
// the token is only in the page, never in a URL.
func Launch(sessions SessionOpener, md Metadata, maxBodyBytes int64, logger *slog.Logger) runtime.HandlerFunc {
	maxParams := max(1, int(maxBodyBytes/bytesPerParameter))
	return func(w http.ResponseWriter, r *http.Request, _ map[string]string) {
		params, ok := readLaunch(w, r, maxParams, maxBodyBytes)
		if !ok {
			return
		}
		ctx := metadata.NewOutgoingContext(r.Context(), md(r.Context(), r))
		session, err := sessions.CreateLtiSession(ctx, &authv1.CreateLtiSessionRequest{Method: r.Method, Parameters: params})
		if err != nil {
			refuseError(w, r, err, logger)
			return
		}
		header := pageHeaders(w)
		header.Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		_ = launchPage.Execute(w, launchView{
			Email: session.GetEmail(), Auth: session.GetAuth(), ExamConfigID: examConfigID(session),
			SDKScript: sdk.ScriptPath, LaunchScript: sdk.LaunchScriptPath,
		})
	}
}

// readLaunch returns the launch's parameters, or answers why it cannot
// read them and reports false.
func readLaunch(w http.ResponseWriter, r *http.Request, maxParams int, maxBodyBytes int64) ([]*authv1.LtiParameter, bool) {
	if !isForm(r.Header.Get("Content-Type")) {
		refuse(w, r, httperr.New(fault.UnsupportedMediaType,
			"The launch must be a form post (Content-Type: application/x-www-form-urlencoded), as LTI 1.1 tools receive them.", "", 0))
		return nil, false
	}
	params, err := launchParameters(r, maxParams)
	// A body over the limit or past the deadline is answered as on every
	// route (JSON): the gateway may answer so before this runs.
	switch state := reqstate.From(r.Context()); {
	case err == nil:
		return params, true
	case state.BodyTooLarge:
		httperr.WriteTooLarge(w, r, maxBodyBytes)
	case state.BodyTimedOut:
		httperr.Write(w, r, fault.RequestTimeout, httperr.MsgBodyTimeout)
	default:
		refuse(w, r, httperr.New(fault.Invalid, "The launch's parameters are malformed: "+err.Error()+".", "", 0))
	}
	return nil, false
}

func isForm(contentType string) bool {
	mediaType, _, err := mime.ParseMediaType(contentType)
	return err == nil && mediaType == "application/x-www-form-urlencoded"
}

// launchParameters returns the launch's parameters: the query's, then the
// form body's, in order, duplicates kept, decoded ('+' is a space); at most
// maxParams of them.
func launchParameters(r *http.Request, maxParams int) ([]*authv1.LtiParameter, error) {
	params, err := formPairs(r.URL.RawQuery, nil, maxParams)
	if err != nil {
		return nil, err
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	return formPairs(string(body), params, maxParams)
}

// formPairs appends the pairs of an application/x-www-form-urlencoded text.
func formPairs(s string, params []*authv1.LtiParameter, maxParams int) ([]*authv1.LtiParameter, error) {
	for part := range strings.SplitSeq(s, "&") {
		if part == "" {
			continue
		}
		if len(params) == maxParams {
			return nil, errors.New("more than " + strconv.Itoa(maxParams) + " parameters")
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

// examConfigID returns the exam configuration of a verified launch: its
// last custom_exam_config_id, trimmed, which the workspace service found to
// be a UUID.
func examConfigID(session *authv1.LtiSession) string {
	id := ""
	for _, p := range session.GetCustomParameters() {
		if p.GetName() == examConfigParameter {
			id = strings.TrimSpace(p.GetValue())
		}
	}
	return id
}

type launchView struct {
	Email, Auth, ExamConfigID string
	SDKScript, LaunchScript   string
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
