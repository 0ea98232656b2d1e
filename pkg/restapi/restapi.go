// Package restapi holds what the API's messages share across routes and
// services: the error body of every failed request (the gateway writes it;
// Go clients and the black-box tests read it with the same types) and the
// one way times are written.
package restapi

import "time"

// TimeLayout is how every time in the API is written: RFC 3339, UTC, with
// milliseconds, such as 2026-11-22T07:46:00.000Z.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// FormatTime writes t in TimeLayout.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

// ParseTime reads a time written by FormatTime.
func ParseTime(s string) (time.Time, error) { return time.Parse(TimeLayout, s) }

// ErrorBody is the JSON of every error answer:
//
//	{"error":{"code":400,"status":"INVALID_ARGUMENT","message":"…",
//	  "requestId":"…","details":[{"field":"…","description":"…"}]}}
type ErrorBody struct {
	Error Error `json:"error"`
}

// Error describes what went wrong.
type Error struct {
	// Code is the HTTP status.
	Code int `json:"code"`
	// Status is the gRPC code's name, such as INVALID_ARGUMENT.
	Status string `json:"status"`
	// Message is safe to show; it never holds secrets.
	Message string `json:"message"`
	// RequestID equals the response's X-Request-Id header.
	RequestID string `json:"requestId"`
	// Details names the fields of the request that are wrong; never null.
	Details []FieldDetail `json:"details"`
}

// FieldDetail names a field of the request and what is wrong with it.
type FieldDetail struct {
	Field       string `json:"field"`
	Description string `json:"description"`
}
