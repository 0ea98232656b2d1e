package service

import (
	"context"
	"fmt"
	"log/slog"
	"net"

	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"

	"github.com/liveproctor/workspaces/pkg/basicauth"
	"github.com/liveproctor/workspaces/pkg/breaker"
	"github.com/liveproctor/workspaces/pkg/cachebus"
	"github.com/liveproctor/workspaces/pkg/clientaddr"
	authv1 "github.com/liveproctor/workspaces/pkg/gen/auth/v1"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/pkg/grpcmw"
	"github.com/liveproctor/workspaces/pkg/ratelimit"
	"github.com/liveproctor/workspaces/pkg/redisconn"
	"github.com/liveproctor/workspaces/pkg/telemetry"
	"github.com/liveproctor/workspaces/services/auth/internal/adapters/changebus"
	"github.com/liveproctor/workspaces/services/auth/internal/adapters/redisstore"
	"github.com/liveproctor/workspaces/services/auth/internal/adapters/workspaceclient"
	"github.com/liveproctor/workspaces/services/auth/internal/app"
	"github.com/liveproctor/workspaces/services/auth/internal/ports/grpcport"
)

// Service is a running auth service.
type Service struct {
	cfg       Config
	logger    *slog.Logger
	redis     redis.UniversalClient
	store     *redisstore.Store
	workspace *grpc.ClientConn
	grpc      *grpc.Server
	health    *health.Server
	lis       net.Listener
	served    chan error
	stop      context.CancelFunc
	probed    chan struct{}
	// stopListening ends the cache bus's loop, after the calls in flight
	// at shutdown, which it keeps serving right; listened is closed then.
	stopListening context.CancelFunc
	listened      chan struct{}
	metrics       *telemetry.MetricsServer
}

// Start connects to Redis and the workspace service (neither needs to be up
// yet: calls fail with Unavailable until they are) and serves gRPC.
func Start(cfg Config, logger *slog.Logger) (*Service, error) {
	s := &Service{cfg: cfg, logger: logger, served: make(chan error, 1), probed: make(chan struct{}), listened: make(chan struct{})}
	metrics := telemetry.NewMetrics()
	if err := s.start(metrics); err != nil {
		s.closeConnections()
		return nil, err
	}
	return s, nil
}

// start opens the connections, builds the application, serves gRPC and
// starts the store's health probe and the cache bus's loop.
func (s *Service) start(metrics *telemetry.Metrics) error {
	if err := s.dialWorkspace(metrics); err != nil {
		return err
	}
	var err error
	if s.lis, err = net.Listen("tcp", s.cfg.GRPCAddr); err != nil {
		return fmt.Errorf("AUTH_GRPC_ADDR: %w", err)
	}
	storeBreaker, err := s.openRedis(metrics)
	if err != nil {
		return err
	}
	if s.metrics, err = telemetry.ServeMetrics(s.cfg.MetricsAddr, metrics, s.logger); err != nil {
		return fmt.Errorf("METRICS_ADDR: %w", err)
	}
	application := s.newApp()
	s.serve(application, metrics)
	loopCtx, stop := context.WithCancel(context.Background())
	s.stop = stop
	go func() {
		defer close(s.probed)
		grpcmw.ProbeHealth(loopCtx, s.health, []string{authv1.AuthService_ServiceDesc.ServiceName}, storeBreaker, s.store.Ping, s.logger, "token store")
	}()
	// Changes any replica of either service tells of drop what this one
	// remembers of them.
	busCtx, stopListening := context.WithCancel(context.Background())
	s.stopListening = stopListening
	go func() {
		defer close(s.listened)
		cachebus.Run(busCtx, s.redis, changebus.NewListener(application), s.logger)
	}()
	go func() { s.served <- s.grpc.Serve(s.lis) }()
	s.logger.Info("auth service serving", "addr", s.lis.Addr().String(), "redis", s.cfg.Redis.Addrs)
	return nil
}

