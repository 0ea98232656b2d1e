// Package telemetry sets up what every binary reports about itself:
// OpenTelemetry traces (exported over OTLP when configured, off otherwise)
// and Prometheus metrics.
package telemetry

import (
	"context"
	"sync/atomic"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// exporting is true while StartTracing's exporting provider is installed.
// Like the provider, it is process-wide: the instrumentation in
// instrument.go asks it whether spans would go anywhere.
var exporting atomic.Bool

// TracingEnabled reports whether this process exports traces.
func TracingEnabled() bool { return exporting.Load() }

// StartTracing installs the W3C trace-context propagator, so traces cross
// this process whatever it exports, and, when export is set, a tracer
// provider exporting batches over OTLP/gRPC (configured by the standard
// OTEL_EXPORTER_OTLP_* variables: see Settings). The returned function
// flushes and stops it.
func StartTracing(ctx context.Context, service string, export bool) (func(context.Context) error, error) {
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	if !export {
		return func(context.Context) error { return nil }, nil
	}
	exporter, err := otlptracegrpc.New(ctx)
	if err != nil {
		return nil, err
	}
	res, err := resource.Merge(resource.Default(), resource.NewSchemaless(attribute.String("service.name", service)))
	if err != nil {
		return nil, err
	}
	provider := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exporter), sdktrace.WithResource(res))
	otel.SetTracerProvider(provider)
	exporting.Store(true)
	return func(ctx context.Context) error {
		exporting.Store(false)
		return provider.Shutdown(ctx)
	}, nil
}
