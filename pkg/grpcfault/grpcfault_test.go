package grpcfault_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
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
		{"aborted", fault.New(fault.Aborted, "try again"), codes.Aborted, "try again"},
		{"unauthenticated", fault.New(fault.Unauthenticated, "bad credentials"), codes.Unauthenticated, "bad credentials"},
		{"denied", fault.New(fault.PermissionDenied, "no"), codes.PermissionDenied, "no"},
		{"stale", fault.New(fault.PreconditionFailed, "etag mismatch"), codes.FailedPrecondition, "etag mismatch"},
		{"unavailable", fault.New(fault.Unavailable, "store down"), codes.Unavailable, "store down"},
		{"internal kind hides its message", fault.New(fault.Internal, "secret detail"), codes.Internal, "internal error"},
		{"unknown kind hides its message", fault.New(fault.Kind(200), "secret detail"), codes.Internal, "internal error"},
		{"plain error hides its text", errors.New("mongo: 10.1.2.3 refused"), codes.Internal, "internal error"},
		{"deadline", fmt.Errorf("find: %w", context.DeadlineExceeded), codes.DeadlineExceeded, "the request deadline passed"},
		{"canceled", fmt.Errorf("find: %w", context.Canceled), codes.Canceled, "the request was canceled"},
		{"status passes through", status.Error(codes.NotFound, "gone"), codes.NotFound, "gone"},
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

// Errors that are not faults get the ErrorInfo of the kind that fits.
func TestStatusNamesTheKindOfOtherErrors(t *testing.T) {
	tests := []struct {
		err        error
		wantReason string
	}{
		{errors.New("mongo: 10.1.2.3 refused"), "INTERNAL"},
		{fmt.Errorf("find: %w", context.DeadlineExceeded), "DEADLINE_EXCEEDED"},
		{fmt.Errorf("find: %w", context.Canceled), ""},
	}
	for _, tt := range tests {
		st := status.Convert(grpcfault.Status(tt.err))
		if got := errorInfo(st).GetReason(); got != tt.wantReason {
			t.Errorf("%v: reason %q, want %q", tt.err, got, tt.wantReason)
		}
	}
}

// Each kind's status carries its reason in our domain, and the details a
// caller acts on: the fields of an Invalid request, the retry delay of an
// unavailable or throttled service. Nothing else is attached.
func TestStatusDetails(t *testing.T) {
	for _, spec := range grpcfault.Specs() {
		t.Run(spec.Reason, func(t *testing.T) {
			err := &fault.Error{Kind: spec.Kind, Message: "m", Fields: []fault.FieldViolation{{Field: "address.country", Description: "must be an ISO 3166-1 alpha-2 code"}}}
			st := status.Convert(grpcfault.Status(err))
			var info *errdetails.ErrorInfo
			var fields []*errdetails.BadRequest_FieldViolation
			var retry *errdetails.RetryInfo
			for _, d := range st.Details() {
				switch d := d.(type) {
				case *errdetails.ErrorInfo:
					info = d
				case *errdetails.BadRequest:
					fields = d.GetFieldViolations()
				case *errdetails.RetryInfo:
					retry = d
				default:
					t.Errorf("unexpected detail %T", d)
				}
			}
			if info.GetReason() != spec.Reason || info.GetDomain() != grpcfault.ErrorDomain {
				t.Errorf("ErrorInfo = %v", info)
			}
			if wantFields := spec.Kind == fault.Invalid; wantFields != (len(fields) == 1) ||
				wantFields && fields[0].GetField() != "address.country" {
				t.Errorf("field violations = %v", fields)
			}
			wantRetry := spec.Kind == fault.Unavailable || spec.Kind == fault.Throttled
			if wantRetry != (retry != nil) || wantRetry && retry.GetRetryDelay().AsDuration() != grpcfault.RetryAfter {
				t.Errorf("RetryInfo = %v", retry)
			}
		})
	}
}

// Status and Fault are inverses for every kind: the kind travels in the
// reason, so kinds that share a gRPC code stay apart.
func TestReasonRoundTrip(t *testing.T) {
	for _, spec := range grpcfault.Specs() {
		t.Run(spec.Reason, func(t *testing.T) {
			st := status.Convert(grpcfault.Status(fault.New(spec.Kind, "the message")))
			if st.Code() != spec.Code {
				t.Errorf("code %v, want %v", st.Code(), spec.Code)
			}
			if kind, ok := grpcfault.KindOf(st); !ok || kind != spec.Kind {
				t.Errorf("KindOf = %v, %v", kind, ok)
			}
			e, ok := fault.As(grpcfault.Fault(st.Err()))
			if !ok || e.Kind != spec.Kind {
				t.Fatalf("Fault() = %#v, want kind %v", e, spec.Kind)
			}
			if spec.Kind != fault.Internal && e.Message != "the message" {
				t.Errorf("message %q", e.Message)
			}
		})
	}
	orig := fault.InvalidFields([]fault.FieldViolation{{Field: "email", Description: "must be an address"}})
	e, _ := fault.As(grpcfault.Fault(grpcfault.Status(orig)))
	if len(e.Fields) != 1 || e.Fields[0] != orig.(*fault.Error).Fields[0] {
		t.Errorf("fields %+v", e.Fields)
	}
}

