// Package apitime is the one way the API writes a time: the protos carry
// times as strings in this format, so gRPC callers and the REST answers see
// the same text.
package apitime

import "time"

// layout is RFC 3339 in UTC with milliseconds, such as
// 2026-11-22T07:46:00.000Z.
const layout = "2006-01-02T15:04:05.000Z"

// Format writes t, in UTC, in the API's format.
func Format(t time.Time) string { return t.UTC().Format(layout) }

// Parse reads a time written by Format.
func Parse(s string) (time.Time, error) { return time.Parse(layout, s) }
