package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/liveproctor/workspaces/pkg/basicauth"
	authv1 "github.com/liveproctor/workspaces/pkg/gen/auth/v1"
	"github.com/liveproctor/workspaces/pkg/testenv"
)

// With MongoDB unreachable the API answers 503 with Retry-After within the
// request deadline, and recovers by itself once the store is back. The
// test stops the store, so it runs on a stack of its own.
func TestStoreDownIs503ThenRecovers(t *testing.T) {
	s := startOwnStack(t)
	root := asRoot(t).on(s)
	id := unique(t, "d")
	root.create(id, nil)
	if err := s.FerretDB.Stop(); err != nil {
		t.Fatal(err)
	}

	// A credential the service has not seen needs the store; so does a read.
	for _, path := range []string{"/api/workspace/" + id, "/api/workspaces"} {
		r := root.get(path)
		r.wantError(http.StatusServiceUnavailable, "UNAVAILABLE", "")
		if s, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || s < 1 {
			t.Fatalf("%s: Retry-After = %q", path, r.header.Get("Retry-After"))
		}
	}

	if err := s.FerretDB.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		if r := root.get("/api/workspace/" + id); r.status != http.StatusOK {
			return fmt.Errorf("%d %s", r.status, r.body)
		}
		return nil
	}, "the API answers once the store is back")
}

// A Redis that refuses writes (full under noeviction, as the deployment
// asks: "OOM command not allowed") is an outage of what needs a write:
// SDK logins, with access remembered or not, and LTI launches (their
// nonce) answer 503 with Retry-After, never 500; tokens already issued
// still check, and logins work again once Redis has room. The test fills
// the stack's Redis, so it runs on a stack of its own.
func TestFullRedisIs503ThenRecovers(t *testing.T) {
	const exam = "7c9e6679-7425-40de-944b-e07fc1f90ae7"
	s := startOwnStack(t)
	root := asRoot(t).on(s)
	d := root.create(unique(t, "d"), nil)
	token := root.login("ada@example.com", d.WorkspaceID).Auth // access remembered from here on
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := testenv.SetRedisFull(ctx, s.Redis.Addr(), true); err != nil {
		t.Fatal(err)
	}
	fresh := root.create(unique(t, "f"), nil) // MongoDB's: no Redis write

	wantUnavailable := func(what string, status int, header http.Header, body string) {
		t.Helper()
		if status != http.StatusServiceUnavailable {
			t.Errorf("%s with Redis full: %d %s, want 503", what, status, body)
		}
		if secs, err := strconv.Atoi(header.Get("Retry-After")); err != nil || secs < 1 {
			t.Errorf("%s with Redis full: Retry-After = %q", what, header.Get("Retry-After"))
		}
	}
	for _, ws := range []string{d.WorkspaceID, fresh.WorkspaceID} {
		r := root.post("/api/login/sdk", map[string]any{"email": "bob@example.com", "workspaceId": ws})
		r.wantError(http.StatusServiceUnavailable, "UNAVAILABLE", "")
		wantUnavailable("a login to "+ws, r.status, r.header, string(r.body))
	}
	lti := d.AppKeys.LTI
	launchStatus, page, header := postLaunch(t, s.GatewayURL, signLaunch(t, lti.LaunchURL, lti.ConsumerKey, lti.SharedSecret, launchParams(exam)))
	wantUnavailable("an LTI launch", launchStatus, header, page)
	if strings.Contains(page, "data-auth") {
		t.Errorf("an LTI launch with Redis full opened a session:\n%s", page)
	}
	anonymous(t).on(s).do(http.MethodGet, "/api/sdk/session", nil, "Authorization", "Bearer "+token).
		wantStatus(http.StatusOK)

	// Internal callers over gRPC: UNAVAILABLE with a retry delay, for a
	// login and for a revocation.
	conn, err := grpc.NewClient(s.AuthAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	auth := authv1.NewAuthServiceClient(conn)
	asRootOverGRPC := metadata.AppendToOutgoingContext(ctx, "authorization", basicauth.Header(rootKey, rootSecret))
	_, loginErr := auth.CreateSdkToken(asRootOverGRPC, &authv1.CreateSdkTokenRequest{Email: "bob@example.com", WorkspaceId: d.WorkspaceID})
	_, revokeErr := auth.RevokeWorkspaceSdkTokens(asRootOverGRPC, &authv1.RevokeWorkspaceSdkTokensRequest{WorkspaceId: d.WorkspaceID})
	for what, err := range map[string]error{"CreateSdkToken": loginErr, "RevokeWorkspaceSdkTokens": revokeErr} {
		st := status.Convert(err)
		retry := false
		for _, detail := range st.Details() {
			if info, ok := detail.(*errdetails.RetryInfo); ok && info.GetRetryDelay().AsDuration() > 0 {
				retry = true
			}
		}
		if st.Code() != codes.Unavailable || !retry {
			t.Errorf("%s with Redis full: %v (details %v), want UNAVAILABLE with a retry delay", what, err, st.Details())
		}
	}

	if err := testenv.SetRedisFull(ctx, s.Redis.Addr(), false); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		r := root.post("/api/login/sdk", map[string]any{"email": "bob@example.com", "workspaceId": fresh.WorkspaceID})
		if r.status != http.StatusOK {
			return fmt.Errorf("%d %s", r.status, r.body)
		}
		return nil
	}, "a login once Redis has room")
}
