package breaker_test

import (
	"context"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/breaker"
)

// benchSettings keep the breaker closed and quiet for the benchmarks' run.
var benchSettings = breaker.Settings{Interval: time.Hour, RetryInterval: time.Hour, ProbeTimeout: time.Second, SuspectAfter: time.Hour}

// BenchmarkDo measures what Do costs around a call that does nothing, from
// every goroutine at once.
func BenchmarkDo(b *testing.B) {
	br := breaker.New(benchSettings)
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := br.Do(ctx, ok); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// benchKey is a context key for requestContext.
type benchKey int

// requestContext is shaped like a served request's: values stacked on a
// context with a deadline.
func requestContext() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	for k := range benchKey(8) {
		ctx = context.WithValue(ctx, k, k)
	}
	return ctx, cancel
}

// BenchmarkDoRequestContext is BenchmarkDo with a request's context.
func BenchmarkDoRequestContext(b *testing.B) {
	br := breaker.New(benchSettings)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx, cancel := requestContext()
		defer cancel()
		for pb.Next() {
			if err := br.Do(ctx, ok); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
