package grpcfault_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/grpcfault"
)

func TestStatusCodes(t *testing.T) {
	tests := []struct {
		name        string
		err         error
		wantCode    codes.Code
		wantMessage string
	}{
		{"invalid", fault.InvalidField("name", "must not be empty"), codes.InvalidArgument, "name: must not be empty"},
		{"not found", fmt.Errorf("get: %w", fault.New(fault.NotFound, "workspace not found")), codes.NotFound, "workspace not found"},
		{"conflict", fault.New(fault.Conflict, "exists"), codes.AlreadyExists, "exists"},
		{"unauthenticated", fault.New(fault.Unauthenticated, "bad credentials"), codes.Unauthenticated, "bad credentials"},
		{"denied", fault.New(fault.PermissionDenied, "no"), codes.PermissionDenied, "no"},
		{"stale", fault.New(fault.PreconditionFailed, "etag mismatch"), codes.FailedPrecondition, "etag mismatch"},
		{"unavailable", fault.New(fault.Unavailable, "store down"), codes.Unavailable, "store down"},
		{"internal kind hides its message", fault.New(fault.Internal, "secret detail"), codes.Internal, "internal error"},
		{"plain error hides its text", errors.New("mongo: 10.1.2.3 refused"), codes.Internal, "internal error"},
		{"deadline", fmt.Errorf("find: %w", context.DeadlineExceeded), codes.DeadlineExceeded, "the request deadline passed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := status.Convert(grpcfault.Status(tt.err))
			if st.Code() != tt.wantCode || st.Message() != tt.wantMessage {
				t.Errorf("Status() = %v %q, want %v %q", st.Code(), st.Message(), tt.wantCode, tt.wantMessage)
			}
		})
	}
}

func TestStatusDetails(t *testing.T) {
	st := status.Convert(grpcfault.Status(fault.InvalidFields([]fault.FieldViolation{
		{Field: "address.country", Description: "must be an ISO 3166-1 alpha-2 code"},
	})))
	br, ok := onlyDetail(st).(*errdetails.BadRequest)
	if !ok || len(br.GetFieldViolations()) != 1 || br.GetFieldViolations()[0].GetField() != "address.country" {
		t.Errorf("invalid details = %v", st.Details())
	}

	st = status.Convert(grpcfault.Status(fault.New(fault.PreconditionFailed, "stale")))
	pf, ok := onlyDetail(st).(*errdetails.PreconditionFailure)
	if !ok || pf.GetViolations()[0].GetType() != grpcfault.PreconditionETag {
		t.Errorf("precondition details = %v", st.Details())
	}

	st = status.Convert(grpcfault.Status(fault.New(fault.Unavailable, "down")))
	ri, ok := onlyDetail(st).(*errdetails.RetryInfo)
	if !ok || ri.GetRetryDelay().AsDuration() != grpcfault.RetryAfter {
		t.Errorf("unavailable details = %v", st.Details())
	}
}

func TestFaultRoundTrip(t *testing.T) {
	orig := fault.InvalidFields([]fault.FieldViolation{{Field: "email", Description: "must be an address"}})
	back := grpcfault.Fault(grpcfault.Status(orig))
	e, ok := fault.As(back)
	if !ok || e.Kind != fault.Invalid || len(e.Fields) != 1 || e.Fields[0].Field != "email" {
		t.Fatalf("Fault(Status(x)) = %#v", back)
	}
	if k := fault.KindOf(grpcfault.Fault(status.Error(codes.Unavailable, "x"))); k != fault.Unavailable {
		t.Errorf("unavailable kind = %v", k)
	}
}

func onlyDetail(st *status.Status) any {
	if d := st.Details(); len(d) == 1 {
		return d[0]
	}
	return nil
}

// A fault that wraps a status received from another service answers with
// the fault's kind and message, not the wrapped status (whose text may name
// internal addresses).
func TestFaultWrappingAStatusIsTheFault(t *testing.T) {
	inner := status.Error(codes.Unavailable, "connection error: dial tcp 10.0.0.7:9090: connection refused")
	err := grpcfault.Status(fault.Wrap(fault.Unavailable, inner, "the workspace service is unavailable; retry shortly"))
	st := status.Convert(err)
	if st.Code() != codes.Unavailable || st.Message() != "the workspace service is unavailable; retry shortly" {
		t.Fatalf("status %v %q", st.Code(), st.Message())
	}
	err = grpcfault.Status(fault.Wrap(fault.Internal, status.Error(codes.NotFound, "x"), "internal error"))
	if st := status.Convert(err); st.Code() != codes.Internal || st.Message() != "internal error" {
		t.Fatalf("status %v %q", st.Code(), st.Message())
	}
}
