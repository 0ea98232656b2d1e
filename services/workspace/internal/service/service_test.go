package service_test

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/liveproctor/workspaces/pkg/basicauth"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/pkg/ratelimit"
	"github.com/liveproctor/workspaces/pkg/testenv"
	"github.com/liveproctor/workspaces/pkg/webhook"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/mongoconn/indexcheck"
	"github.com/liveproctor/workspaces/services/workspace/internal/app"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
	"github.com/liveproctor/workspaces/services/workspace/internal/service"
)

const (
	rootKey    = "6f1b7a52-3c1e-4a8e-9d2b-0c5f4e7a9b10"
	rootSecret = "0e9d8c7b-6a59-4837-a625-1403f2e1d0c9"
)

func config(t *testing.T, uri string) service.Config {
	t.Helper()
	return service.Config{
		GRPCAddr:      "127.0.0.1:0",
		MongoURI:      uri,
		MongoDatabase: "svc" + strings.ReplaceAll(strings.ToLower(t.Name()), "/", "_"),
		EncryptionKey: bytes.Repeat([]byte{7}, 32),
		HMACKey:       bytes.Repeat([]byte{9}, 32),
		Bootstrap: app.BootstrapConfig{
			WorkspaceID: "root", Name: "Root", Products: []string{"pub/math"},
			AppKey: rootKey, AppSecret: rootSecret,
		},
		LTIBaseURL:          "https://lti.example.test",
		CallTimeout:         5 * time.Second,
		StoreTimeout:        2 * time.Second,
		StartTimeout:        30 * time.Second,
		ShutdownTimeout:     5 * time.Second,
		CredentialCacheTTL:  time.Second,
		CredentialCacheSize: 100,
		LTIToolKeys:         ltidomain.DefaultToolKeyRotation,
		LTIToolKeyCheck:     time.Hour,
		LTIScores: service.LTIScoreSettings{
			Workers: 4, Lease: time.Minute, Poll: time.Second, GiveUpAfter: 168 * time.Hour, Retention: 720 * time.Hour,
			RetrySchedule: webhook.DefaultSchedule,
		},
	}
}

func startStore(t *testing.T) *testenv.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // the first build of FerretDB takes a while
	defer cancel()
	f, err := testenv.StartFerretDB(ctx, testenv.FerretDBOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Stop() })
	return f
}

func startService(t *testing.T, cfg service.Config, out io.Writer) (*service.Service, workspacev1.WorkspaceServiceClient, *grpc.ClientConn) {
	t.Helper()
	svc, err := service.Start(context.Background(), cfg, slog.New(slog.DiscardHandler), out)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Close() })
	conn, err := grpc.NewClient(svc.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return svc, workspacev1.NewWorkspaceServiceClient(conn), conn
}

func as(appKey, appSecret string) context.Context {
	return metadata.AppendToOutgoingContext(context.Background(), "authorization", basicauth.Header(appKey, appSecret))
}

func wantCode(t *testing.T, err error, want codes.Code) {
	t.Helper()
	if got := status.Code(err); got != want {
		t.Fatalf("error = %v, want code %v", err, want)
	}
}

