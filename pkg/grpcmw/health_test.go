package grpcmw_test

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/liveproctor/workspaces/pkg/grpcmw"
)

func TestProbeHealthFollowsTheDependency(t *testing.T) {
	hs := health.NewServer()
	var down atomic.Bool
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		grpcmw.ProbeHealth(ctx, hs, []string{"svc.v1.Svc"}, 10*time.Millisecond, time.Second,
			func(context.Context) error {
				if down.Load() {
					return errors.New("store down")
				}
				return nil
			}, slog.New(slog.DiscardHandler), "store")
	}()
	wait := func(want healthpb.HealthCheckResponse_ServingStatus) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			got, err := hs.Check(context.Background(), &healthpb.HealthCheckRequest{Service: "svc.v1.Svc"})
			if err == nil && got.GetStatus() == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("status %v, %v; want %v", got.GetStatus(), err, want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	wait(healthpb.HealthCheckResponse_SERVING)
	down.Store(true)
	wait(healthpb.HealthCheckResponse_NOT_SERVING)
	down.Store(false)
	wait(healthpb.HealthCheckResponse_SERVING)
	cancel()
	<-done
}
