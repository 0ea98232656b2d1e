package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/genproto/googleapis/rpc/code"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/liveproctor/workspaces/pkg/basicauth"
	"github.com/liveproctor/workspaces/pkg/fault"
	restv1 "github.com/liveproctor/workspaces/pkg/gen/rest/v1"
	"github.com/liveproctor/workspaces/pkg/grpcfault"
)

// Messages that replace texts which could reveal internals.
const (
	msgInternal    = "internal error"
	msgUnavailable = "the service is temporarily unavailable; retry later"
	msgDeadline    = "the request deadline passed"
	msgCanceled    = "the request was canceled"
	msgMalformed   = "the request is malformed"
	msgBodyTimeout = "the request body did not arrive within the request deadline"
	msgBadPath     = "the request path is not valid UTF-8"
)

// defaultRetryAfter is suggested when a 429 or 503 carries no RetryInfo.
const defaultRetryAfter = time.Second

// errorJSON renders rest.v1.ErrorBody, the documented error shape. Unset
// fields are written too, so details is always an array.
var errorJSON = protojson.MarshalOptions{EmitUnpopulated: true}

// apiError is an error answer before it is written: the HTTP status, the
// gRPC code it stands for, a message safe to show, field details and any
// extra headers.
type apiError struct {
	httpStatus int
	code       codes.Code
	message    string
	details    []*restv1.FieldViolation
	header     http.Header
}

// newKindError returns an error answer of kind, with the HTTP status and
// gRPC code of the kind's row in the one table (grpcfault.SpecOf).
func newKindError(kind fault.Kind, message string) apiError {
	spec := grpcfault.SpecOf(kind)
	return apiError{httpStatus: spec.HTTPStatus, code: spec.Code, message: message, header: http.Header{}}
}

// newAPIError returns an error answer with the gRPC code c, as the kind c
// stands for (grpcfault.KindOfCode).
func newAPIError(c codes.Code, message string) apiError {
	e := newKindError(grpcfault.KindOfCode(c), message)
	e.code = c
	return e
}

// writeKindError writes an error answer of kind with message and the
// request's fields to blame, with the headers the kind calls for
// (WWW-Authenticate on 401, Retry-After on 429 and 503).
func writeKindError(w http.ResponseWriter, r *http.Request, kind fault.Kind, message string, details ...fault.FieldViolation) {
	e := newKindError(kind, message)
	for _, d := range details {
		e.details = append(e.details, &restv1.FieldViolation{Field: d.Field, Description: d.Description})
	}
	e.addKindHeaders(r, kind, 0)
	e.write(w, r)
}

// addKindHeaders sets the headers an answer of kind carries: the challenge
// of a 401, and Retry-After on a 429 or 503 (retryAfter, or the default
// when the answer suggests no delay).
func (e *apiError) addKindHeaders(r *http.Request, kind fault.Kind, retryAfter time.Duration) {
	switch kind {
	case fault.Unauthenticated:
		e.header.Set("WWW-Authenticate", challenge(r.URL.Path))
	case fault.Throttled, fault.Unavailable:
		if retryAfter <= 0 {
			retryAfter = defaultRetryAfter
		}
		e.header.Set("Retry-After", strconv.Itoa(int(math.Ceil(retryAfter.Seconds()))))
	}
}

// write sends e as a rest.v1.ErrorBody. X-Request-Id is already set by
// withRequestID; it is set again in case a handler cleared the headers.
func (e apiError) write(w http.ResponseWriter, r *http.Request) {
	id := requestIDFrom(r.Context())
	h := w.Header()
	for k, vs := range e.header {
		h[k] = vs
	}
	if id != "" {
		h.Set(RequestIDHeader, id)
	}
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Del("Content-Length")
	// protojson refuses invalid UTF-8, which a message quoting the path
	// or the body may hold.
	details := make([]*restv1.FieldViolation, len(e.details))
	for i, d := range e.details {
		details[i] = &restv1.FieldViolation{Field: validUTF8(d.GetField()), Description: validUTF8(d.GetDescription())}
	}
	body, err := errorJSON.Marshal(&restv1.ErrorBody{Error: &restv1.Error{
		Code:      int32(e.httpStatus),
		Status:    code.Code(e.code).String(),
		Message:   validUTF8(e.message),
		RequestId: id,
		Details:   details,
	}})
	w.WriteHeader(e.httpStatus)
	if err == nil {
		_, _ = w.Write(body)
	}
}

