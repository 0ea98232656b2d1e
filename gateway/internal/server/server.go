// Package server is the gateway's HTTP server: grpc-gateway routes that
// translate the documented JSON/REST API into calls on the workspace and
// auth services, wrapped in request ids, body limits, timeouts, panic
// recovery, access logs and one error shape for every failure.
package server

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/liveproctor/workspaces/gateway/internal/config"
	"github.com/liveproctor/workspaces/gateway/internal/sdk"
	"github.com/liveproctor/workspaces/pkg/clientaddr"
	authv1 "github.com/liveproctor/workspaces/pkg/gen/auth/v1"
	"github.com/liveproctor/workspaces/pkg/gen/openapi"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/pkg/grpcmw"
	"github.com/liveproctor/workspaces/pkg/telemetry"
)

// maxResponseBytes bounds a backend answer; a full page of workspaces with
// long product lists stays well below it.
const maxResponseBytes = 32 << 20

// Server is the gateway: an HTTP server over gRPC connections to both
// backends.
type Server struct {
	logger   *slog.Logger
	metrics  *telemetry.Metrics
	handler  http.Handler
	http     *http.Server
	backends []backend
	draining atomic.Bool
}

// New builds the gateway. It dials nothing yet: connections to the backends
// open on first use and reconnect on their own.
func New(cfg config.Config, logger *slog.Logger) (*Server, error) {
	metrics := telemetry.NewMetrics()
	workspaceConn, err := dial(cfg.WorkspaceServiceAddr, metrics)
	if err != nil {
		return nil, err
	}
	authConn, err := dial(cfg.AuthServiceAddr, metrics)
	if err != nil {
		return nil, errors.Join(err, workspaceConn.Close())
	}
	s := &Server{
		logger:   logger,
		metrics:  metrics,
		backends: []backend{newBackend("workspace service", workspaceConn), newBackend("auth service", authConn)},
	}
	mux, err := s.newMux(cfg, workspaceConn, authConn)
	if err != nil {
		return nil, errors.Join(err, s.closeBackends())
	}

	var h http.Handler = mux
	h = withCORS(newCORSPolicy(cfg.CORSAllowedOrigins), h)
	h = withTimeout(cfg.RequestTimeout, h)
	h = limitBody(cfg.MaxBodyBytes, h)
	h = dropGRPCHeaders(h)
	h = refuseMalformedHeaders(h)
	h = recoverPanics(logger, h)
	h = accessLog(logger, metrics, h)
	h = withRequestID(h)
	// Outermost, so a span covers everything and carries the caller's
	// trace context (traceparent) on to the services.
	h = telemetry.HTTPHandler(h, "gateway")
	s.handler = h

	s.http = &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       cfg.RequestTimeout + 5*time.Second,
		WriteTimeout:      cfg.RequestTimeout + 5*time.Second,
		IdleTimeout:       2 * time.Minute,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	return s, nil
}

// dial returns a lazy client connection to a backend on the loopback or
// cluster network, where the gateway speaks plaintext gRPC.
func dial(addr string, metrics *telemetry.Metrics) (*grpc.ClientConn, error) {
	return grpc.NewClient(addr, append(append(telemetry.GRPCDialOptions(), grpcmw.DialTransportOptions()...),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUnaryInterceptor(metrics.UnaryClientInterceptor()),
		grpc.WithUserAgent("workspaces-gateway"),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxResponseBytes)),
	)...)
}

