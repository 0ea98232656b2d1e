package grpcfault

import (
	"net/http"

	"google.golang.org/grpc/codes"

	"github.com/liveproctor/workspaces/pkg/fault"
)

// ErrorDomain is the google.rpc.ErrorInfo domain of every error the
// services and the gateway answer with.
const ErrorDomain = "workspaces.liveproctor.dev"

// Spec is how one error kind travels and how REST shows it: the row of the
// one table that the services answer through, the gateway renders through,
// and the OpenAPI document declares statuses from.
type Spec struct {
	Kind fault.Kind
	// Reason names the kind on the wire, as the google.rpc.ErrorInfo reason
	// every error status carries, so no one infers it from other details.
	Reason string
	// Code is the gRPC code.
	Code codes.Code
	// HTTPStatus is the REST status.
	HTTPStatus int
	// Meaning says when the kind is answered, for the OpenAPI document.
	Meaning string
}

var specs = [...]Spec{
	fault.Internal:             {fault.Internal, "INTERNAL", codes.Internal, http.StatusInternalServerError, "An unexpected failure; the message never holds its cause. Retrying may help."},
	fault.Invalid:              {fault.Invalid, "INVALID_ARGUMENT", codes.InvalidArgument, http.StatusBadRequest, "The request is malformed or a field is invalid: the field is named in details. Unknown fields and query parameters are refused too."},
	fault.Unauthenticated:      {fault.Unauthenticated, "UNAUTHENTICATED", codes.Unauthenticated, http.StatusUnauthorized, "Credentials are missing or wrong."},
	fault.PermissionDenied:     {fault.PermissionDenied, "PERMISSION_DENIED", codes.PermissionDenied, http.StatusForbidden, "The caller is known but may not do this."},
	fault.NotFound:             {fault.NotFound, "NOT_FOUND", codes.NotFound, http.StatusNotFound, "The workspace does not exist, is deleted, or is not the caller's to see; or what the path names in it (a key pair, an LTI registration, a deployment id, a webhook) or the body names in its audit trail (an event) does not exist."},
	fault.Conflict:             {fault.Conflict, "CONFLICT", codes.AlreadyExists, http.StatusConflict, "The request clashes with the current state, such as a create of an existing id with a different body."},
	fault.PreconditionFailed:   {fault.PreconditionFailed, "PRECONDITION_FAILED", codes.FailedPrecondition, http.StatusPreconditionFailed, "If-Match no longer matches the workspace's ETag."},
	fault.TooLarge:             {fault.TooLarge, "TOO_LARGE", codes.ResourceExhausted, http.StatusRequestEntityTooLarge, "The request body is over the size limit."},
	fault.Throttled:            {fault.Throttled, "THROTTLED", codes.ResourceExhausted, http.StatusTooManyRequests, "Too many requests; retry after Retry-After seconds."},
	fault.Unavailable:          {fault.Unavailable, "UNAVAILABLE", codes.Unavailable, http.StatusServiceUnavailable, "A dependency is unreachable; retry after Retry-After seconds."},
	fault.Aborted:              {fault.Aborted, "ABORTED", codes.Aborted, http.StatusConflict, "Concurrent changes kept the request from applying; read the workspace again and retry."},
	fault.UnsupportedMediaType: {fault.UnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE", codes.InvalidArgument, http.StatusUnsupportedMediaType, "The body's Content-Type is not application/json."},
	fault.RequestTimeout:       {fault.RequestTimeout, "REQUEST_TIMEOUT", codes.DeadlineExceeded, http.StatusRequestTimeout, "The request body did not arrive within the request deadline."},
	fault.DeadlineExceeded:     {fault.DeadlineExceeded, "DEADLINE_EXCEEDED", codes.DeadlineExceeded, http.StatusGatewayTimeout, "The request deadline passed before the answer was ready; retrying may help."},
	fault.MethodNotAllowed:     {fault.MethodNotAllowed, "METHOD_NOT_ALLOWED", codes.Unimplemented, http.StatusMethodNotAllowed, "The path does not take this method."},
	fault.FailedPrecondition:   {fault.FailedPrecondition, "FAILED_PRECONDITION", codes.FailedPrecondition, http.StatusConflict, "The workspace's state does not allow the change (a key pair rule: the last working REST key pair, the most active key pairs, a pair already expiring; an LTI registration bound: the most registrations, the most deployment ids; the most webhooks; a disabled webhook asked to deliver); the message says which."},
	fault.BadGateway:           {fault.BadGateway, "BAD_GATEWAY", codes.Unavailable, http.StatusBadGateway, "A platform the service called for the request (an LMS) could not be reached or answered something unusable; the message says what."},
}

// SpecOf returns the row of kind; an unknown kind is Internal.
func SpecOf(kind fault.Kind) Spec {
	if int(kind) < len(specs) {
		return specs[kind]
	}
	return specs[fault.Internal]
}

// SpecByReason returns the row whose Reason is reason.
func SpecByReason(reason string) (Spec, bool) {
	for _, s := range specs {
		if s.Reason == reason {
			return s, true
		}
	}
	return Spec{}, false
}

// Specs returns every row, in kind order.
func Specs() []Spec { return specs[:] }