func validUTF8(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

// writeTooLarge answers 413 for a body over max bytes.
func writeTooLarge(w http.ResponseWriter, r *http.Request, max int64) {
	writeKindError(w, r, fault.TooLarge, fmt.Sprintf("the request body exceeds %d bytes", max))
}

// errorHandler writes every gRPC and gateway error in the error shape.
type errorHandler struct {
	logger       *slog.Logger
	maxBodyBytes int64
}

// handle is the runtime.ErrorHandlerFunc for the gateway's mux.
func (h *errorHandler) handle(ctx context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, r *http.Request, err error) {
	switch state := stateFrom(r.Context()); {
	case state.bodyTooLarge:
		writeTooLarge(w, r, h.maxBodyBytes)
		return
	case state.bodyTimedOut:
		// Reading the body failed at the request deadline; what the
		// read returned names addresses and is no business of the caller.
		writeKindError(w, r, fault.RequestTimeout, msgBodyTimeout)
		return
	}
	e := h.fromError(r, err)
	if md, ok := runtime.ServerMetadataFromContext(ctx); ok {
		for k, vs := range md.HeaderMD {
			if name, ok := outgoingHeader(k); ok {
				for _, v := range vs {
					e.header.Add(name, v)
				}
			}
		}
	}
	e.write(w, r)
}

// fromError maps err, normally a gRPC status, to an error answer. The kind
// is the one the status names in its ErrorInfo; a status without one (the
// gRPC library's own, such as a failed connection) has the kind of its code.
func (h *errorHandler) fromError(r *http.Request, err error) apiError {
	var hse *runtime.HTTPStatusError
	if errors.As(err, &hse) {
		return routeError(r, hse.HTTPStatus)
	}
	st := status.Convert(err)
	kind, named := grpcfault.KindOf(st)
	e := newKindError(kind, st.Message())
	e.code = st.Code()

	retryAfter := time.Duration(0)
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.BadRequest:
			for _, v := range d.GetFieldViolations() {
				e.details = append(e.details, &restv1.FieldViolation{Field: v.GetField(), Description: v.GetDescription()})
			}
		case *errdetails.RetryInfo:
			retryAfter = d.GetRetryDelay().AsDuration()
		}
	}

	switch {
	case st.Code() == codes.Canceled:
		// The caller has gone; no kind fits and no one reads the answer.
		e.httpStatus = runtime.HTTPStatusFromCode(codes.Canceled)
		e.message = msgCanceled
	case kind == fault.Invalid && stateFrom(r.Context()).decodeErr != nil:
		de := stateFrom(r.Context()).decodeErr
		e.message = de.message
		if de.field != "" {
			e.details = append(e.details, &restv1.FieldViolation{Field: de.field, Description: de.description})
		}
	case kind == fault.Unavailable && !named:
		// Not a service's answer: the connection to the backend failed,
		// and the text names addresses.
		h.logger.Warn("backend unavailable", "request_id", requestIDFrom(r.Context()), "error", st.Message())
		e.message = msgUnavailable
	case kind == fault.DeadlineExceeded && !named:
		e.message = msgDeadline
	case kind == fault.Internal:
		h.logger.Error("request failed", "request_id", requestIDFrom(r.Context()),
			"code", code.Code(st.Code()).String(), "error", st.Message())
		e.message = msgInternal
		e.details = nil
	case st.Code() == codes.InvalidArgument && !named:
		// Not a service's answer but grpc-gateway's refusal, whose text
		// is a Go error (a form that failed to parse, a body that could
		// not be read) and may quote the request at length.
		h.logger.Info("request refused", "request_id", requestIDFrom(r.Context()), "error", st.Message())
		e.message = msgMalformed
	}
	e.addKindHeaders(r, kind, retryAfter)
	return e
}

// routingError is the runtime.RoutingErrorHandlerFunc.
func routingError(_ context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, r *http.Request, httpStatus int) {
	routeError(r, httpStatus).write(w, r)
}

// routeError is the answer when grpc-gateway finds no handler: no route
// (404), a route without this method (405) or a malformed path (400). A
// path that is not UTF-8 is refused as such, whatever it would match. The
// method and path are the caller's and quoted bounded.
func routeError(r *http.Request, httpStatus int) apiError {
	if !utf8.ValidString(r.URL.Path) {
		return newKindError(fault.Invalid, msgBadPath)
	}
	switch httpStatus {
	case http.StatusNotFound:
		return newKindError(fault.NotFound, fmt.Sprintf("no route matches %s %s", echo(r.Method), echo(r.URL.Path)))
	case http.StatusMethodNotAllowed:
		return newKindError(fault.MethodNotAllowed, fmt.Sprintf("method %s is not allowed on %s", echo(r.Method), echo(r.URL.Path)))
	case http.StatusBadRequest:
		return newKindError(fault.Invalid, "the request path is malformed")
	}
	return newKindError(fault.Internal, msgInternal)
}

// bearerChallenge answers the session routes, which take the SDK token.
const bearerChallenge = `Bearer realm="workspaces"`

// challenge is the WWW-Authenticate value of a 401 on path: Bearer on the
// session routes, Basic everywhere else.
func challenge(path string) string {
	if path == sdkSessionPath {
		return bearerChallenge
	}
	return basicauth.Challenge
}
