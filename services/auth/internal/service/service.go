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
	"github.com/liveproctor/workspaces/pkg/clientaddr"
	authv1 "github.com/liveproctor/workspaces/pkg/gen/auth/v1"
	"github.com/liveproctor/workspaces/pkg/grpcmw"
	"github.com/liveproctor/workspaces/pkg/ratelimit"
	"github.com/liveproctor/workspaces/pkg/redisconn"
	"github.com/liveproctor/workspaces/pkg/telemetry"
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
	metrics   *telemetry.MetricsServer
}

// Start connects to Redis and the workspace service (neither needs to be up
// yet: calls fail with Unavailable until they are) and serves gRPC.
func Start(cfg Config, logger *slog.Logger) (*Service, error) {
	s := &Service{cfg: cfg, logger: logger, served: make(chan error, 1), probed: make(chan struct{})}
	metrics := telemetry.NewMetrics()
	var err error
	s.workspace, err = grpc.NewClient(cfg.WorkspaceServiceAddr, append(append(telemetry.GRPCDialOptions(), grpcmw.DialTransportOptions()...),
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		// The workspace service counts failed key pairs per client
		// address: it gets the address of the call being served.
		grpc.WithChainUnaryInterceptor(metrics.UnaryClientInterceptor(), clientaddr.UnaryClientInterceptor()))...)
	if err != nil {
		return nil, fmt.Errorf("WORKSPACE_SERVICE_ADDR: %w", err)
	}
	s.lis, err = net.Listen("tcp", cfg.GRPCAddr)
	if err != nil {
		_ = s.workspace.Close()
		return nil, fmt.Errorf("AUTH_GRPC_ADDR: %w", err)
	}
	// Commands fail at once while Redis is unreachable; the health probe
	// below decides when that is.
	guard := breaker.Defaults(cfg.Redis.ReadTimeout)
	guard.Unreachable = redisconn.Unreachable
	storeBreaker := breaker.New(guard)
	if s.redis, err = redisconn.Open(cfg.Redis, metrics, redisconn.WithBreaker(storeBreaker)); err != nil {
		_ = s.workspace.Close()
		_ = s.lis.Close()
		return nil, err
	}
	s.store = redisstore.New(s.redis)
	if s.metrics, err = telemetry.ServeMetrics(cfg.MetricsAddr, metrics, logger); err != nil {
		_ = s.workspace.Close()
		_ = s.lis.Close()
		return nil, fmt.Errorf("METRICS_ADDR: %w", err)
	}

	limits := ratelimit.NewGuard(s.redis, cfg.Limits, logger)
	workspaces := workspaceclient.New(s.workspace, cfg.CallTimeout)
	application := app.New(s.store, workspaces, app.Settings{
		ServiceAuthorization: basicauth.Header(cfg.ServiceAppKey, cfg.ServiceAppSecret),
		AccessCacheTTL:       cfg.AccessCacheTTL,
		AccessCacheSize:      cfg.AccessCacheSize,
	}, app.WithLimits(limits), app.WithLaunches(workspaces))
	s.grpc = grpc.NewServer(append(append(telemetry.GRPCServerOptions(), grpcmw.ServerTransportOptions()...), grpc.ChainUnaryInterceptor(
		metrics.UnaryServerInterceptor(),
		grpcmw.ErrorInterceptor(logger, cfg.CallTimeout),
		cfg.Limits.Proxies.UnaryServerInterceptor(),
		grpcport.LimitInterceptor(limits),
	))...)
	authv1.RegisterAuthServiceServer(s.grpc, grpcport.NewServer(application))
	s.health = health.NewServer()
	healthpb.RegisterHealthServer(s.grpc, s.health)
	reflection.Register(s.grpc)

	probeCtx, stop := context.WithCancel(context.Background())
	s.stop = stop
	go func() {
		defer close(s.probed)
		grpcmw.ProbeHealth(probeCtx, s.health, []string{authv1.AuthService_ServiceDesc.ServiceName}, storeBreaker, s.store.Ping, s.logger, "token store")
	}()
	go func() { s.served <- s.grpc.Serve(s.lis) }()
	logger.Info("auth service serving", "addr", s.lis.Addr().String(), "redis", cfg.Redis.Addrs)
	return s, nil
}

// Done receives the serve loop's error if it stops on its own.
func (s *Service) Done() <-chan error { return s.served }

// Close reports NOT_SERVING, lets in-flight calls finish within the
// shutdown timeout, then stops and closes its connections.
func (s *Service) Close() error {
	s.stop()
	<-s.probed
	grpcmw.StopGracefully(s.grpc, s.health, s.cfg.ShutdownTimeout)
	_ = s.workspace.Close()
	_ = s.metrics.Close(context.Background())
	return s.redis.Close()
}
