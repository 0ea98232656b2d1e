package mongostore

import (
	"context"
	"sync"
	"sync/atomic"

	"go.mongodb.org/mongo-driver/v2/event"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// CommandTracer returns a command monitor that makes a client span of every
// MongoDB command, a child of the span in the command's context (the gRPC
// call being served). Spans name the command and the database, and carry
// no values.
func CommandTracer() *event.CommandMonitor {
	tracer := otel.Tracer("github.com/liveproctor/workspaces/services/workspace/mongostore")
	var spans sync.Map // request id → trace.Span
	end := func(id int64, err string) {
		if s, ok := spans.LoadAndDelete(id); ok {
			span := s.(trace.Span)
			if err != "" {
				span.SetStatus(codes.Error, err)
			}
			span.End()
		}
	}
	return &event.CommandMonitor{
		Started: func(ctx context.Context, e *event.CommandStartedEvent) {
			_, span := tracer.Start(ctx, "mongodb."+e.CommandName, trace.WithSpanKind(trace.SpanKindClient),
				trace.WithAttributes(
					attribute.String("db.system", "mongodb"),
					attribute.String("db.name", e.DatabaseName),
					attribute.String("db.operation", e.CommandName),
				))
			spans.Store(e.RequestID, span)
		},
		Succeeded: func(_ context.Context, e *event.CommandSucceededEvent) { end(e.RequestID, "") },
		Failed:    func(_ context.Context, e *event.CommandFailedEvent) { end(e.RequestID, e.Failure.Error()) },
	}
}

// PoolStats counts the driver's connections, for the metrics endpoint.
type PoolStats struct {
	open, inUse atomic.Int64
}

// Monitor returns the pool monitor that keeps the counts.
func (p *PoolStats) Monitor() *event.PoolMonitor {
	return &event.PoolMonitor{Event: func(e *event.PoolEvent) {
		switch e.Type {
		case event.ConnectionCreated:
			p.open.Add(1)
		case event.ConnectionClosed:
			p.open.Add(-1)
		case event.ConnectionCheckedOut:
			p.inUse.Add(1)
		case event.ConnectionCheckedIn:
			p.inUse.Add(-1)
		}
	}}
}

// Open is the number of open connections to MongoDB.
func (p *PoolStats) Open() float64 { return float64(p.open.Load()) }

// InUse is the number of connections checked out by operations.
func (p *PoolStats) InUse() float64 { return float64(p.inUse.Load()) }
