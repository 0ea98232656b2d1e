package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/grpcfault"
)

// Every kind a service answers with reaches REST with the status of its
// reason, even where kinds share a gRPC code (412 and 409, 412 and 409 FAILED_PRECONDITION, 413 and 429,
// 408 and 504, 502 and 503), and with the headers its status calls for.
func TestEveryKindAnswersWithItsStatus(t *testing.T) {
	retry1 := map[string]string{"Retry-After": "1"}
	tests := []struct {
		kind       fault.Kind
		wantHTTP   int
		wantStatus string
		header     map[string]string // headers that must be set; the others must not
	}{
		{fault.Invalid, 400, "INVALID_ARGUMENT", nil},
		{fault.Unauthenticated, 401, "UNAUTHENTICATED", map[string]string{"WWW-Authenticate": `Basic realm="workspaces"`}},
		{fault.PermissionDenied, 403, "PERMISSION_DENIED", nil},
		{fault.NotFound, 404, "NOT_FOUND", nil},
		{fault.MethodNotAllowed, 405, "UNIMPLEMENTED", nil},
		{fault.RequestTimeout, 408, "DEADLINE_EXCEEDED", nil},
		{fault.Conflict, 409, "ALREADY_EXISTS", nil},
		{fault.Aborted, 409, "ABORTED", nil},
		{fault.FailedPrecondition, 409, "FAILED_PRECONDITION", nil},
		{fault.PreconditionFailed, 412, "FAILED_PRECONDITION", nil},
		{fault.TooLarge, 413, "RESOURCE_EXHAUSTED", nil},
		{fault.UnsupportedMediaType, 415, "INVALID_ARGUMENT", nil},
		{fault.Throttled, 429, "RESOURCE_EXHAUSTED", retry1},
		{fault.Internal, 500, "INTERNAL", nil},
		{fault.BadGateway, 502, "UNAVAILABLE", nil},
		{fault.Unavailable, 503, "UNAVAILABLE", retry1},
		{fault.DeadlineExceeded, 504, "DEADLINE_EXCEEDED", nil},
	}
	if len(tests) != len(grpcfault.Specs()) {
		t.Fatalf("%d kinds tested, the table has %d", len(tests), len(grpcfault.Specs()))
	}
	e := newEnv(t, options{})
	for _, tt := range tests {
		t.Run(tt.kind.String(), func(t *testing.T) {
			const message = "what went wrong"
			e.workspaces.err = grpcfault.Status(fault.New(tt.kind, message))
			resp, body := e.do(t, http.MethodGet, "/api/workspace/w1", nil, nil)
			p := checkError(t, resp, body, tt.wantHTTP, tt.wantStatus)
			wantMessage := message
			if tt.kind == fault.Internal {
				wantMessage = "internal error"
			}
			if p.GetMessage() != wantMessage || len(p.GetDetails()) != 0 {
				t.Errorf("message %q, details %v", p.GetMessage(), p.GetDetails())
			}
			for _, k := range []string{"Retry-After", "WWW-Authenticate"} {
				if got := resp.Header.Get(k); got != tt.header[k] {
					t.Errorf("%s = %q, want %q", k, got, tt.header[k])
				}
			}
		})
	}
}

