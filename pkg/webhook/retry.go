package webhook

import (
	"fmt"
	"net/http"
	"time"
)

// Schedule is the wait after each failed attempt: attempt n failed,
// attempt n+1 is due Schedule[n-1] later, within ±10%. A message gets
// Attempts of them.
type Schedule []time.Duration

// DefaultSchedule is the one the specification suggests. The eighth
// attempt is the last, about 27.5 hours after the first.
var DefaultSchedule = Schedule{
	5 * time.Second,
	5 * time.Minute,
	30 * time.Minute,
	2 * time.Hour,
	5 * time.Hour,
	10 * time.Hour,
	10 * time.Hour,
}

// The bounds of a schedule (Check): a step no shorter than a second, so
// that a failing receiver is not called in a loop, and no longer than the
// longest Retry-After honoured; at most MaxRetries steps, so that a
// message is given up on within about a week.
const (
	MinRetryWait = time.Second
	MaxRetries   = 16
)

// Attempts is how many attempts a message gets.
func (s Schedule) Attempts() int { return len(s) + 1 }

// Check reports a schedule out of bounds: no step, more than MaxRetries,
// or a step shorter than MinRetryWait or longer than MaxRetryAfter.
func (s Schedule) Check() error {
	if len(s) == 0 || len(s) > MaxRetries {
		return fmt.Errorf("must have 1 to %d steps, has %d", MaxRetries, len(s))
	}
	for _, step := range s {
		if step < MinRetryWait || step > MaxRetryAfter {
			return fmt.Errorf("each step must be between %s and %s, one is %s", MinRetryWait, MaxRetryAfter, step)
		}
	}
	return nil
}

// jitter is how far a wait may stray from the schedule's, either way, so
// that messages that failed together (a receiver's outage) are not all
// retried in the same second.
const jitter = 0.1

// MaxRetryAfter bounds the wait a receiver may ask for with Retry-After:
// the default schedule's longest step. A receiver asking for longer is
// retried after that, and the schedule still ends after its Attempts, so
// that no answer can hold a message for days.
const MaxRetryAfter = 10 * time.Hour

// Backoff returns the wait after attempt (counted from 1) failed, within
// ±10% of the schedule's step as random (uniform in [0, 1), such as
// math/rand/v2's Float64) has it; false when that attempt was the last.
func (s Schedule) Backoff(attempt int, random func() float64) (time.Duration, bool) {
	attempt = max(attempt, 1)
	if attempt > len(s) {
		return 0, false
	}
	step := s[attempt-1]
	return time.Duration(float64(step) * (1 + jitter*(2*random()-1))), true
}

// NextAttempt returns the wait before the attempt after attempt (counted
// from 1), which ended with o; false when there is none: o was Delivered
// or Gone, or attempt was the last. The wait is the schedule's, or the
// receiver's Retry-After when that is longer.
func (s Schedule) NextAttempt(o Outcome, attempt int, random func() float64) (time.Duration, bool) {
	if o.Verdict != Failed {
		return 0, false
	}
	wait, ok := s.Backoff(attempt, random)
	if !ok {
		return 0, false
	}
	return max(wait, o.RetryAfter), true
}

// retryAfterStatuses are the statuses whose Retry-After is honoured: the
// receiver says it is overloaded or limiting us, and when to come back.
var retryAfterStatuses = map[int]bool{
	http.StatusTooManyRequests:    true,
	http.StatusBadGateway:         true,
	http.StatusServiceUnavailable: true,
	http.StatusGatewayTimeout:     true,
}
