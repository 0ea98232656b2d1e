// Package httperr renders the gateway's error answers. One table maps a
// fault kind, or the gRPC status a service answered with, to the HTTP
// status, the message a caller may read and the headers the kind calls for
// (WWW-Authenticate, Retry-After); the JSON error shape of the API and the
// LTI pages are both written from it.
package httperr

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"google.golang.org/genproto/googleapis/rpc/code"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/liveproctor/workspaces/gateway/internal/reqstate"
	"github.com/liveproctor/workspaces/pkg/fault"
	restv1 "github.com/liveproctor/workspaces/pkg/gen/rest/v1"
	"github.com/liveproctor/workspaces/pkg/grpcfault"
)

// Messages that replace texts which could reveal internals.
const (
	MsgInternal    = "internal error"
	MsgBodyTimeout = "the request body did not arrive within the request deadline"
	msgUnavailable = "the service is temporarily unavailable; retry later"
	msgDeadline    = "the request deadline passed"
	msgCanceled    = "the request was canceled"
	msgMalformed   = "the request is malformed"
	msgBadPath     = "the request path is not valid UTF-8"
)

// defaultRetryAfter is suggested when a 429 or 503 carries no RetryInfo.
const defaultRetryAfter = time.Second

// errorJSON renders rest.v1.ErrorBody, the documented error shape. Unset
// fields are written too, so details is always an array.
var errorJSON = protojson.MarshalOptions{EmitUnpopulated: true}

// Answer is an error answer before it is written: the HTTP status, the
// gRPC code it stands for, a message safe to show, field details and the
// headers its kind calls for.
type Answer struct {
	Status  int
	Code    codes.Code
	Message string
	Details []*restv1.FieldViolation
	Header  http.Header
}

// New returns the answer of kind with message: the HTTP status and gRPC
// code of the kind's row in the one table (grpcfault.SpecOf), and the
// headers the kind calls for: WWW-Authenticate with challenge on a 401
// (none when challenge is ""), Retry-After on a 429 or 503 (retryAfter, or
// a second when the answer suggests no delay).
func New(kind fault.Kind, message, challenge string, retryAfter time.Duration) Answer {
	spec := grpcfault.SpecOf(kind)
	a := Answer{Status: spec.HTTPStatus, Code: spec.Code, Message: message, Header: http.Header{}}
	switch kind {
	case fault.Unauthenticated:
		if challenge != "" {
			a.Header.Set("WWW-Authenticate", challenge)
		}
	case fault.Throttled, fault.Unavailable:
		if retryAfter <= 0 {
			retryAfter = defaultRetryAfter
		}
		a.Header.Set("Retry-After", strconv.Itoa(int(math.Ceil(retryAfter.Seconds()))))
	}
	return a
}

// Write writes an error answer of kind with message and the request's
// fields to blame, with the headers the kind calls for.
func Write(w http.ResponseWriter, r *http.Request, kind fault.Kind, message string, details ...fault.FieldViolation) {
	a := New(kind, message, challenge(r.URL.Path), 0)
	for _, d := range details {
		a.Details = append(a.Details, &restv1.FieldViolation{Field: d.Field, Description: d.Description})
	}
	a.Write(w, r)
}

// WriteTooLarge answers 413 for a body over max bytes.
func WriteTooLarge(w http.ResponseWriter, r *http.Request, max int64) {
	Write(w, r, fault.TooLarge, fmt.Sprintf("the request body exceeds %d bytes", max))
}

// Write sends a as a rest.v1.ErrorBody. X-Request-Id is already set by
// reqstate.WithID; it is set again in case a handler cleared the headers.
func (a Answer) Write(w http.ResponseWriter, r *http.Request) {
	id := reqstate.ID(r.Context())
	h := w.Header()
	for k, vs := range a.Header {
		h[k] = vs
	}
	if id != "" {
		h.Set(reqstate.IDHeader, id)
	}
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Del("Content-Length")
	// protojson refuses invalid UTF-8, which a message quoting the path
	// or the body may hold.
	details := make([]*restv1.FieldViolation, len(a.Details))
	for i, d := range a.Details {
		details[i] = &restv1.FieldViolation{Field: validUTF8(d.GetField()), Description: validUTF8(d.GetDescription())}
	}
	body, err := errorJSON.Marshal(&restv1.ErrorBody{Error: &restv1.Error{
		Code:      int32(a.Status),
		Status:    code.Code(a.Code).String(),
		Message:   validUTF8(a.Message),
		RequestId: id,
		Details:   details,
	}})
	w.WriteHeader(a.Status)
	if err == nil {
		_, _ = w.Write(body)
	}
}

func validUTF8(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }
