package grpcmw_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/liveproctor/workspaces/pkg/breaker"
	"github.com/liveproctor/workspaces/pkg/grpcmw"
)

// TestProbeHealthFollowsTheDependency drives the probe one check at a time:
// each check announces itself and takes its answer from the test, so when the
// probe asks again it has already published the status of the last answer.
func TestProbeHealthFollowsTheDependency(t *testing.T) {
	hs := health.NewServer()
	asked, answers := make(chan struct{}), make(chan error)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		b := breaker.New(breaker.Settings{Interval: time.Millisecond, RetryInterval: time.Millisecond, ProbeTimeout: time.Minute, SuspectAfter: time.Hour})
		grpcmw.ProbeHealth(ctx, hs, []string{"svc.v1.Svc"}, b,
			func(c context.Context) error {
				select {
				case asked <- struct{}{}:
				case <-c.Done():
					return c.Err()
				}
				select {
				case err := <-answers:
					return err
				case <-c.Done():
					return c.Err()
				}
			}, slog.New(slog.DiscardHandler), "store")
	}()
	waitAsked := func() {
		t.Helper()
		select {
		case <-asked:
		case <-time.After(10 * time.Second):
			t.Fatal("the probe stopped asking")
		}
	}
	status := func(want healthpb.HealthCheckResponse_ServingStatus) {
		t.Helper()
		for _, svc := range []string{"", "svc.v1.Svc"} {
			got, err := hs.Check(context.Background(), &healthpb.HealthCheckRequest{Service: svc})
			if err != nil || got.GetStatus() != want {
				t.Fatalf("service %q: status %v, %v; want %v", svc, got.GetStatus(), err, want)
			}
		}
	}

	waitAsked()
	answers <- nil
	waitAsked()
	status(healthpb.HealthCheckResponse_SERVING)
	answers <- errors.New("store down")
	waitAsked()
	status(healthpb.HealthCheckResponse_NOT_SERVING)
	answers <- nil
	waitAsked()
	status(healthpb.HealthCheckResponse_SERVING)
	cancel()
	<-done
}