// Statuses without our ErrorInfo (from the gRPC library or a foreign
// server, or naming another domain or an unknown reason) get the kind of
// their code.
func TestFaultOfForeignStatuses(t *testing.T) {
	otherDomain, _ := status.New(codes.FailedPrecondition, "x").WithDetails(&errdetails.ErrorInfo{Reason: "PRECONDITION_FAILED", Domain: "example.com"})
	unknownReason, _ := status.New(codes.Unavailable, "x").WithDetails(&errdetails.ErrorInfo{Reason: "NO_SUCH_REASON", Domain: grpcfault.ErrorDomain})
	tests := []struct {
		name string
		st   *status.Status
		want fault.Kind
	}{
		{"invalid argument", status.New(codes.InvalidArgument, "x"), fault.Invalid},
		{"out of range", status.New(codes.OutOfRange, "x"), fault.Invalid},
		{"failed precondition is not an etag", status.New(codes.FailedPrecondition, "x"), fault.Invalid},
		{"unauthenticated", status.New(codes.Unauthenticated, "x"), fault.Unauthenticated},
		{"permission denied", status.New(codes.PermissionDenied, "x"), fault.PermissionDenied},
		{"not found", status.New(codes.NotFound, "x"), fault.NotFound},
		{"already exists", status.New(codes.AlreadyExists, "x"), fault.Conflict},
		{"aborted", status.New(codes.Aborted, "x"), fault.Aborted},
		{"resource exhausted", status.New(codes.ResourceExhausted, "x"), fault.Throttled},
		{"connection refused", status.New(codes.Unavailable, "connection error: dial tcp 10.0.0.7:9090"), fault.Unavailable},
		{"deadline", status.New(codes.DeadlineExceeded, "context deadline exceeded"), fault.DeadlineExceeded},
		{"unknown", status.New(codes.Unknown, "x"), fault.Internal},
		{"unimplemented", status.New(codes.Unimplemented, "x"), fault.Internal},
		{"canceled", status.New(codes.Canceled, "x"), fault.Internal},
		{"another domain", otherDomain, fault.Invalid},
		{"unknown reason", unknownReason, fault.Unavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, ok := grpcfault.KindOf(tt.st); ok {
				t.Errorf("KindOf found a kind")
			}
			if k := fault.KindOf(grpcfault.Fault(tt.st.Err())); k != tt.want {
				t.Errorf("kind %v, want %v", k, tt.want)
			}
		})
	}
	plain := errors.New("not a status")
	if got := grpcfault.Fault(plain); got != plain {
		t.Errorf("Fault(plain) = %v", got)
	}
}

// The table has one row per kind, in kind order, with distinct reasons.
func TestSpecsCoverEveryKind(t *testing.T) {
	reasons := map[string]bool{}
	for i, spec := range grpcfault.Specs() {
		if spec.Kind != fault.Kind(i) || spec.Reason == "" || spec.HTTPStatus == 0 || spec.Meaning == "" || reasons[spec.Reason] {
			t.Errorf("row %d: %+v", i, spec)
		}
		reasons[spec.Reason] = true
		if got, ok := grpcfault.SpecByReason(spec.Reason); !ok || got.Kind != spec.Kind {
			t.Errorf("SpecByReason(%q) = %+v", spec.Reason, got)
		}
	}
	if next := fault.Kind(len(grpcfault.Specs())); !strings.HasPrefix(next.String(), "kind(") {
		t.Errorf("kind %q has no row", next)
	}
	if s := grpcfault.SpecOf(fault.Kind(200)); s.Kind != fault.Internal {
		t.Errorf("SpecOf(unknown) = %+v", s)
	}
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
	if st := status.Convert(err); st.Code() != codes.Internal || st.Message() != "internal error" || errorInfo(st).GetReason() != "INTERNAL" {
		t.Fatalf("status %v %q %v", st.Code(), st.Message(), st.Details())
	}
}

func errorInfo(st *status.Status) *errdetails.ErrorInfo {
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok {
			return info
		}
	}
	return nil
}
