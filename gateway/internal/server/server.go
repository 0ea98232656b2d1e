// Package server is the gateway's HTTP server: grpc-gateway routes that
// translate the documented JSON/REST API into calls on the workspace and
// auth services, beside the LTI pages, the administrator's portal, health
// checks and the SDK's files, wrapped in request ids, body limits,
// timeouts, panic recovery and access logs. The checks of the REST
// contract (restcheck), the error answers (httperr), the LTI pages (lti)
// and the portal's (portal) are wired in here.
package server

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/liveproctor/workspaces/gateway/internal/config"
	"github.com/liveproctor/workspaces/gateway/internal/lti"
	"github.com/liveproctor/workspaces/gateway/internal/portal"
	"github.com/liveproctor/workspaces/gateway/internal/reqstate"
	authv1 "github.com/liveproctor/workspaces/pkg/gen/auth/v1"
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
	// genericLogin leaves POST /api/login/sdk to grpc-gateway's generated
	// handler instead of directLogin, for the test that holds one to the
	// other.
	genericLogin bool
	directLogins atomic.Int64 // logins directLogin answered
}

// New builds the gateway. It dials nothing yet: connections to the backends
// open on first use and reconnect on their own.
func New(cfg config.Config, logger *slog.Logger) (*Server, error) {
	return build(cfg, logger, false)
}

// build is New, with the login route left to grpc-gateway when
// genericLogin is set.
func build(cfg config.Config, logger *slog.Logger, genericLogin bool) (*Server, error) {
	metrics := telemetry.NewMetrics()
	workspaceConn, err := dial(cfg.WorkspaceServiceAddr, workspacev1.WorkspaceService_ServiceDesc.ServiceName, metrics)
	if err != nil {
		return nil, err
	}
	authConn, err := dial(cfg.AuthServiceAddr, authv1.AuthService_ServiceDesc.ServiceName, metrics)
	if err != nil {
		return nil, errors.Join(err, workspaceConn.Close())
	}
	s := &Server{
		logger:   logger,
		metrics:  metrics,
		backends: []backend{newBackend("workspace service", workspaceConn), newBackend("auth service", authConn)},

		genericLogin: genericLogin,
	}
	mux, err := s.newMux(cfg, workspaceConn, authConn)
	if err != nil {
		return nil, errors.Join(err, s.closeBackends())
	}
	pages := portal.New(workspacev1.NewWorkspaceServiceClient(workspaceConn), requestMetadata(cfg.Proxies), logger)

	var h http.Handler = withPortal(pages, mux)
	h = withCORS(newCORSPolicy(cfg.CORSAllowedOrigins), h)
	h = withTimeout(cfg.RequestTimeout, h)
	h = limitBody(cfg.MaxBodyBytes, h)
	h = dropGRPCHeaders(h)
	h = refuseMalformedHeaders(h)
	h = recoverPanics(logger, h)
	h = accessLog(logger, metrics, h)
	h = reqstate.WithID(h)
	// Outermost, so a span covers everything and carries the caller's
	// trace context (traceparent) on to the services.
	h = telemetry.HTTPHandler(h, "gateway", lti.RegisterPathPrefix, portal.OpenPathPrefix)
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

// withPortal hands the administrator's portal its pages, before the mux:
// they are a site of their own (HTML answers, its own refusal pages, form
// posts), which the REST routes' checks and error answers do not fit.
func withPortal(pages, mux http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if portal.Owns(r.URL.Path) {
			pages.ServeHTTP(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// dial returns a lazy client connection to the replicas of a backend
// service on the loopback or cluster network, where the gateway speaks
// plaintext gRPC.
func dial(target, service string, metrics *telemetry.Metrics) (*grpc.ClientConn, error) {
	opts := append(telemetry.GRPCDialOptions(), grpcmw.DialOptions(service)...)
	return grpc.NewClient(target, append(opts,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithUnaryInterceptor(metrics.UnaryClientInterceptor()),
		grpc.WithUserAgent("workspaces-gateway"),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxResponseBytes)),
	)...)
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
