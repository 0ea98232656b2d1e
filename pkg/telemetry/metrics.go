package telemetry

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
)

// Metrics is one process's Prometheus registry with the figures every
// component keeps: gRPC calls served and made, HTTP requests (gateway),
// and the Go runtime and process.
type Metrics struct {
	Registry *prometheus.Registry

	grpcServer *prometheus.HistogramVec
	grpcClient *prometheus.HistogramVec
	http       *prometheus.HistogramVec
}

// latencyBuckets span a cached credential check to a request deadline.
var latencyBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}

// NewMetrics returns a registry with the runtime collectors registered.
func NewMetrics() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		grpcServer: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "grpc_server_handling_seconds",
			Help:    "gRPC calls served, by method and status code, and how long they took.",
			Buckets: latencyBuckets,
		}, []string{"grpc_method", "grpc_code"}),
		grpcClient: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "grpc_client_handling_seconds",
			Help:    "gRPC calls made to other services, by method and status code, and how long they took.",
			Buckets: latencyBuckets,
		}, []string{"grpc_method", "grpc_code"}),
		http: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "http_request_duration_seconds",
			Help:    "HTTP requests served, by method, route pattern and status, and how long they took.",
			Buckets: latencyBuckets,
		}, []string{"method", "route", "code"}),
	}
	m.Registry.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.grpcServer, m.grpcClient, m.http,
	)
	return m
}

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{Registry: m.Registry})
}

// GaugeFunc registers a gauge read when scraped, such as a pool's size.
func (m *Metrics) GaugeFunc(name, help string, read func() float64) {
	m.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, read))
}

// UnaryServerInterceptor times every call served.
func (m *Metrics) UnaryServerInterceptor() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		start := time.Now()
		resp, err := handler(ctx, req)
		m.grpcServer.WithLabelValues(info.FullMethod, status.Code(err).String()).Observe(time.Since(start).Seconds())
		return resp, err
	}
}

// UnaryClientInterceptor times every call made.
func (m *Metrics) UnaryClientInterceptor() grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		start := time.Now()
		err := invoker(ctx, method, req, reply, cc, opts...)
		m.grpcClient.WithLabelValues(method, status.Code(err).String()).Observe(time.Since(start).Seconds())
		return err
	}
}

// ObserveHTTP records one request. route is the matched pattern (never the
// raw path, which would make a series per workspace id).
func (m *Metrics) ObserveHTTP(method, route string, code int, took time.Duration) {
	m.http.WithLabelValues(methodLabel(method), route, strconv.Itoa(code)).Observe(took.Seconds())
}

// methodLabel is method when it is one of HTTP's standard methods, and
// "other" for any other: a client may send any token as a method, and each
// would otherwise be a series of its own.
func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return method
	}
	return "other"
}
