package webhook

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// schedule is the wait after each failed attempt, as the specification
// suggests: attempt n failed, attempt n+1 is due schedule[n-1] later. The
// eighth attempt is the last, about 27.5 hours after the first.
var schedule = [...]time.Duration{
	5 * time.Second,
	5 * time.Minute,
	30 * time.Minute,
	2 * time.Hour,
	5 * time.Hour,
	10 * time.Hour,
	10 * time.Hour,
}

// MaxAttempts is how many attempts a message gets.
const MaxAttempts = len(schedule) + 1

// jitter is how far a wait may stray from the schedule's, either way, so
// that messages that failed together (a receiver's outage) are not all
// retried in the same second.
const jitter = 0.1

// MaxRetryAfter bounds the wait a receiver may ask for with Retry-After:
// the schedule's longest step. A receiver asking for longer is retried
// after that, and the schedule still ends after MaxAttempts, so that no
// answer can hold a message for days.
const MaxRetryAfter = 10 * time.Hour

// Backoff returns the wait after attempt (counted from 1) failed, within
// ±10% of the schedule's step as random (uniform in [0, 1), such as
// math/rand/v2's Float64) has it; false when that attempt was the last.
func Backoff(attempt int, random func() float64) (time.Duration, bool) {
	attempt = max(attempt, 1)
	if attempt > len(schedule) {
		return 0, false
	}
	step := schedule[attempt-1]
	return time.Duration(float64(step) * (1 + jitter*(2*random()-1))), true
}

// retryAfterStatuses are the statuses whose Retry-After is honoured: the
// receiver says it is overloaded or limiting us, and when to come back.
var retryAfterStatuses = map[int]bool{
	http.StatusTooManyRequests:    true,
	http.StatusBadGateway:         true,
	http.StatusServiceUnavailable: true,
	http.StatusGatewayTimeout:     true,
}

// parseRetryAfter reads a Retry-After header's value, delay-seconds or an
// HTTP-date (RFC 9110, section 10.2.3), as a wait from now within
// [0, MaxRetryAfter]; false when it is neither.
func parseRetryAfter(value string, now time.Time) (time.Duration, bool) {
	value = strings.TrimSpace(value)
	if value != "" && strings.Trim(value, "0123456789") == "" {
		seconds, err := strconv.ParseInt(value, 10, 64)
		if err != nil || seconds > int64(MaxRetryAfter/time.Second) { // only overflow fails here
			return MaxRetryAfter, true
		}
		return time.Duration(seconds) * time.Second, true
	}
	at, err := http.ParseTime(value)
	if err != nil {
		return 0, false
	}
	return min(max(at.Sub(now), 0), MaxRetryAfter), true
}
