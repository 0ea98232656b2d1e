package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/genproto/googleapis/rpc/code"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/liveproctor/workspaces/pkg/basicauth"
	"github.com/liveproctor/workspaces/pkg/grpcfault"
	"github.com/liveproctor/workspaces/pkg/restapi"
)

// Messages that replace texts which could reveal internals.
const (
	msgInternal    = "internal error"
	msgUnavailable = "the service is temporarily unavailable; retry later"
	msgDeadline    = "the request deadline passed"
	msgCanceled    = "the request was canceled"
)

// defaultRetryAfter is suggested when an Unavailable answer carries no
// RetryInfo.
const defaultRetryAfter = time.Second

// apiError is an error answer before it is written: the HTTP status, the
// gRPC code it stands for, a message safe to show, field details and any
// extra headers.
type apiError struct {
	httpStatus int
	code       codes.Code
	message    string
	details    []restapi.FieldDetail
	header     http.Header
}

// newAPIError returns an error answer with the standard HTTP status for c.
func newAPIError(c codes.Code, message string) apiError {
	return apiError{httpStatus: runtime.HTTPStatusFromCode(c), code: c, message: message, header: http.Header{}}
}

// write sends e in the error shape. X-Request-Id is already set by
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
	details := e.details
	if details == nil {
		details = []restapi.FieldDetail{}
	}
	w.WriteHeader(e.httpStatus)
	_ = json.NewEncoder(w).Encode(restapi.ErrorBody{Error: restapi.Error{
		Code:      e.httpStatus,
		Status:    code.Code(e.code).String(),
		Message:   e.message,
		RequestID: id,
		Details:   details,
	}})
}

// writeTooLarge answers 413 for a body over max bytes.
func writeTooLarge(w http.ResponseWriter, r *http.Request, max int64) {
	e := newAPIError(codes.ResourceExhausted, fmt.Sprintf("the request body exceeds %d bytes", max))
	e.httpStatus = http.StatusRequestEntityTooLarge
	e.write(w, r)
}

// errorHandler writes every gRPC and gateway error in the error shape.
type errorHandler struct {
	logger       *slog.Logger
	maxBodyBytes int64
}

// handle is the runtime.ErrorHandlerFunc for the gateway's mux.
func (h *errorHandler) handle(ctx context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, r *http.Request, err error) {
	if stateFrom(r.Context()).bodyTooLarge {
		writeTooLarge(w, r, h.maxBodyBytes)
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

// fromError maps err, normally a gRPC status, to an error answer.
func (h *errorHandler) fromError(r *http.Request, err error) apiError {
	httpStatus := 0
	var hse *runtime.HTTPStatusError
	if errors.As(err, &hse) {
		httpStatus, err = hse.HTTPStatus, hse.Err
	}
	st := status.Convert(err)
	e := newAPIError(st.Code(), st.Message())
	if httpStatus != 0 {
		e.httpStatus = httpStatus
	}

	retryAfter := time.Duration(0)
	for _, d := range st.Details() {
		switch d := d.(type) {
		case *errdetails.BadRequest:
			for _, v := range d.GetFieldViolations() {
				e.details = append(e.details, restapi.FieldDetail{Field: v.GetField(), Description: v.GetDescription()})
			}
		case *errdetails.PreconditionFailure:
			for _, v := range d.GetViolations() {
				if st.Code() == codes.FailedPrecondition && v.GetType() == grpcfault.PreconditionETag {
					e.httpStatus = http.StatusPreconditionFailed
				}
			}
		case *errdetails.RetryInfo:
			retryAfter = d.GetRetryDelay().AsDuration()
		}
	}

	switch st.Code() {
	case codes.InvalidArgument:
		if de := stateFrom(r.Context()).decodeErr; de != nil {
			e.message = de.message
			if de.field != "" {
				e.details = append(e.details, restapi.FieldDetail{Field: de.field, Description: de.description})
			}
		}
	case codes.Unauthenticated:
		e.header.Set("WWW-Authenticate", challenge(r.URL.Path))
	case codes.ResourceExhausted:
		// The services send RetryInfo with a rate limit (429) and none
		// with a size limit, which is 413 like the gateway's own.
		if retryAfter <= 0 {
			e.httpStatus = http.StatusRequestEntityTooLarge
			break
		}
		e.header.Set("Retry-After", strconv.Itoa(int(math.Ceil(retryAfter.Seconds()))))
	case codes.Unavailable:
		if retryAfter <= 0 {
			// No RetryInfo: the failure is the connection to the
			// backend, whose text names addresses.
			retryAfter = defaultRetryAfter
			h.logger.Warn("backend unavailable", "request_id", requestIDFrom(r.Context()), "error", st.Message())
			e.message = msgUnavailable
		}
		e.header.Set("Retry-After", strconv.Itoa(int(math.Ceil(retryAfter.Seconds()))))
	case codes.DeadlineExceeded:
		e.message = msgDeadline
	case codes.Canceled:
		e.message = msgCanceled
	case codes.Internal, codes.Unknown, codes.DataLoss:
		h.logger.Error("request failed", "request_id", requestIDFrom(r.Context()),
			"code", code.Code(st.Code()).String(), "error", st.Message())
		e.message = msgInternal
		e.details = nil
	}
	return e
}

// routingError is the runtime.RoutingErrorHandlerFunc: no route (404), a
// route without this method (405) or a malformed path (400), in the error
// shape.
func routingError(_ context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, r *http.Request, httpStatus int) {
	var e apiError
	switch httpStatus {
	case http.StatusNotFound:
		e = newAPIError(codes.NotFound, fmt.Sprintf("no route matches %s %s", r.Method, r.URL.Path))
	case http.StatusMethodNotAllowed:
		e = newAPIError(codes.Unimplemented, fmt.Sprintf("method %s is not allowed on %s", r.Method, r.URL.Path))
	case http.StatusBadRequest:
		e = newAPIError(codes.InvalidArgument, "the request path is malformed")
	default:
		e = newAPIError(codes.Internal, msgInternal)
	}
	e.httpStatus = httpStatus
	e.write(w, r)
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
