// Package restapi holds the JSON shapes the REST interface shares across
// routes: today, the error body of every failed request. The gateway writes
// it; Go clients and the black-box tests read it with the same types.
package restapi

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
