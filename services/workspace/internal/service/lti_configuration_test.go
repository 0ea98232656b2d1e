package service_test

import (
	"context"
	"io"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/pkg/ratelimit"
)

// An LMS reads the configuration without credentials; credentials sent
// anyway are not looked at, so wrong ones count as no failed
// authentication.
func TestLTIConfigurationIsPublicAndCountsNothing(t *testing.T) {
	f := startStore(t)
	cfg := config(t, f.URI())
	cfg.Limits = ratelimit.Settings{
		Failures: ratelimit.FailureLimits{PerKey: 1, PerAddress: 1, Window: time.Minute},
	}
	_, client, _ := startService(t, cfg, io.Discard)
	created, err := client.CreateWorkspace(as(rootKey, rootSecret), &workspacev1.CreateWorkspaceRequest{
		Id: "district-1", Name: "District One", Type: "DISTRICT",
	})
	if err != nil {
		t.Fatal(err)
	}

	for _, ctx := range []context.Context{context.Background(), as(rootKey, "wrong"), as(rootKey, "wrong"), as(rootKey, "wrong")} {
		got, err := client.GetLtiConfiguration(ctx, &workspacev1.GetLtiConfigurationRequest{WorkspaceId: "district-1"})
		if err != nil {
			t.Fatal(err)
		}
		if got.GetLaunchUrl() != created.GetAppKeys().GetLti().GetLaunchUrl() || got.GetDomain() != "lti.example.test" ||
			got.GetTitle() != "LiveProctor (District One)" || got.GetWorkspaceId() != "district-1" {
			t.Fatalf("GetLtiConfiguration = %v", got)
		}
	}
	_, err = client.GetLtiConfiguration(context.Background(), &workspacev1.GetLtiConfigurationRequest{WorkspaceId: "unknown"})
	wantCode(t, err, codes.NotFound)

	// One failure would have blocked the address.
	if _, err := client.GetWorkspace(as(rootKey, rootSecret), &workspacev1.GetWorkspaceRequest{Id: "district-1"}); err != nil {
		t.Fatalf("after the public calls: %v", err)
	}
}
