package workspaceclient_test

import (
	"context"
	"errors"
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
	"github.com/liveproctor/workspaces/services/auth/internal/app"
)

// launchConn answers VerifyLti13Launch with answer or err.
type launchConn struct {
	answer *workspacev1.Lti13Launch
	err    error
	method string
	req    *workspacev1.VerifyLti13LaunchRequest
	sent   metadata.MD
}

func (c *launchConn) Invoke(ctx context.Context, method string, args, reply any, _ ...grpc.CallOption) error {
	c.method, c.req = method, args.(*workspacev1.VerifyLti13LaunchRequest)
	c.sent, _ = metadata.FromOutgoingContext(ctx)
	if c.err != nil {
		return c.err
	}
	proto.Merge(reply.(proto.Message), c.answer)
	return nil
}

func (c *launchConn) NewStream(context.Context, *grpc.StreamDesc, string, ...grpc.CallOption) (grpc.ClientStream, error) {
	return nil, errors.New("no streams here")
}

func TestVerifyLTI13Launch(t *testing.T) {
	c := &launchConn{answer: &workspacev1.Lti13Launch{
		WorkspaceId: "w1", RegistrationId: "r1", DeploymentId: "d1", MessageType: "LtiDeepLinkingRequest",
		Email: "ada@example.com", EmailDerived: true, LaunchPresentationReturnUrl: "https://lms.example/back",
		CustomParameters: []*workspacev1.LtiParameter{{Name: "custom_a", Value: "1"}},
		DeepLinking:      &workspacev1.Lti13DeepLinking{ReturnUrl: "https://lms.example/dl", Data: "opaque", DeepLinkId: "dl-1"},
	}}
	l, err := workspaceclient.New(c, time.Second).VerifyLTI13Launch(context.Background(), "Basic c2VydmljZQ==", "jwt", "s1",
		app.LTI13BrowserProof{State: "s2", Nonce: "n2", FromStorage: true})
	if err != nil {
		t.Fatal(err)
	}
	if c.method != workspacev1.WorkspaceService_VerifyLti13Launch_FullMethodName ||
		c.req.GetIdToken() != "jwt" || c.req.GetState() != "s1" || c.req.GetBrowserState() != "s2" ||
		c.req.GetBrowserNonce() != "n2" || !c.req.GetFromPlatformStorage() {
		t.Fatalf("sent %s %v", c.method, c.req)
	}
	if got := c.sent.Get("authorization"); len(got) != 1 || got[0] != "Basic c2VydmljZQ==" {
		t.Errorf("authorization sent: %q", got)
	}
	if l.WorkspaceID != "w1" || l.Email != "ada@example.com" || !l.EmailDerived || l.ReturnURL != "https://lms.example/back" ||
		l.RegistrationID != "r1" || l.DeploymentID != "d1" || l.MessageType != "LtiDeepLinkingRequest" ||
		l.DeepLinkReturnURL != "https://lms.example/dl" || l.DeepLinkData != "opaque" || l.DeepLinkID != "dl-1" ||
		len(l.CustomParameters) != 1 || l.CustomParameters[0].Value != "1" {
		t.Fatalf("launch %+v", l)
	}

	// The workspace service's refusal reaches the page as it is.
	refusal := fault.New(fault.Unauthenticated, "the launch's state is not this browser's (open the link again from the LMS)")
	c.err = grpcfault.Status(refusal)
	_, err = workspaceclient.New(c, time.Second).VerifyLTI13Launch(context.Background(), "Basic c2VydmljZQ==", "jwt", "s1", app.LTI13BrowserProof{State: "s2"})
	if f, ok := fault.As(err); !ok || f.Kind != fault.Unauthenticated || f.Message != refusal.Message {
		t.Fatalf("refused: %v", err)
	}

	// The service's own UNAVAILABLE says what is down; a transport
	// failure's text stays out.
	for _, tc := range []struct {
		err  error
		want string
	}{
		{grpcfault.Status(fault.New(fault.Unavailable, "the platform's public keys could not be fetched")), "the platform's public keys could not be fetched"},
		{status.Error(codes.Unavailable, "dial tcp 10.0.0.7:9090: connection refused"), unavailable},
	} {
		c.err = tc.err
		_, err = workspaceclient.New(c, time.Second).VerifyLTI13Launch(context.Background(), "Basic c2VydmljZQ==", "jwt", "s1", app.LTI13BrowserProof{State: "s1"})
		if f, ok := fault.As(err); !ok || f.Kind != fault.Unavailable || f.Message != tc.want {
			t.Errorf("%v: %v, want %q", tc.err, err, tc.want)
		}
	}
}
