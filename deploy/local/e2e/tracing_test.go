package e2e

import (
	"context"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	collectorv1 "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"

	"github.com/liveproctor/workspaces/pkg/testenv"
)

// collector is an OTLP trace receiver: it keeps every span it is sent.
type collector struct {
	collectorv1.UnimplementedTraceServiceServer
	mu    sync.Mutex
	spans []span
}

type span struct {
	service, name, traceID string
}

func (c *collector) Export(_ context.Context, req *collectorv1.ExportTraceServiceRequest) (*collectorv1.ExportTraceServiceResponse, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		service := ""
		for _, a := range rs.GetResource().GetAttributes() {
			if a.GetKey() == "service.name" {
				service = a.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				c.spans = append(c.spans, span{service: service, name: s.GetName(), traceID: hex.EncodeToString(s.GetTraceId())})
			}
		}
	}
	return &collectorv1.ExportTraceServiceResponse{}, nil
}

// trace returns the spans of one trace.
func (c *collector) trace(id string) []span {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []span
	for _, s := range c.spans {
		if s.traceID == id {
			out = append(out, s)
		}
	}
	return out
}

// One login is one trace: from the gateway through the auth service to the
// workspace service, Redis and MongoDB, exported over OTLP.
func TestALoginIsOneTraceAcrossEveryComponent(t *testing.T) {
	col := &collector{}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	collectorv1.RegisterTraceServiceServer(srv, col)
	go srv.Serve(lis)
	defer srv.Stop()

	s := startOwnStack(t,
		"OTEL_EXPORTER_OTLP_ENDPOINT=http://"+lis.Addr().String(),
		"OTEL_EXPORTER_OTLP_INSECURE=true",
		"OTEL_BSP_SCHEDULE_DELAY=100",
	)
	traceID := "4bf92f3577b34da6a3ce929d0e0e4736"
	req, _ := http.NewRequest(http.MethodPost, s.GatewayURL+"/api/login/sdk",
		strings.NewReader(`{"email":"ada@example.com","workspaceId":"root"}`))
	req.SetBasicAuth(rootKey, rootSecret)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("login: %s", resp.Status)
	}

	want := func(spans []span) []string {
		var missing []string
		has := func(service, namePart string) bool {
			return slices.ContainsFunc(spans, func(s span) bool { return s.service == service && strings.Contains(s.name, namePart) })
		}
		for _, w := range [][2]string{
			{"gateway", "POST"},
			{"gateway", "auth.v1.AuthService/CreateSdkToken"},
			{"auth", "auth.v1.AuthService/CreateSdkToken"},
			{"auth", "workspace.v1.WorkspaceService/GetWorkspaceStatus"},
			{"auth", "evalsha"},
			{"workspace", "workspace.v1.WorkspaceService/GetWorkspaceStatus"},
			{"workspace", "mongodb.find"},
		} {
			if !has(w[0], w[1]) {
				missing = append(missing, w[0]+": "+w[1])
			}
		}
		return missing
	}
	testenv.Eventually(t, 20*time.Second, func() error {
		spans := col.trace(traceID)
		if missing := want(spans); len(missing) > 0 {
			return fmt.Errorf("it lacks %v; it has %v", missing, spans)
		}
		return nil
	}, "the login's trace reaches the collector whole")
}
