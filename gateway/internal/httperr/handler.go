package httperr

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"unicode/utf8"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/genproto/googleapis/rpc/code"
	"google.golang.org/grpc/codes"

	"github.com/liveproctor/workspaces/gateway/internal/reqstate"
	"github.com/liveproctor/workspaces/gateway/internal/sdk"
	"github.com/liveproctor/workspaces/pkg/basicauth"
	"github.com/liveproctor/workspaces/pkg/fault"
	restv1 "github.com/liveproctor/workspaces/pkg/gen/rest/v1"
)

// Handler writes every gRPC and gateway error in the error shape.
type Handler struct {
	logger       *slog.Logger
	maxBodyBytes int64
	// header names the HTTP header a backend's header metadata key is
	// answered as, if any (the etag, the rate-limit state).
	header func(key string) (string, bool)
}

// NewHandler returns the error handler of a gateway whose bodies are
// capped at maxBodyBytes and which answers the header metadata that header
// names.
func NewHandler(logger *slog.Logger, maxBodyBytes int64, header func(key string) (string, bool)) *Handler {
	return &Handler{logger: logger, maxBodyBytes: maxBodyBytes, header: header}
}

// Handle is the runtime.ErrorHandlerFunc for the gateway's mux.
func (h *Handler) Handle(ctx context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, r *http.Request, err error) {
	switch state := reqstate.From(r.Context()); {
	case state.BodyTooLarge:
		WriteTooLarge(w, r, h.maxBodyBytes)
		return
	case state.BodyTimedOut:
		// Reading the body failed at the request deadline; what the
		// read returned names addresses and is no business of the caller.
		Write(w, r, fault.RequestTimeout, MsgBodyTimeout)
		return
	}
	a := h.fromError(r, err)
	if md, ok := runtime.ServerMetadataFromContext(ctx); ok {
		for k, vs := range md.HeaderMD {
			if name, ok := h.header(k); ok {
				for _, v := range vs {
					a.Header.Add(name, v)
				}
			}
		}
	}
	a.Write(w, r)
}

// WriteError writes err, normally a gRPC status, in the error shape.
func (h *Handler) WriteError(w http.ResponseWriter, r *http.Request, err error) {
	h.fromError(r, err).Write(w, r)
}

// fieldError is a refused body or query string (reqstate.State.DecodeErr)
// that blames a field.
type fieldError interface {
	Violation() (field, description string)
}

// fromError maps err to an error answer: the kind's status and headers,
// and the service's message where it was written for the caller.
func (h *Handler) fromError(r *http.Request, err error) Answer {
	var hse *runtime.HTTPStatusError
	if errors.As(err, &hse) {
		return routeError(r, hse.HTTPStatus)
	}
	f := Read(err)
	st, id := f.Status, reqstate.ID(r.Context())
	a := New(f.Kind, st.Message(), challenge(r.URL.Path), f.RetryAfter)
	a.Code, a.Details = st.Code(), f.Violations
	decodeErr := reqstate.From(r.Context()).DecodeErr
	switch {
	case st.Code() == codes.Canceled:
		// The caller has gone; no kind fits and no one reads the answer.
		a.Status = runtime.HTTPStatusFromCode(codes.Canceled)
		a.Message = msgCanceled
	case f.Kind == fault.Invalid && decodeErr != nil:
		a.Message = decodeErr.Error()
		if fe, ok := decodeErr.(fieldError); ok {
			if field, description := fe.Violation(); field != "" {
				a.Details = append(a.Details, &restv1.FieldViolation{Field: field, Description: description})
			}
		}
	case f.Kind == fault.Unavailable && !f.Named:
		// Not a service's answer: the connection to the backend failed,
		// and the text names addresses.
		h.logger.Warn("backend unavailable", "request_id", id, "error", st.Message())
		a.Message = msgUnavailable
	case f.Kind == fault.DeadlineExceeded && !f.Named:
		a.Message = msgDeadline
	case f.Kind == fault.Internal:
		h.logger.Error("request failed", "request_id", id, "code", code.Code(st.Code()).String(), "error", st.Message())
		a.Message, a.Details = MsgInternal, nil
	case st.Code() == codes.InvalidArgument && !f.Named:
		// Not a service's answer but grpc-gateway's refusal, whose text
		// is a Go error (a form that failed to parse, a body that could
		// not be read) and may quote the request at length.
		h.logger.Info("request refused", "request_id", id, "error", st.Message())
		a.Message = msgMalformed
	}
	return a
}

// Routing is the runtime.RoutingErrorHandlerFunc.
func Routing(_ context.Context, _ *runtime.ServeMux, _ runtime.Marshaler, w http.ResponseWriter, r *http.Request, httpStatus int) {
	routeError(r, httpStatus).Write(w, r)
}

// routeError is the answer when grpc-gateway finds no handler: no route
// (404), a route without this method (405) or a malformed path (400). A
// path that is not UTF-8 is refused as such, whatever it would match. The
// method and path are the caller's and quoted bounded.
func routeError(r *http.Request, httpStatus int) Answer {
	if !utf8.ValidString(r.URL.Path) {
		return New(fault.Invalid, msgBadPath, "", 0)
	}
	switch httpStatus {
	case http.StatusNotFound:
		return New(fault.NotFound, fmt.Sprintf("no route matches %s %s", Echo(r.Method), Echo(r.URL.Path)), "", 0)
	case http.StatusMethodNotAllowed:
		return New(fault.MethodNotAllowed, fmt.Sprintf("method %s is not allowed on %s", Echo(r.Method), Echo(r.URL.Path)), "", 0)
	case http.StatusBadRequest:
		return New(fault.Invalid, "the request path is malformed", "", 0)
	}
	return New(fault.Internal, MsgInternal, "", 0)
}

// bearerChallenge answers the session route, which takes the SDK token.
const bearerChallenge = `Bearer realm="workspaces"`

// challenge is the WWW-Authenticate value of a 401 on path: Bearer on the
// SDK's session route, Basic everywhere else.
func challenge(path string) string {
	if path == sdk.SessionPath {
		return bearerChallenge
	}
	return basicauth.Challenge
}