// newMux builds the grpc-gateway mux with both services' routes, /healthz,
// /readyz, the LTI configuration XML and the browser SDK's files under
// /sdk/. /metrics is not among
// them: it is served on METRICS_ADDR (see Metrics), off the public port.
func (s *Server) newMux(cfg config.Config, workspaceConn, authConn *grpc.ClientConn) (*runtime.ServeMux, error) {
	errs := &errorHandler{logger: s.logger, maxBodyBytes: cfg.MaxBodyBytes}
	// The query parameters each operation takes are those the served
	// document declares.
	queries, err := newQueryRules(openapi.JSON)
	if err != nil {
		return nil, err
	}
	mux := runtime.NewServeMux(
		runtime.WithMarshalerOption(runtime.MIMEWildcard, newJSONMarshaler()),
		runtime.WithIncomingHeaderMatcher(incomingHeader),
		runtime.WithOutgoingHeaderMatcher(outgoingHeader),
		runtime.WithOutgoingTrailerMatcher(dropHeader),
		runtime.WithMetadata(requestMetadata(cfg.Proxies)),
		runtime.WithErrorHandler(func(ctx context.Context, mux *runtime.ServeMux, m runtime.Marshaler, w http.ResponseWriter, r *http.Request, err error) {
			noteQueryError(r, err) // a refused query parameter's name, which err has lost
			errs.handle(ctx, mux, m, w, r, err)
		}),
		runtime.WithRoutingErrorHandler(routingError),
		runtime.WithDisablePathLengthFallback(),
		// A path variable is one segment, decoded after the path is split:
		// /api/workspace/x%2Fkeys is the workspace "x/keys", not the keys
		// route of "x" (the legacy mode decodes the whole path first).
		runtime.WithUnescapingMode(runtime.UnescapingModeAllExceptReserved),
		// grpc-gateway keeps one query parser for the whole process.
		runtime.SetQueryParameterParser(queryParser{}),
		runtime.WithMiddlewares(recordRoute, refuseMalformedPathParams, requireJSON, queries.middleware),
	)
	authClient := authv1.NewAuthServiceClient(authConn)
	if err := mux.HandlePath(http.MethodPost, ltiLaunchPath, ltiLaunch(authClient, requestMetadata(cfg.Proxies), cfg.MaxBodyBytes, s.logger)); err != nil {
		return nil, err
	}
	if err := mux.HandlePath(http.MethodGet, "/openapi.json", serveDocument); err != nil {
		return nil, err
	}
	ltiConfig := serveLTIConfiguration(workspacev1.NewWorkspaceServiceClient(workspaceConn), errs, requestMetadata(cfg.Proxies))
	for _, method := range []string{http.MethodGet, http.MethodHead} {
		if err := mux.HandlePath(method, ltiConfigPath, ltiConfig); err != nil {
			return nil, err
		}
	}
	if err := mux.HandlePath(http.MethodGet, "/healthz", healthz); err != nil {
		return nil, err
	}
	if err := mux.HandlePath(http.MethodGet, "/readyz", readyz(&s.draining, s.backends)); err != nil {
		return nil, err
	}
	// The SDK's files are registered one by one, so that other paths and
	// methods get the gateway's routing errors.
	files := sdk.Handler()
	serveFile := func(w http.ResponseWriter, r *http.Request, _ map[string]string) { files.ServeHTTP(w, r) }
	for _, path := range sdk.Paths() {
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			if err := mux.HandlePath(method, path, serveFile); err != nil {
				return nil, err
			}
		}
	}
	// The services' routes come last: the mux tries a method's routes one
	// pattern match after another, from the last registered to the first,
	// so the API's routes are tried before the handful above, whose paths
	// (outside /api/) no API route can match.
	ctx := context.Background()
	if err := workspacev1.RegisterWorkspaceServiceHandlerClient(ctx, mux, workspacev1.NewWorkspaceServiceClient(workspaceConn)); err != nil {
		return nil, err
	}
	if err := authv1.RegisterAuthServiceHandlerClient(ctx, mux, authClient); err != nil {
		return nil, err
	}
	return mux, nil
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
		state := stateFrom(r.Context())
		name := route.Load()
		if name == nil {
			if pattern, ok := runtime.HTTPPattern(r.Context()); ok {
				text := pattern.String()
				name = &text
				route.Store(name)
			}
		}
		if name != nil {
			state.route = *name
			telemetry.NameHTTPSpan(r.Context(), r.Method, state.route)
		}
		state.pathParams = params
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
// into HTTP headers and drops all other metadata. The names are in Go's
// canonical form, which is how net/http sends them whatever the case they
// are added in (ETag goes out as Etag); given that way, adding them costs
// no copy.
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
		if id := requestIDFrom(ctx); id != "" {
			values = append(values, id)
			md[requestIDMetadata] = values[0:1:1]
		}
		if a := proxies.FromRequest(r); a.IsValid() {
			values = append(values, a.String())
			md[clientaddr.ForwardedFor] = values[len(values)-1 : len(values) : len(values)]
		}
		return md
	}
}

// Drain makes /readyz answer 503 from now on, so load balancers stop
// sending new requests while in-flight ones finish. Call it on SIGTERM,
// before Shutdown.
func (s *Server) Drain() { s.draining.Store(true) }

// Metrics returns the gateway's metrics, for telemetry.ServeMetrics.
func (s *Server) Metrics() *telemetry.Metrics { return s.metrics }

// Handler returns the gateway's HTTP handler with all middleware.
func (s *Server) Handler() http.Handler { return s.handler }

// Serve serves HTTP on lis until Shutdown; it then returns
// http.ErrServerClosed.
func (s *Server) Serve(lis net.Listener) error { return s.http.Serve(lis) }

// Shutdown stops accepting requests, waits for in-flight ones until ctx
// ends, and closes the backend connections.
func (s *Server) Shutdown(ctx context.Context) error {
	return errors.Join(s.http.Shutdown(ctx), s.closeBackends())
}

func (s *Server) closeBackends() error {
	var errs []error
	for _, b := range s.backends {
		errs = append(errs, b.conn.Close())
	}
	return errors.Join(errs...)
}
