package lti

import (
	"context"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"unicode/utf8"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/liveproctor/workspaces/gateway/internal/httperr"
	"github.com/liveproctor/workspaces/pkg/fault"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
)

// RegisterPath is the pattern of the registration links a workspace's
// managers make (POST /api/workspace/{id}/lti/registration-links): the LTI
// Dynamic Registration initiation URL an LMS administrator gives the
// platform, which opens it with openid_configuration and
// registration_token.
const RegisterPath = RegisterPathPrefix + "{link}"

// RegisterPathPrefix starts every registration link's path; what follows
// is the link's secret, which logs and traces leave out.
const RegisterPathPrefix = "/lti/v1p3/register/"

// PlatformRegistrar is the call a registration link makes.
type PlatformRegistrar interface {
	RegisterLtiPlatform(ctx context.Context, in *workspacev1.RegisterLtiPlatformRequest, opts ...grpc.CallOption) (*workspacev1.LtiPlatformRegistration, error)
}

// Register answers a platform's opening of a registration link (GET
// RegisterPath): the workspace service registers the tool with the
// platform and stores the registration, and the page tells the platform's
// window it is done (LTI-DR 1.0 §3.7: a postMessage of
// {subject: "org.imsglobal.lti.close"} to its opener or parent). A refusal
// is a short page saying why. Nothing is cached.
func Register(registrar PlatformRegistrar, md Metadata, logger *slog.Logger) runtime.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request, params map[string]string) {
		req, why := registerRequest(params["link"], r.URL.RawQuery)
		if why != "" {
			refuseRegistration(w, r, httperr.New(fault.Invalid, why, "", 0))
			return
		}
		ctx := metadata.NewOutgoingContext(r.Context(), md(r.Context(), r))
		done, err := registrar.RegisterLtiPlatform(ctx, req)
		if err != nil {
			refuseRegistrationError(w, r, err, logger)
			return
		}
		header := pageHeaders(w)
		header.Set("Content-Security-Policy", registeredCSP)
		header.Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		_ = registeredPage.Execute(w, registeredView{
			Platform: platformName(done.GetPlatformName()), WorkspaceID: done.GetWorkspaceId(),
			ClientID: done.GetRegistration().GetClientId(), Deployments: done.GetRegistration().GetDeploymentIds(),
			Script: template.JS(closeScript), //nolint:gosec // a constant
		})
	}
}

// registerRequest reads the link and the platform's two parameters, or
// says why it cannot. Other parameters are ignored; one given twice must
// have one value.
func registerRequest(link, rawQuery string) (*workspacev1.RegisterLtiPlatformRequest, string) {
	query, err := url.ParseQuery(rawQuery)
	if err != nil {
		return nil, "The registration link's query string is malformed."
	}
	req := &workspacev1.RegisterLtiPlatformRequest{Link: link}
	for _, f := range []struct {
		name  string
		field *string
	}{{"openid_configuration", &req.OpenidConfiguration}, {"registration_token", &req.RegistrationToken}} {
		name, field, values := f.name, f.field, query[f.name]
		for _, v := range values[min(1, len(values)):] {
			if v != values[0] {
				return nil, "The registration link's " + name + " is given more than once, with different values."
			}
		}
		if len(values) > 0 {
			if !utf8.ValidString(values[0]) {
				return nil, "The platform's " + name + " is not valid UTF-8."
			}
			*field = values[0]
		}
	}
	return req, ""
}

// platformName is how the page names the platform.
func platformName(product string) string {
	if product == "" {
		return "the LMS"
	}
	return product
}

// closeScript tells the platform's window that registration is over (LTI-DR
// 1.0 §3.7): the platform opened the link in a frame (parent) or a window
// (opener). No data travels, so any origin may read it.
const closeScript = `(window.opener || window.parent).postMessage({subject: "org.imsglobal.lti.close"}, "*");`

// registeredCSP allows the page's one inline script, by its digest, and
// lets the platform's page frame it.
var registeredCSP = inlineScriptCSP(scriptSource(closeScript), "'none'")

type registeredView struct {
	Platform, WorkspaceID, ClientID string
	Deployments                     []string
	Script                          template.JS
}

var registeredPage = template.Must(template.New("registered").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>LiveProctor: registered</title>
</head>
<body>
<h1>LiveProctor is registered</h1>
<p id="registered">LiveProctor is registered with {{.Platform}} for workspace <code>{{.WorkspaceID}}</code>, as client <code id="client-id">{{.ClientID}}</code>.</p>
{{if .Deployments}}<p>Deployment: <code id="deployment-id">{{index .Deployments 0}}</code>. Courses can add it now.</p>
{{else}}<p id="no-deployment">The LMS made no deployment yet: once the tool is installed there, add its deployment id to the registration (<code>POST …/lti/registrations/{id}/deployments</code>).</p>
{{end}}<p>You may close this window.</p>
<script>{{.Script}}</script>
</body>
</html>
`))

// registrationRefused heads every refusal of a registration link.
const registrationRefused = "LiveProctor could not be registered"

// refuseRegistration answers a refused registration with a short page.
func refuseRegistration(w http.ResponseWriter, r *http.Request, a httperr.Answer) {
	refusePage(w, r, a, registrationRefused)
}

// refuseRegistrationError answers the workspace service's refusal of a
// registration: its message for what an administrator can act on (the
// link, the platform's configuration or answer, a client id registered
// already, a workspace that holds the most registrations).
func refuseRegistrationError(w http.ResponseWriter, r *http.Request, err error, logger *slog.Logger) {
	refuseRegistration(w, r, pageAnswer(r, err, logger, "LTI Dynamic Registration failed",
		fault.Invalid, fault.Unauthenticated, fault.Throttled, fault.Conflict, fault.FailedPrecondition, fault.BadGateway))
}
