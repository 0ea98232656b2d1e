// Package grpcfault converts between fault errors and gRPC statuses: the one
// table every gRPC port answers through, and its inverse for gRPC clients.
//
// Every status made from a fault names its kind in a google.rpc.ErrorInfo
// (reason from the table, domain ErrorDomain), so a client or the gateway
// reads the kind instead of guessing it from the code and other details.
package grpcfault

import (
	"context"
	"errors"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/protoadapt"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/liveproctor/workspaces/pkg/fault"
)

// RetryAfter is the delay suggested to callers of an unavailable or
// throttled service, carried as RetryInfo and rendered as Retry-After.
const RetryAfter = time.Second

// Fixed messages: internalMessage replaces the text of unexpected errors,
// which may hold driver details or worse.
const (
	internalMessage = "internal error"
	deadlineMessage = "the request deadline passed"
	canceledMessage = "the request was canceled"
)

// Status converts err to a gRPC status error. A fault answers with its kind
// and message (even when it wraps a status from another service); a bare
// status error passes through; a context deadline is DeadlineExceeded and a
// cancellation keeps its own code; anything else is Internal with a fixed
// message.
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
			e = fault.New(fault.DeadlineExceeded, deadlineMessage)
		case errors.Is(err, context.Canceled):
			// No kind fits: the caller is gone and reads no answer.
			return status.Error(codes.Canceled, canceledMessage)
		default:
			e = &fault.Error{Kind: fault.Internal}
		}
	}
	spec := SpecOf(e.Kind)
	message := e.Message
	if spec.Kind == fault.Internal {
		message = internalMessage
	}
	details := []protoadapt.MessageV1{&errdetails.ErrorInfo{Reason: spec.Reason, Domain: ErrorDomain}}
	switch spec.Kind {
	case fault.Invalid:
		if len(e.Fields) > 0 {
			br := &errdetails.BadRequest{}
			for _, f := range e.Fields {
				br.FieldViolations = append(br.FieldViolations, &errdetails.BadRequest_FieldViolation{Field: f.Field, Description: f.Description})
			}
			details = append(details, br)
		}
	case fault.Unavailable, fault.Throttled:
		delay := e.RetryAfter
		if delay <= 0 {
			delay = RetryAfter
		}
		details = append(details, &errdetails.RetryInfo{RetryDelay: durationpb.New(delay)})
	}
	st := status.New(spec.Code, message)
	if withDetails, err := st.WithDetails(details...); err == nil {
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

// KindOf returns the kind st names in its ErrorInfo, and true; when st
// carries no ErrorInfo of ErrorDomain with a known reason, the kind of its
// code (KindOfCode) and false.
func KindOf(st *status.Status) (fault.Kind, bool) {
	for _, d := range st.Details() {
		if info, ok := d.(*errdetails.ErrorInfo); ok && info.GetDomain() == ErrorDomain {
			if spec, ok := SpecByReason(info.GetReason()); ok {
				return spec.Kind, true
			}
		}
	}
	return KindOfCode(st.Code()), false
}

// KindOfCode is the kind of a status that names none: one the gRPC library
// made (a connection failure, a deadline) or one from a foreign server. A
// code that several kinds share gets the kind a foreign server most likely
// means by it; FAILED_PRECONDITION says nothing of ETags, so it is Invalid
// (HTTP 400) as Google's APIs answer it.
func KindOfCode(c codes.Code) fault.Kind {
	switch c {
	case codes.InvalidArgument, codes.OutOfRange, codes.FailedPrecondition:
		return fault.Invalid
	case codes.Unauthenticated:
		return fault.Unauthenticated
	case codes.PermissionDenied:
		return fault.PermissionDenied
	case codes.NotFound:
		return fault.NotFound
	case codes.AlreadyExists:
		return fault.Conflict
	case codes.Aborted:
		return fault.Aborted
	case codes.ResourceExhausted:
		return fault.Throttled
	case codes.Unavailable:
		return fault.Unavailable
	case codes.DeadlineExceeded:
		return fault.DeadlineExceeded
	}
	return fault.Internal
}

// Fault converts a status error received from another service back into a
// fault error of the kind the status names, so a client adapter can hand
// its caller the same kind; a status without ErrorInfo gets KindOfCode.
func Fault(err error) error {
	if err == nil {
		return nil
	}
	st, ok := status.FromError(err)
	if !ok {
		return err
	}
	kind, _ := KindOf(st)
	e := &fault.Error{Kind: kind, Message: st.Message(), Cause: err}
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.BadRequest:
			for _, v := range d.GetFieldViolations() {
				e.Fields = append(e.Fields, fault.FieldViolation{Field: v.GetField(), Description: v.GetDescription()})
			}
		case *errdetails.RetryInfo:
			e.RetryAfter = d.GetRetryDelay().AsDuration()
		}
	}
	return e
}
