package outbound

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ParseRetryAfter reads the value of a Retry-After header an outbound
// call's answer carried, delay-seconds or an HTTP-date (RFC 9110, section
// 10.2.3), as a wait from now within [0, most]; false when it is neither.
// What a caller does without one (its own schedule, a default) is its own.
//
// Delay-seconds are digits only: a sign or a fraction is not one. Digits
// too many to count are a very long wait, hence most.
func ParseRetryAfter(value string, now time.Time, most time.Duration) (time.Duration, bool) {
	value = strings.TrimSpace(value)
	if value != "" && strings.Trim(value, "0123456789") == "" {
		seconds, err := strconv.ParseInt(value, 10, 64)
		if err != nil || seconds > int64(most/time.Second) { // only overflow fails here
			return most, true
		}
		return time.Duration(seconds) * time.Second, true
	}
	at, err := http.ParseTime(value)
	if err != nil {
		return 0, false
	}
	return min(max(at.Sub(now), 0), most), true
}

// SuggestedWait is the wait to pass on to one's own callers when another
// party's server throttles or fails during their call: its Retry-After
// value (at most most, at least a second), or fallback when it says none.
// Passed on as a fault's RetryAfter, a wait also keeps gRPC clients from
// asking the failing server again at once (pkg/grpcmw).
func SuggestedWait(value string, now time.Time, most, fallback time.Duration) time.Duration {
	wait, ok := ParseRetryAfter(value, now, most)
	if !ok {
		return fallback
	}
	return max(wait, time.Second)
}
