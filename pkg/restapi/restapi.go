// Package restapi holds what the API's messages share across routes and
// services: the one way times are written. The error body every failed
// request gets is the proto message rest.v1.ErrorBody (pkg/gen/rest/v1).
package restapi

import "time"

// TimeLayout is how every time in the API is written: RFC 3339, UTC, with
// milliseconds, such as 2026-11-22T07:46:00.000Z.
const TimeLayout = "2006-01-02T15:04:05.000Z"

// FormatTime writes t in TimeLayout.
func FormatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

// ParseTime reads a time written by FormatTime.
func ParseTime(s string) (time.Time, error) { return time.Parse(TimeLayout, s) }
