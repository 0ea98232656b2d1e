package server

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/liveproctor/workspaces/gateway/internal/config"
	"github.com/liveproctor/workspaces/gateway/internal/httperr"
	"github.com/liveproctor/workspaces/gateway/internal/lti"
	"github.com/liveproctor/workspaces/gateway/internal/reqstate"
	"github.com/liveproctor/workspaces/gateway/internal/restcheck"
	"github.com/liveproctor/workspaces/gateway/internal/sdk"
	"github.com/liveproctor/workspaces/pkg/clientaddr"
	authv1 "github.com/liveproctor/workspaces/pkg/gen/auth/v1"
	"github.com/liveproctor/workspaces/pkg/gen/openapi"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/pkg/telemetry"
)

// newMux builds the grpc-gateway mux with both services' routes, /healthz,
// /readyz, the LTI pages and the browser SDK's files under /sdk/.
// /metrics is not among them: it is served on METRICS_ADDR (see Metrics),
// off the public port.
func (s *Server) newMux(cfg config.Config, workspaceConn, authConn *grpc.ClientConn) (*runtime.ServeMux, error) {
	errs := httperr.NewHandler(s.logger, cfg.MaxBodyBytes, outgoingHeader)
	// The query parameters each operation takes are those the served
	// document declares.
	queries, err := restcheck.NewQueryRules(openapi.JSON)
	if err != nil {
		return nil, err
	}
	mux := runtime.NewServeMux(muxOptions(cfg, errs, queries)...)
	workspaces := workspacev1.NewWorkspaceServiceClient(workspaceConn)
	auth := authv1.NewAuthServiceClient(authConn)
	for _, rt := range s.ownRoutes(cfg, errs, workspaces, auth) {
		if err := mux.HandlePath(rt.method, rt.path, rt.handler); err != nil {
			return nil, err
		}
	}
	// The services' routes come last: the mux tries a method's routes one
	// pattern match after another, from the last registered to the first,
	// so the API's routes are tried before the gateway's own, whose paths
	// (outside /api/) no API route can match.
	ctx := context.Background()
	if err := workspacev1.RegisterWorkspaceServiceHandlerClient(ctx, mux, workspaces); err != nil {
		return nil, err
	}
	if err := authv1.RegisterAuthServiceHandlerClient(ctx, mux, auth); err != nil {
		return nil, err
	}
	// Registered last, so it is tried before the generated login route.
	if !s.genericLogin {
		if err := mux.HandlePath(http.MethodPost, loginPath, directLogin(mux, auth, requestMetadata(cfg.Proxies), &s.directLogins)); err != nil {
			return nil, err
		}
	}
	return mux, nil
}

// muxOptions are the mux's codecs, header rules, error answers and
// request checks.
func muxOptions(cfg config.Config, errs *httperr.Handler, queries *restcheck.QueryRules) []runtime.ServeMuxOption {
	return []runtime.ServeMuxOption{
		runtime.WithMarshalerOption(runtime.MIMEWildcard, restcheck.NewJSONMarshaler()),
		runtime.WithIncomingHeaderMatcher(incomingHeader),
		runtime.WithOutgoingHeaderMatcher(outgoingHeader),
		runtime.WithOutgoingTrailerMatcher(dropHeader),
		runtime.WithForwardResponseOption(writeSuccessStatus(successStatuses())),
		runtime.WithMetadata(requestMetadata(cfg.Proxies)),
		runtime.WithErrorHandler(func(ctx context.Context, mux *runtime.ServeMux, m runtime.Marshaler, w http.ResponseWriter, r *http.Request, err error) {
			restcheck.NoteQueryError(r, err) // a refused query parameter's name, which err has lost
			errs.Handle(ctx, mux, m, w, r, err)
		}),
		runtime.WithRoutingErrorHandler(httperr.Routing),
		runtime.WithDisablePathLengthFallback(),
		// A path variable is one segment, decoded after the path is split:
		// /api/workspace/x%2Fkeys is the workspace "x/keys", not the keys
		// route of "x" (the legacy mode decodes the whole path first).
		runtime.WithUnescapingMode(runtime.UnescapingModeAllExceptReserved),
		// grpc-gateway keeps one query parser for the whole process.
		runtime.SetQueryParameterParser(restcheck.QueryParser{}),
		runtime.WithMiddlewares(recordRoute, refuseMalformedPathParams, restcheck.RequireJSON(lti.LaunchPath, lti.LTI13LaunchPath, lti.DeepLinkingPath, lti.LTI13LoginPath), queries.Middleware),
	}
}

// route is one of the gateway's own routes.
type route struct {
	method, path string
	handler      runtime.HandlerFunc
}