// Statuses that name no kind (the gRPC library's own, or built by hand)
// answer with the kind of their code; the status name stays their code.
func TestStatusesWithoutAKind(t *testing.T) {
	namedRetry, _ := status.New(codes.Unavailable, "store down").WithDetails(
		&errdetails.ErrorInfo{Reason: "UNAVAILABLE", Domain: grpcfault.ErrorDomain},
		&errdetails.RetryInfo{RetryDelay: durationpb.New(2500 * time.Millisecond)})
	foreignReason, _ := status.New(codes.FailedPrecondition, "cycle").WithDetails(
		&errdetails.ErrorInfo{Reason: "PRECONDITION_FAILED", Domain: "example.com"})
	tests := []struct {
		name       string
		err        error
		wantHTTP   int
		wantStatus string
		header     map[string]string
		message    string
	}{
		{"failed precondition is no etag", status.Error(codes.FailedPrecondition, "cycle"), 400, "FAILED_PRECONDITION", nil, "cycle"},
		{"another domain's reason", foreignReason.Err(), 400, "FAILED_PRECONDITION", nil, "cycle"},
		{"unauthenticated", status.Error(codes.Unauthenticated, "bad credentials"), 401, "UNAUTHENTICATED",
			map[string]string{"WWW-Authenticate": `Basic realm="workspaces"`}, "bad credentials"},
		{"resource exhausted", status.Error(codes.ResourceExhausted, "slow down"), 429, "RESOURCE_EXHAUSTED",
			map[string]string{"Retry-After": "1"}, "slow down"},
		{"aborted", status.Error(codes.Aborted, "lost a race"), 409, "ABORTED", nil, "lost a race"},
		{"unavailable hides its text", status.Error(codes.Unavailable, "dial tcp 10.0.0.7:9090: connection refused"), 503, "UNAVAILABLE",
			map[string]string{"Retry-After": "1"}, "the service is temporarily unavailable; retry later"},
		{"a service's retry advice is rounded up", namedRetry.Err(), 503, "UNAVAILABLE", map[string]string{"Retry-After": "3"}, "store down"},
		{"deadline", status.Error(codes.DeadlineExceeded, "context deadline exceeded"), 504, "DEADLINE_EXCEEDED", nil, "the request deadline passed"},
		{"internal", status.Error(codes.Internal, "mongo at 10.0.0.7 said no"), 500, "INTERNAL", nil, "internal error"},
		{"unimplemented", status.Error(codes.Unimplemented, "method GetWorkspace not implemented"), 500, "UNIMPLEMENTED", nil, "internal error"},
		{"unknown", io.ErrUnexpectedEOF, 500, "UNKNOWN", nil, "internal error"},
	}
	e := newEnv(t, options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.workspaces.err = tt.err
			resp, body := e.do(t, http.MethodGet, "/api/workspace/w1", nil, nil)
			p := checkError(t, resp, body, tt.wantHTTP, tt.wantStatus)
			if p.GetMessage() != tt.message {
				t.Errorf("message %q, want %q", p.GetMessage(), tt.message)
			}
			for k, v := range tt.header {
				if got := resp.Header.Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
		})
	}
	if logs := e.logs.String(); !strings.Contains(logs, "10.0.0.7") {
		t.Errorf("the hidden texts are not logged: %s", logs)
	}
}

func TestFieldViolationsBecomeDetails(t *testing.T) {
	e := newEnv(t, options{})
	e.workspaces.err = grpcfault.Status(fault.InvalidFields([]fault.FieldViolation{
		{Field: "type", Description: "must be DISTRICT or CAMPUS"},
		{Field: "address.country", Description: "must be an ISO 3166-1 alpha-2 code"},
	}))
	resp, body := e.do(t, http.MethodGet, "/api/workspace/w1", nil, nil)
	p := checkError(t, resp, body, 400, "INVALID_ARGUMENT")
	d := p.GetDetails()
	if len(d) != 2 || d[0].GetField() != "type" || d[0].GetDescription() != "must be DISTRICT or CAMPUS" || d[1].GetField() != "address.country" {
		t.Errorf("details %v", d)
	}
}

// The session routes challenge for the SDK token, not for a key pair.
func TestSessionChallengeIsBearer(t *testing.T) {
	e := newEnv(t, options{})
	resp, body := e.do(t, http.MethodGet, "/api/sdk/session", nil, map[string]string{"Authorization": "Bearer bad"})
	checkError(t, resp, body, 401, "UNAUTHENTICATED")
	if got := resp.Header.Get("WWW-Authenticate"); got != `Bearer realm="workspaces"` {
		t.Errorf("WWW-Authenticate = %q", got)
	}
}

// The gateway's own answers come from the same table.
func TestGatewayErrors(t *testing.T) {
	e := newEnv(t, options{maxBodyBytes: 16})
	tests := []struct {
		name, method, path, body string
		wantHTTP                 int
		wantStatus               string
	}{
		{"no route", http.MethodGet, "/api/nothing/here", "", 404, "NOT_FOUND"},
		{"path not valid UTF-8", http.MethodGet, "/api/%ff", "", 400, "INVALID_ARGUMENT"},
		{"method not allowed", http.MethodPatch, "/api/workspace/w1", "{}", 405, "UNIMPLEMENTED"},
		{"body too large", http.MethodPut, "/api/workspace/w1", `{"name":"abcdefgh"}`, 413, "RESOURCE_EXHAUSTED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := e.do(t, tt.method, tt.path, strings.NewReader(tt.body), nil)
			checkError(t, resp, body, tt.wantHTTP, tt.wantStatus)
		})
	}
}
