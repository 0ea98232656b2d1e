// Package grpcfault converts between fault errors and gRPC statuses: the one
// table every gRPC port answers through, and its inverse for gRPC clients.
package grpcfault

import (
	"context"
	"errors"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/liveproctor/workspaces/pkg/fault"
)

// PreconditionETag is the PreconditionFailure violation type that marks a
// FAILED_PRECONDITION as a stale etag, which REST answers with 412.
const PreconditionETag = "ETAG"

// RetryAfter is the delay suggested to callers of an unavailable or
// throttled service, carried as RetryInfo and rendered as Retry-After.
const RetryAfter = time.Second

// internalMessage replaces the text of unexpected errors, which may hold
// driver details or worse.
const internalMessage = "internal error"

var codeOfKind = map[fault.Kind]codes.Code{
	fault.Internal:           codes.Internal,
	fault.Invalid:            codes.InvalidArgument,
	fault.Unauthenticated:    codes.Unauthenticated,
	fault.PermissionDenied:   codes.PermissionDenied,
	fault.NotFound:           codes.NotFound,
	fault.Conflict:           codes.AlreadyExists,
	fault.PreconditionFailed: codes.FailedPrecondition,
	fault.TooLarge:           codes.ResourceExhausted,
	fault.Throttled:          codes.ResourceExhausted,
	fault.Unavailable:        codes.Unavailable,
}

// Status converts err to a gRPC status error. A fault answers with its kind
// and message (even when it wraps a status from another service); a bare
// status error passes through; a context cancellation or deadline keeps its
// own code; anything else becomes Internal with a fixed message.
func Status(err error) error {
	if err == nil {
		return nil
	}
	e, ok := fault.As(err)
	if !ok {
		switch {
		case isStatus(err):
			return err
		case errors.Is(err, context.DeadlineExceeded):
			return status.Error(codes.DeadlineExceeded, "the request deadline passed")
		case errors.Is(err, context.Canceled):
			return status.Error(codes.Canceled, "the request was canceled")
		}
		return status.Error(codes.Internal, internalMessage)
	}
	code := codeOfKind[e.Kind]
	message := e.Message
	if e.Kind == fault.Internal {
		message = internalMessage
	}
	st := status.New(code, message)
	var details []*errdetails.BadRequest_FieldViolation
	for _, f := range e.Fields {
		details = append(details, &errdetails.BadRequest_FieldViolation{Field: f.Field, Description: f.Description})
	}
	var withDetails *status.Status
	var derr error
	switch {
	case len(details) > 0:
		withDetails, derr = st.WithDetails(&errdetails.BadRequest{FieldViolations: details})
	case e.Kind == fault.PreconditionFailed:
		withDetails, derr = st.WithDetails(&errdetails.PreconditionFailure{
			Violations: []*errdetails.PreconditionFailure_Violation{{Type: PreconditionETag, Subject: "etag", Description: message}},
		})
	case e.Kind == fault.Unavailable || e.Kind == fault.Throttled:
		withDetails, derr = st.WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(RetryAfter)})
	}
	if derr == nil && withDetails != nil {
		st = withDetails
	}
	return st.Err()
}

// isStatus reports whether err is a gRPC status error. A fault is checked
// first: one that wraps a status received from another service answers with
// its own kind and message, never the wrapped text.
func isStatus(err error) bool {
	_, ok := status.FromError(err)
	return ok
}

// Fault converts a status error received from another service back into a
// fault error, so a client adapter can hand its caller the same kind.
func Fault(err error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	kind := fault.Internal
	switch st.Code() {
	case codes.InvalidArgument, codes.OutOfRange:
		kind = fault.Invalid
	case codes.Unauthenticated:
		kind = fault.Unauthenticated
	case codes.PermissionDenied:
		kind = fault.PermissionDenied
	case codes.NotFound:
		kind = fault.NotFound
	case codes.AlreadyExists, codes.Aborted:
		kind = fault.Conflict
	case codes.FailedPrecondition:
		kind = fault.PreconditionFailed
	case codes.ResourceExhausted:
		kind = fault.Throttled
	case codes.Unavailable, codes.DeadlineExceeded:
		kind = fault.Unavailable
	}
	e := &fault.Error{Kind: kind, Message: st.Message(), Cause: err}
	for _, d := range st.Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			for _, v := range br.GetFieldViolations() {
				e.Fields = append(e.Fields, fault.FieldViolation{Field: v.GetField(), Description: v.GetDescription()})
			}
		}
	}
	return e
}