// ownRoutes are the routes the gateway answers itself: the LTI pages, the
// OpenAPI document, the health checks and the SDK's files. The SDK's files
// are registered one by one, so that other paths and methods get the
// gateway's routing errors.
func (s *Server) ownRoutes(cfg config.Config, errs *httperr.Handler, workspaces workspacev1.WorkspaceServiceClient, auth authv1.AuthServiceClient) []route {
	md := requestMetadata(cfg.Proxies)
	ltiConfig := lti.ServeConfiguration(workspaces, errs, md, s.logger)
	ltiLogin := lti.LTI13Login(workspaces, md, cfg.MaxBodyBytes, s.logger)
	routes := []route{
		{http.MethodPost, lti.LaunchPath, lti.Launch(auth, md, cfg.MaxBodyBytes, s.logger)},
		{http.MethodGet, lti.LTI13LoginPath, ltiLogin},
		{http.MethodPost, lti.LTI13LoginPath, ltiLogin},
		{http.MethodPost, lti.LTI13LaunchPath, lti.LTI13Launch(auth, md, cfg.MaxBodyBytes, s.logger)},
		{http.MethodPost, lti.DeepLinkingPath, lti.DeepLinkingResponse(workspaces, md, cfg.MaxBodyBytes, s.logger)},
		{http.MethodGet, lti.JWKSPath, lti.ServeJWKS(workspaces, errs, md)},
		{http.MethodGet, lti.RegisterPath, lti.Register(workspaces, md, s.logger)},
		{http.MethodGet, "/openapi.json", serveDocument},
		{http.MethodGet, lti.ConfigPath, ltiConfig},
		{http.MethodHead, lti.ConfigPath, ltiConfig},
		{http.MethodGet, lti.CanvasConfigPath, lti.ServeCanvasConfiguration(workspaces, errs, md, s.logger)},
		{http.MethodGet, "/healthz", healthz},
		{http.MethodGet, "/readyz", readyz(&s.draining, s.backends)},
	}
	files := sdk.Handler()
	serveFile := func(w http.ResponseWriter, r *http.Request, _ map[string]string) { files.ServeHTTP(w, r) }
	for _, path := range sdk.Paths() {
		routes = append(routes, route{http.MethodGet, path, serveFile}, route{http.MethodHead, path, serveFile})
	}
	return routes
}

// serveDocument answers the OpenAPI document of the REST interface, public
// like the interface it describes.
func serveDocument(w http.ResponseWriter, _ *http.Request, _ map[string]string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, _ = w.Write(openapi.JSON)
}

// recordRoute notes the matched route pattern for the metrics and the
// trace, which must not be labelled by raw paths (one series per workspace
// id), and the path parameters for the body decoder.
//
// grpc-gateway chains the middlewares once for each route it registers, so
// each closure only ever sees one pattern: its text is built on the route's
// first request and kept, where runtime.Pattern.String would build it anew
// (four allocations) on every request. The span is only renamed when traces
// are exported; otherwise there is none.
func recordRoute(next runtime.HandlerFunc) runtime.HandlerFunc {
	var route atomic.Pointer[string]
	return func(w http.ResponseWriter, r *http.Request, params map[string]string) {
		state := reqstate.From(r.Context())
		name := route.Load()
		if name == nil {
			if pattern, ok := runtime.HTTPPattern(r.Context()); ok {
				text := pattern.String()
				name = &text
				route.Store(name)
			}
		}
		if name != nil {
			state.Route = *name
			telemetry.NameHTTPSpan(r.Context(), r.Method, state.Route)
		}
		state.PathParams = params
		next(w, r, params)
	}
}

// incomingHeader forwards If-Match as if-match metadata and nothing else:
// grpc-gateway adds Authorization as authorization itself, and the request
// id travels through requestMetadata. Clients cannot set other metadata.
func incomingHeader(key string) (string, bool) {
	if strings.EqualFold(key, "If-Match") {
		return "if-match", true
	}
	return "", false
}

// outgoingHeader turns the backends' etag and rate-limit header metadata
// into HTTP headers and drops all other metadata, on answers and error
// answers alike. The names are in Go's canonical form, which is how
// net/http sends them whatever the case they are added in (ETag goes out
// as Etag); given that way, adding them costs no copy.
func outgoingHeader(key string) (string, bool) {
	switch strings.ToLower(key) {
	case "etag":
		return "Etag", true
	case "ratelimit": // pkg/ratelimit.StateHeader
		return "Ratelimit", true
	case "ratelimit-policy": // pkg/ratelimit.PolicyHeader
		return "Ratelimit-Policy", true
	}
	return "", false
}

// dropHeader forwards no trailer metadata.
func dropHeader(string) (string, bool) { return "", false }

// requestMetadata forwards the request id and the client's address to the
// backend. The address replaces the X-Forwarded-For grpc-gateway would
// send, which keeps whatever the client put in the header: the services
// trust the gateway's one entry, so it must be the client's address as the
// gateway's own TRUSTED_PROXIES find it.
func requestMetadata(proxies clientaddr.Resolver) func(context.Context, *http.Request) metadata.MD {
	return func(ctx context.Context, r *http.Request) metadata.MD {
		// One map and one array for both values: md.Set would allocate
		// a slice per key.
		md := make(metadata.MD, 2)
		values := make([]string, 0, 2)
		if id := reqstate.ID(ctx); id != "" {
			values = append(values, id)
			md[reqstate.IDMetadata] = values[0:1:1]
		}
		if a := proxies.FromRequest(r); a.IsValid() {
			values = append(values, a.String())
			md[clientaddr.ForwardedFor] = values[len(values)-1 : len(values) : len(values)]
		}
		return md
	}
}
