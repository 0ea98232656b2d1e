package httperr

import (
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/status"

	"github.com/liveproctor/workspaces/pkg/fault"
	restv1 "github.com/liveproctor/workspaces/pkg/gen/rest/v1"
	"github.com/liveproctor/workspaces/pkg/grpcfault"
)

// ServiceError is an error from a service as the gateway reads it, once
// for every kind of answer: the kind the status names in its ErrorInfo, or
// for a status without one (the gRPC library's own, such as a failed
// connection) the kind of its code; the fields it blames and the delay it
// suggests.
type ServiceError struct {
	Status *status.Status
	Kind   fault.Kind
	// Named is set when a service named the kind: its message was
	// written for the caller. An unnamed status's text is a Go error,
	// which may name addresses.
	Named      bool
	Violations []*restv1.FieldViolation
	RetryAfter time.Duration
}

// Read reads err, normally a gRPC status.
func Read(err error) ServiceError {
	st := status.Convert(err)
	f := ServiceError{Status: st}
	f.Kind, f.Named = grpcfault.KindOf(st)
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.BadRequest:
			for _, v := range d.GetFieldViolations() {
				f.Violations = append(f.Violations, &restv1.FieldViolation{Field: v.GetField(), Description: v.GetDescription()})
			}
		case *errdetails.RetryInfo:
			f.RetryAfter = d.GetRetryDelay().AsDuration()
		}
	}
	return f
}
