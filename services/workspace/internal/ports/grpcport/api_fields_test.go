package grpcport

import (
	"bytes"
	"context"
	"testing"

	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/liveproctor/workspaces/pkg/fault"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/memstore"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/secretbox"
	"github.com/liveproctor/workspaces/services/workspace/internal/app"
	"github.com/liveproctor/workspaces/services/workspace/internal/ports/grpccall"
)

// rootServer is a server over an application in memory whose root
// workspace holds the product pub/math, and a context calling as the root
// (without the LTI, webhook and portal ports, whose methods these tests do
// not call).
func rootServer(t *testing.T) (context.Context, *Server) {
	t.Helper()
	box, err := secretbox.New(bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32))
	if err != nil {
		t.Fatal(err)
	}
	a := app.New(memstore.New(), box, app.Settings{})
	ctx := context.Background()
	const key, secret = "00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002"
	if _, err := a.Bootstrap(ctx, app.BootstrapConfig{WorkspaceID: "root", Name: "Root", Products: []string{"pub/math"}, AppKey: key, AppSecret: secret}); err != nil {
		t.Fatal(err)
	}
	root, err := a.Authenticate(ctx, key, secret)
	if err != nil {
		t.Fatal(err)
	}
	return grpccall.WithCaller(ctx, root), NewServer(a, nil, nil, nil)
}

// Errors the application makes name fields the same way.
func TestAnswersNameAPIPaths(t *testing.T) {
	ctx, s := rootServer(t)
	for _, id := range []string{"a", "b"} {
		req := &workspacev1.CreateWorkspaceRequest{Id: id, Name: id, Type: "CAMPUS"}
		if id == "b" {
			req.ParentWorkspaceId = wrapperspb.String("a")
		}
		if _, err := s.CreateWorkspace(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	_, notHeld := s.CreateWorkspace(ctx, &workspacev1.CreateWorkspaceRequest{Id: "c", Name: "C", Type: "CAMPUS",
		Products: []*workspacev1.Product{{Bank: &workspacev1.Bank{Id: "pub/math"}}, {Bank: &workspacev1.Bank{Id: "pub/art"}}}})
	_, unknownParent := s.CreateWorkspace(ctx, &workspacev1.CreateWorkspaceRequest{Id: "c", Name: "C", Type: "CAMPUS",
		ParentWorkspaceId: wrapperspb.String("nope")})
	_, cycle := s.UpdateWorkspace(ctx, &workspacev1.UpdateWorkspaceRequest{Id: "a", ParentWorkspaceId: wrapperspb.String("b")})
	_, self := s.UpdateWorkspace(ctx, &workspacev1.UpdateWorkspaceRequest{Id: "a", ParentWorkspaceId: wrapperspb.String("a")})
	tests := []struct {
		err     error
		kind    fault.Kind
		message string
	}{
		{notHeld, fault.PermissionDenied, `products[1].bank.id: your workspace does not hold product "pub/art", so it cannot share it`},
		{unknownParent, fault.NotFound, `parentWorkspaceId: workspace "nope" not found`},
		{cycle, fault.Invalid, "parentWorkspaceId: would make a cycle: the workspace is an ancestor of that parent"},
		{self, fault.Invalid, "parentWorkspaceId: a workspace cannot be its own parent"},
	}
	for _, tt := range tests {
		if e, ok := fault.As(tt.err); !ok || e.Kind != tt.kind || e.Message != tt.message {
			t.Errorf("answer %v, want %v %q", tt.err, tt.kind, tt.message)
		}
	}
	if e, _ := fault.As(cycle); len(e.Fields) != 1 || e.Fields[0].Field != "parentWorkspaceId" {
		t.Errorf("cycle names %+v", e.Fields)
	}
}