// dialWorkspace makes the client of the workspace service, which checks
// key pairs and verifies LTI launches.
func (s *Service) dialWorkspace(metrics *telemetry.Metrics) error {
	var err error
	opts := append(telemetry.GRPCDialOptions(), grpcmw.DialOptions(workspacev1.WorkspaceService_ServiceDesc.ServiceName)...)
	s.workspace, err = grpc.NewClient(s.cfg.WorkspaceServiceAddr, append(opts,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		// The workspace service counts failed key pairs per client
		// address: it gets the address of the call being served.
		grpc.WithChainUnaryInterceptor(metrics.UnaryClientInterceptor(), clientaddr.UnaryClientInterceptor()))...)
	if err != nil {
		return fmt.Errorf("WORKSPACE_SERVICE_ADDR: %w", err)
	}
	return nil
}

// openRedis opens the client of Redis, where tokens and the limits'
// counters are kept, behind a breaker: commands fail at once while Redis
// is unreachable, which the health probe decides.
func (s *Service) openRedis(metrics *telemetry.Metrics) (*breaker.Breaker, error) {
	guard := breaker.Defaults(s.cfg.Redis.ReadTimeout)
	guard.Unreachable = redisconn.Unreachable
	storeBreaker := breaker.New(guard)
	var err error
	if s.redis, err = redisconn.Open(s.cfg.Redis, metrics, redisconn.WithBreaker(storeBreaker)); err != nil {
		return nil, err
	}
	s.store = redisstore.New(s.redis)
	return storeBreaker, nil
}

// newApp builds the application: tokens in Redis, the policy's limits
// counted there too (the store runs a login's limits with its save), the
// workspace service for access checks, audit records and launches, and
// the cache bus for the key pairs ForgetKeyPairAccess names.
func (s *Service) newApp() *app.App {
	guard := ratelimit.NewGuard(s.redis, s.cfg.Limits, s.logger)
	workspaces := workspaceclient.New(s.workspace, s.cfg.CallTimeout)
	return app.New(s.store.WithLoginLimits(guard), workspaces, app.Settings{
		ServiceAuthorization: basicauth.Header(s.cfg.ServiceAppKey, s.cfg.ServiceAppSecret),
		AccessCacheTTL:       s.cfg.AccessCacheTTL,
		AccessCacheSize:      s.cfg.AccessCacheSize,
	}, app.WithLimits(guard), app.WithLaunches(workspaces), app.WithLTI13Launches(workspaces),
		app.WithChangePublisher(changebus.NewPublisher(s.redis)))
}

// serve builds the gRPC server: metrics, errors and the trusted proxies
// (who may name the client's address) around the application's port.
func (s *Service) serve(application *app.App, metrics *telemetry.Metrics) {
	s.grpc = grpc.NewServer(append(append(telemetry.GRPCServerOptions(), grpcmw.ServerTransportOptions(s.cfg.GRPCServer)...), grpc.ChainUnaryInterceptor(
		metrics.UnaryServerInterceptor(),
		grpcmw.ErrorInterceptor(s.logger, s.cfg.CallTimeout),
		s.cfg.Limits.Proxies.UnaryServerInterceptor(),
	))...)
	authv1.RegisterAuthServiceServer(s.grpc, grpcport.NewServer(application))
	s.health = health.NewServer()
	healthpb.RegisterHealthServer(s.grpc, s.health)
	reflection.Register(s.grpc)
}

// closeConnections closes what a failed start opened.
func (s *Service) closeConnections() {
	if s.workspace != nil {
		_ = s.workspace.Close()
	}
	if s.lis != nil {
		_ = s.lis.Close()
	}
	if s.redis != nil {
		_ = s.redis.Close()
	}
}

// Done receives the serve loop's error if it stops on its own.
func (s *Service) Done() <-chan error { return s.served }

// Close reports NOT_SERVING, lets in-flight calls finish within the
// shutdown timeout, then stops and closes its connections.
func (s *Service) Close() error {
	s.stop()
	<-s.probed
	grpcmw.StopGracefully(s.grpc, s.health, s.cfg.ShutdownTimeout)
	s.stopListening()
	<-s.listened
	_ = s.workspace.Close()
	_ = s.metrics.Close(context.Background())
	return s.redis.Close()
}
