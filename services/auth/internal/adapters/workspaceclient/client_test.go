package workspaceclient_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/liveproctor/workspaces/pkg/fault"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/pkg/grpcfault"
	"github.com/liveproctor/workspaces/services/auth/internal/adapters/workspaceclient"
)

// conn answers GetWorkspaceStatus as the workspace service (or the gRPC
// library on its behalf) would: with err, or with answer; with hang set it
// answers only when the call's deadline passes.
type conn struct {
	err    error
	answer *workspacev1.WorkspaceStatus
	hang   bool
	sent   metadata.MD
}

func (c *conn) Invoke(ctx context.Context, _ string, _, reply any, _ ...grpc.CallOption) error {
	c.sent, _ = metadata.FromOutgoingContext(ctx)
	if c.hang {
		<-ctx.Done()
		return status.FromContextError(ctx.Err()).Err()
	}
	if c.err != nil {
		return c.err
	}
	proto.Merge(reply.(proto.Message), c.answer)
	return nil
}

func (c *conn) NewStream(context.Context, *grpc.StreamDesc, string, ...grpc.CallOption) (grpc.ClientStream, error) {
	return nil, errors.New("no streams here")
}

const (
	unavailable = "the workspace service is unavailable; retry shortly"
	internal    = "internal error"
)

var invalidID = fault.InvalidField("id", "must be an identifier")

// The workspace service's answers about credentials and visibility reach
// the caller as they are; transport failures, deadlines and internal
// errors become a fixed message that tells nothing of their cause.
func TestStatusErrors(t *testing.T) {
	cases := []struct {
		name        string
		conn        *conn
		kind        fault.Kind
		message     string
		leaksNoText string
	}{
		{"bad credentials", &conn{err: grpcfault.Status(fault.New(fault.Unauthenticated, "wrong app secret"))},
			fault.Unauthenticated, "wrong app secret", ""},
		{"no API access", &conn{err: grpcfault.Status(fault.New(fault.PermissionDenied, "the key pair has no REST access"))},
			fault.PermissionDenied, "the key pair has no REST access", ""},
		{"hidden or missing workspace", &conn{err: grpcfault.Status(fault.New(fault.NotFound, `workspace "w1" not found`))},
			fault.NotFound, `workspace "w1" not found`, ""},
		{"invalid id", &conn{err: grpcfault.Status(invalidID)},
			fault.Invalid, invalidID.Message, ""},
		{"store down behind the service", &conn{err: grpcfault.Status(fault.New(fault.Unavailable, "the workspace store is unavailable"))},
			fault.Unavailable, unavailable, ""},
		{"connection refused", &conn{err: status.Error(codes.Unavailable, "connection error: dial tcp 10.1.2.3:9090: connect: connection refused")},
			fault.Unavailable, unavailable, "10.1.2.3"},
		{"deadline answered", &conn{err: status.Error(codes.DeadlineExceeded, "context deadline exceeded")},
			fault.Unavailable, unavailable, ""},
		{"call past the client's timeout", &conn{hang: true},
			fault.Unavailable, unavailable, ""},
		{"internal error", &conn{err: grpcfault.Status(errors.New("mongo: server selection error"))},
			fault.Internal, internal, ""},
		{"foreign failure", &conn{err: status.Error(codes.Unknown, "panic: runtime error at handler.go:42")},
			fault.Internal, internal, "handler.go"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			client := workspaceclient.New(c.conn, 50*time.Millisecond)
			_, err := client.Status(context.Background(), "Basic a2V5OnNlY3JldA==", "w1")
			e, ok := fault.As(err)
			if !ok || e.Kind != c.kind {
				t.Fatalf("error %v, want kind %v", err, c.kind)
			}
			if e.Message != c.message {
				t.Errorf("message %q, want %q", e.Message, c.message)
			}
			if c.leaksNoText != "" && strings.Contains(e.Message, c.leaksNoText) {
				t.Errorf("message %q shows the cause", e.Message)
			}
		})
	}
}

func TestStatusAnswers(t *testing.T) {
	c := &conn{answer: &workspacev1.WorkspaceStatus{Id: "w1", Active: true, TokenCutoffTime: "2026-11-22T07:46:00.000Z"}}
	st, err := workspaceclient.New(c, time.Second).Status(context.Background(), "Basic a2V5OnNlY3JldA==", "w1")
	if err != nil || !st.Active || !st.TokenCutoff.Equal(time.Date(2026, 11, 22, 7, 46, 0, 0, time.UTC)) {
		t.Fatalf("Status = %+v, %v", st, err)
	}
	if got := c.sent.Get("authorization"); len(got) != 1 || got[0] != "Basic a2V5OnNlY3JldA==" {
		t.Errorf("authorization sent: %q", got)
	}

	c.answer = &workspacev1.WorkspaceStatus{Id: "w1", Active: true, TokenCutoffTime: "yesterday"}
	_, err = workspaceclient.New(c, time.Second).Status(context.Background(), "Basic a2V5OnNlY3JldA==", "w1")
	if fault.KindOf(err) != fault.Internal {
		t.Fatalf("an unreadable cutoff: %v, want Internal", err)
	}
}
