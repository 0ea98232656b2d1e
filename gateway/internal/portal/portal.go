package portal

import (
	"context"
	"log/slog"
	"net/http"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/liveproctor/workspaces/gateway/internal/reqstate"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/pkg/telemetry"
)

// The paths the portal answers.
const (
	// Root is the portal's home; every other page is below it.
	Root = "/portal/"
	// OpenPathPrefix starts every portal link's path; what follows is the
	// link's secret, which logs and traces leave out.
	OpenPathPrefix = "/portal/open/"
	staticPrefix   = "/portal/static/"
)

// Owns reports whether path is the portal's to answer.
func Owns(path string) bool { return path == "/portal" || strings.HasPrefix(path, Root) }

// Workspaces is the workspace service as the portal calls it: the link's
// opening, the session's own calls, and what a session may do with its
// workspace. The workspace service's policy, not this list, decides what a
// session may call.
type Workspaces interface {
	OpenPortalLink(ctx context.Context, in *workspacev1.OpenPortalLinkRequest, opts ...grpc.CallOption) (*workspacev1.PortalSession, error)
	GetPortalSession(ctx context.Context, in *workspacev1.GetPortalSessionRequest, opts ...grpc.CallOption) (*workspacev1.PortalSession, error)
	RevokePortalLink(ctx context.Context, in *workspacev1.RevokePortalLinkRequest, opts ...grpc.CallOption) (*workspacev1.PortalLinkRevocation, error)
	GetLtiConfiguration(ctx context.Context, in *workspacev1.GetLtiConfigurationRequest, opts ...grpc.CallOption) (*workspacev1.LtiConfiguration, error)
	CreateLtiRegistrationLink(ctx context.Context, in *workspacev1.CreateLtiRegistrationLinkRequest, opts ...grpc.CallOption) (*workspacev1.LtiRegistrationLink, error)
	ListLtiRegistrations(ctx context.Context, in *workspacev1.ListLtiRegistrationsRequest, opts ...grpc.CallOption) (*workspacev1.ListLtiRegistrationsResponse, error)
	GetLtiRegistration(ctx context.Context, in *workspacev1.GetLtiRegistrationRequest, opts ...grpc.CallOption) (*workspacev1.LtiRegistration, error)
	CreateLtiRegistration(ctx context.Context, in *workspacev1.CreateLtiRegistrationRequest, opts ...grpc.CallOption) (*workspacev1.LtiRegistration, error)
	DeleteLtiRegistration(ctx context.Context, in *workspacev1.DeleteLtiRegistrationRequest, opts ...grpc.CallOption) (*workspacev1.LtiRegistration, error)
	AddLtiDeployment(ctx context.Context, in *workspacev1.AddLtiDeploymentRequest, opts ...grpc.CallOption) (*workspacev1.LtiRegistration, error)
	RemoveLtiDeployment(ctx context.Context, in *workspacev1.RemoveLtiDeploymentRequest, opts ...grpc.CallOption) (*workspacev1.LtiRegistration, error)
	ListWorkspaceKeys(ctx context.Context, in *workspacev1.ListWorkspaceKeysRequest, opts ...grpc.CallOption) (*workspacev1.ListWorkspaceKeysResponse, error)
	RotateWorkspaceKey(ctx context.Context, in *workspacev1.RotateWorkspaceKeyRequest, opts ...grpc.CallOption) (*workspacev1.RotateWorkspaceKeyResponse, error)
	RevokeWorkspaceKey(ctx context.Context, in *workspacev1.RevokeWorkspaceKeyRequest, opts ...grpc.CallOption) (*workspacev1.KeyPair, error)
	ListWorkspaceEvents(ctx context.Context, in *workspacev1.ListWorkspaceEventsRequest, opts ...grpc.CallOption) (*workspacev1.ListWorkspaceEventsResponse, error)
}

// Metadata is what every call carries on behalf of the request (its id, the
// client's address), given by the server.
type Metadata func(ctx context.Context, r *http.Request) metadata.MD

// portal serves the pages.
type portal struct {
	service Workspaces
	md      Metadata
	logger  *slog.Logger
}

// New returns the portal's handler, for every path Owns.
func New(service Workspaces, md Metadata, logger *slog.Logger) http.Handler {
	p := &portal{service: service, md: md, logger: logger}
	mux := http.NewServeMux()
	handle := func(pattern string, h http.HandlerFunc) {
		// The route, not the path, labels the metrics and the trace: a
		// path holds ids, and the link's secret.
		route := pattern
		if _, path, ok := strings.Cut(pattern, " "); ok {
			route = strings.TrimSuffix(path, "{$}")
		}
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			reqstate.From(r.Context()).Route = route
			telemetry.NameHTTPSpan(r.Context(), r.Method, route)
			h(w, r)
		})
	}
	handle("GET "+Root+"{$}", p.page(p.overview))
	handle("GET "+OpenPathPrefix+"{secret}", p.openPage)
	handle("POST "+OpenPathPrefix+"{secret}", p.open)
	handle("POST /portal/sign-out", p.action(p.signOut))

	handle("GET /portal/lti13", p.page(p.lti13))
	handle("POST /portal/lti13/registration-link", p.action(p.makeRegistrationLink))
	handle("GET /portal/registrations", p.page(p.registrations))
	handle("GET /portal/registrations/new", p.page(p.newRegistration))
	handle("POST /portal/registrations", p.action(p.createRegistration))
	handle("GET /portal/registrations/{registration}", p.page(p.registration))
	handle("POST /portal/registrations/{registration}/deployments", p.action(p.addDeployment))
	handle("GET /portal/registrations/{registration}/deployments/remove", p.page(p.confirmRemoveDeployment))
	handle("POST /portal/registrations/{registration}/deployments/remove", p.action(p.removeDeployment))
	handle("GET /portal/registrations/{registration}/delete", p.page(p.confirmDeleteRegistration))
	handle("POST /portal/registrations/{registration}/delete", p.action(p.deleteRegistration))

	handle("GET /portal/lti11", p.page(p.lti11))
	handle("GET /portal/keys", p.page(p.keys))
	handle("GET /portal/keys/{key}/rotate", p.page(p.confirmRotateKey))
	handle("POST /portal/keys/{key}/rotate", p.action(p.rotateKey))
	handle("GET /portal/keys/{key}/revoke", p.page(p.confirmRevokeKey))
	handle("POST /portal/keys/{key}/revoke", p.action(p.revokeKey))

	handle("GET /portal/events", p.page(p.events))

	handle("GET "+staticPrefix+"{file}", p.serveStatic(staticFiles()))
	handle(Root, p.notFound)
	return withHeaders(mux)
}

// contentSecurityPolicy lets a page use its own style sheet, script and
// images only, post its forms only to the portal, and be framed by no page:
// a portal page holds the session's CSRF token and buttons that change the
// workspace.
const contentSecurityPolicy = "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; " +
	"form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// withHeaders sets what every answer carries. Nothing is cached but the
// static files, which say so themselves; no page's address (a link's
// secret, a page token) leaves in a Referer.
func withHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("Cache-Control", "no-store")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Content-Type-Options", "nosniff")
		next.ServeHTTP(w, r)
	})
}