// Internal callers use the gRPC service directly, with the same key pairs
// and the same rules as REST callers.
func TestGRPCCallersUseKeyPairs(t *testing.T) {
	f := startStore(t)
	_, client, conn := startService(t, config(t, f.URI()), io.Discard)
	root := as(rootKey, rootSecret)

	_, err := client.ListWorkspaces(context.Background(), &workspacev1.ListWorkspacesRequest{})
	wantCode(t, err, codes.Unauthenticated)
	_, err = client.ListWorkspaces(as(rootKey, "wrong"), &workspacev1.ListWorkspacesRequest{})
	wantCode(t, err, codes.Unauthenticated)

	created, err := client.CreateWorkspace(root, &workspacev1.CreateWorkspaceRequest{
		Id: "district-1", Name: "District One", Type: "DISTRICT",
		Products: []*workspacev1.Product{{Bank: &workspacev1.Bank{Id: "pub/math"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(created.GetRegistrationCodes()) == 0 || created.GetAppKeys().GetServer().GetConsumerKey() == "" {
		t.Fatalf("create result lacks codes or keys: %v", created)
	}

	var header metadata.MD
	got, err := client.GetWorkspace(root, &workspacev1.GetWorkspaceRequest{Id: "district-1"}, grpc.Header(&header))
	if err != nil {
		t.Fatal(err)
	}
	if got.GetName() != "District One" || got.GetTypename() != "Workspace" || got.GetParentWorkspaceId() != nil {
		t.Fatalf("GetWorkspace = %v", got)
	}
	if etag := header.Get("etag"); len(etag) != 1 || etag[0] != got.GetEtag() {
		t.Fatalf("etag header %v, body etag %q", etag, got.GetEtag())
	}

	server := as(created.GetAppKeys().GetServer().GetConsumerKey(), created.GetAppKeys().GetServer().GetSharedSecret())
	_, err = client.DeleteWorkspace(server, &workspacev1.DeleteWorkspaceRequest{Id: "district-1"})
	wantCode(t, err, codes.PermissionDenied)
	_, err = client.GetWorkspace(server, &workspacev1.GetWorkspaceRequest{Id: "root"})
	wantCode(t, err, codes.NotFound)

	lti := created.GetAppKeys().GetLti()
	ltiCtx := as(lti.GetConsumerKey(), lti.GetSharedSecret())
	_, err = client.GetWorkspace(ltiCtx, &workspacev1.GetWorkspaceRequest{Id: "district-1"})
	wantCode(t, err, codes.PermissionDenied)
	who, err := client.Authenticate(ltiCtx, &workspacev1.AuthenticateRequest{})
	if err != nil || who.GetWorkspaceId() != "district-1" {
		t.Fatalf("Authenticate with the LTI pair = %v, %v", who, err)
	}

	health, err := healthpb.NewHealthClient(conn).Check(context.Background(), &healthpb.HealthCheckRequest{})
	if err != nil || health.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("health = %v, %v", health, err)
	}
}

func TestMetricsCountCallsAndPool(t *testing.T) {
	f := startStore(t)
	cfg := config(t, f.URI())
	cfg.MetricsAddr = "127.0.0.1:0"
	svc, client, _ := startService(t, cfg, io.Discard)
	if _, err := client.GetWorkspace(as(rootKey, rootSecret), &workspacev1.GetWorkspaceRequest{Id: "root"}); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get("http://" + svc.MetricsAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	for _, want := range []string{
		`grpc_server_handling_seconds_count{grpc_code="OK",grpc_method="/workspace.v1.WorkspaceService/GetWorkspace"} 1`,
		"mongodb_pool_open_connections",
		"go_goroutines",
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// A generated root key pair is printed on the first start only, and a
// restart never makes a second root workspace.
func TestBootstrapGeneratesOnceAndRestartsIdempotently(t *testing.T) {
	f := startStore(t)
	cfg := config(t, f.URI())
	cfg.Bootstrap.AppKey, cfg.Bootstrap.AppSecret = "", ""

	var first bytes.Buffer
	svc, _, _ := startService(t, cfg, &first)
	appKey, appSecret := fieldAfter(first.String(), "appKey:"), fieldAfter(first.String(), "appSecret:")
	if appKey == "" || appSecret == "" {
		t.Fatalf("first start printed no key pair:\n%s", first.String())
	}
	if err := svc.Close(); err != nil {
		t.Fatal(err)
	}

	var second bytes.Buffer
	_, client, _ := startService(t, cfg, &second)
	if strings.Contains(second.String(), "appSecret") {
		t.Fatalf("second start printed a key pair again:\n%s", second.String())
	}
	list, err := client.ListWorkspaces(as(appKey, appSecret), &workspacev1.ListWorkspacesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(list.GetWorkspaces()); n != 1 || list.GetWorkspaces()[0].GetId() != "root" {
		t.Fatalf("after restart the root sees %d workspaces: %v", n, list.GetWorkspaces())
	}
}

func fieldAfter(text, label string) string {
	_, rest, ok := strings.Cut(text, label)
	if !ok {
		return ""
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return ""
	}
	return fields[0]
}

// Internal callers are limited like REST callers: RESOURCE_EXHAUSTED with
// RetryInfo and the rate-limit fields as header metadata; failed key pairs
// from one address block it.
func TestGRPCCallersAreLimited(t *testing.T) {
	f := startStore(t)
	cfg := config(t, f.URI())
	cfg.Limits = ratelimit.Settings{
		Default:  ratelimit.Limit{Rate: 1, Burst: 2},
		Failures: ratelimit.FailureLimits{PerKey: 2, PerAddress: 100, Window: time.Minute},
	}
	_, client, _ := startService(t, cfg, io.Discard)
	root := as(rootKey, rootSecret)

	var header metadata.MD
	var err error
	for range 2 {
		if _, err = client.GetWorkspace(root, &workspacev1.GetWorkspaceRequest{Id: "root"}, grpc.Header(&header)); err != nil {
			t.Fatal(err)
		}
	}
	if p := header.Get("ratelimit-policy"); len(p) != 1 || p[0] != `"keypair";q=2;w=2` {
		t.Fatalf("ratelimit-policy %v", p)
	}
	_, err = client.GetWorkspace(root, &workspacev1.GetWorkspaceRequest{Id: "root"}, grpc.Header(&header))
	wantCode(t, err, codes.ResourceExhausted)
	if d := retryDelay(status.Convert(err)); d < time.Second {
		t.Fatalf("RetryInfo delay %v", d)
	}
	if r := header.Get("ratelimit"); len(r) != 1 || !strings.HasPrefix(r[0], `"keypair";r=0;t=`) {
		t.Fatalf("ratelimit %v", r)
	}

	for range 2 {
		_, err = client.Authenticate(as("guessed-key", "wrong"), &workspacev1.AuthenticateRequest{})
		wantCode(t, err, codes.Unauthenticated)
	}
	_, err = client.Authenticate(as("guessed-key", "wrong"), &workspacev1.AuthenticateRequest{})
	wantCode(t, err, codes.ResourceExhausted)
}

func retryDelay(st *status.Status) time.Duration {
	for _, d := range st.Details() {
		if ri, ok := d.(*errdetails.RetryInfo); ok {
			return ri.GetRetryDelay().AsDuration()
		}
	}
	return 0
}

// A start readies the webhooks' delivery state beside the workspace
// store: its collections' indexes, the attempts' TTL of
// WEBHOOK_ATTEMPT_RETENTION.
func TestStartPreparesTheWebhookDeliveries(t *testing.T) {
	f := startStore(t)
	cfg := config(t, f.URI())
	cfg.Webhooks.AttemptRetention = 48 * time.Hour
	startService(t, cfg, io.Discard)
	c, err := mongo.Connect(options.Client().ApplyURI(f.URI()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Disconnect(context.Background())
	db := c.Database(cfg.MongoDatabase)
	for collection, want := range map[string][]string{
		"webhook_cursors":  {"_id_", "due", "endpoint", "wake"},
		"webhook_attempts": {"_id_", "endpoint_attempts", "expiry"},
	} {
		names, err := db.Collection(collection).Indexes().ListSpecifications(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, n := range names {
			got = append(got, n.Name)
		}
		if slices.Sort(got); !slices.Equal(got, want) {
			t.Errorf("%s indexes %v, want %v", collection, got, want)
		}
	}
	indexcheck.WantTTL(t, db.Collection("webhook_attempts"), "expiry", 48*60*60)
}

// A start keeps the LTI scores, their idle queues and the line items found
// for LTI_SCORE_RETENTION: their TTL indexes'.
func TestStartPreparesTheScoreStore(t *testing.T) {
	f := startStore(t)
	cfg := config(t, f.URI())
	cfg.LTIScores.Retention = 200 * time.Hour
	startService(t, cfg, io.Discard)
	c, err := mongo.Connect(options.Client().ApplyURI(f.URI()))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Disconnect(context.Background())
	db := c.Database(cfg.MongoDatabase)
	for _, collection := range []string{"lti_scores", "lti_score_queues", "lti_line_items"} {
		indexcheck.WantTTL(t, db.Collection(collection), "expiry", 200*60*60)
	}
}
