// Package fault is the closed set of error kinds both services speak.
//
// A domain or application error is a *fault.Error with one Kind; adapters
// turn driver errors into one, ports turn it into a gRPC status with one
// table (package grpcfault), and the gateway renders that status as JSON.
// Anything that is not a *fault.Error is Internal and its text never reaches
// a caller.
package fault

import (
	"errors"
	"fmt"
	"time"
)

// Kind classifies an error by what the caller should do about it.
type Kind uint8

const (
	// Internal is a bug or an unexpected failure; its message stays private.
	Internal Kind = iota
	// Invalid means the request itself is wrong (HTTP 400).
	Invalid
	// Unauthenticated means missing or wrong credentials (HTTP 401).
	Unauthenticated
	// PermissionDenied means the caller is known but may not do this (HTTP 403).
	PermissionDenied
	// NotFound means the resource does not exist or the caller may not see it (HTTP 404).
	NotFound
	// Conflict means the request clashes with the current state (HTTP 409).
	Conflict
	// PreconditionFailed means an If-Match / etag no longer matches (HTTP 412).
	PreconditionFailed
	// TooLarge means a request exceeds a size limit (HTTP 413).
	TooLarge
	// Throttled means the caller is over its rate limit (HTTP 429).
	Throttled
	// Unavailable means a dependency is down; retrying later may work (HTTP 503).
	Unavailable
	// Aborted means concurrent changes kept the request from applying, after
	// retries; the caller may read again and retry (HTTP 409).
	Aborted
	// UnsupportedMediaType means a request body is not JSON (HTTP 415).
	UnsupportedMediaType
	// RequestTimeout means the request body did not arrive in time (HTTP 408).
	RequestTimeout
	// DeadlineExceeded means the request's deadline passed (HTTP 504).
	DeadlineExceeded
	// MethodNotAllowed means the path does not take the method (HTTP 405).
	MethodNotAllowed
	// FailedPrecondition means the resource is not in a state that allows
	// the change, such as removing a workspace's last working key pair
	// (HTTP 409). Unlike PreconditionFailed, no etag is involved: the
	// state must change first.
	FailedPrecondition
	// BadGateway means a platform the request made the service call (an
	// LMS, during an LTI Dynamic Registration) could not be reached or
	// answered something unusable (HTTP 502).
	BadGateway
)

var kindNames = [...]string{
	Internal:             "internal",
	Invalid:              "invalid",
	Unauthenticated:      "unauthenticated",
	PermissionDenied:     "permission denied",
	NotFound:             "not found",
	Conflict:             "conflict",
	PreconditionFailed:   "precondition failed",
	TooLarge:             "too large",
	Throttled:            "throttled",
	Unavailable:          "unavailable",
	Aborted:              "aborted",
	UnsupportedMediaType: "unsupported media type",
	RequestTimeout:       "request timeout",
	DeadlineExceeded:     "deadline exceeded",
	MethodNotAllowed:     "method not allowed",
	FailedPrecondition:   "failed precondition",
	BadGateway:           "bad gateway",
}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// FieldViolation names one field of a request and what is wrong with it.
// Field uses the JSON names of the REST interface, dotted for nesting
// (address.country, products[2].bank.id).
type FieldViolation struct {
	Field       string
	Description string
}

// Error is an error a caller may see.
type Error struct {
	Kind    Kind
	Message string
	// Fields lists the offending fields of an Invalid request.
	Fields []FieldViolation
	// RetryAfter is how long a Throttled or Unavailable caller should wait
	// before retrying; zero means the usual short delay.
	RetryAfter time.Duration
	// Cause is kept for logs; it is never shown to callers.
	Cause error
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return e.Message + ": " + e.Cause.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Cause }

// Is makes errors.Is(err, target) true when target is a *Error of the same
// Kind and Message, so packages can declare sentinel errors.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Kind == e.Kind && t.Message == e.Message
}

// New returns an error of the given kind with a message for the caller.
func New(kind Kind, format string, args ...any) *Error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an error of the given kind whose cause is err.
func Wrap(kind Kind, err error, message string) *Error {
	return &Error{Kind: kind, Message: message, Cause: err}
}

// InvalidField returns an Invalid error naming one field.
func InvalidField(field, description string) *Error {
	return &Error{
		Kind:    Invalid,
		Message: field + ": " + description,
		Fields:  []FieldViolation{{Field: field, Description: description}},
	}
}

// InvalidFields returns an Invalid error naming every violation, or nil when
// there is none.
func InvalidFields(violations []FieldViolation) error {
	if len(violations) == 0 {
		return nil
	}
	msg := violations[0].Field + ": " + violations[0].Description
	if n := len(violations) - 1; n > 0 {
		msg += fmt.Sprintf(" (and %d more)", n)
	}
	return &Error{Kind: Invalid, Message: msg, Fields: violations}
}

// KindOf returns the kind of err, or Internal when err is not a *Error.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Internal
}

// As returns the *Error in err's chain, if any.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}
