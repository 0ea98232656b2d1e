// Package ratelimit keeps the request limits every replica shares: a
// generic cell rate algorithm per key pair (scripts.go) and counters of failed authentications per client address, both in Redis.
//
// When Redis cannot be reached, or refuses the count (out of memory under
// noeviction, a read-only replica: any error reply), both fall back to
// counters kept by this replica alone, with the same parameters: limits
// stay in force, but each replica counts for itself until Redis answers
// again (checked once a second). A request is never refused or delayed
// because Redis is down or full.
package ratelimit

import (
	"context"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/liveproctor/workspaces/pkg/fault"
)

// Metadata keys of the IETF rate-limit fields
// (draft-ietf-httpapi-ratelimit-headers); the gateway turns them into the
// RateLimit-Policy and RateLimit headers.
const (
	PolicyHeader = "ratelimit-policy"
	StateHeader  = "ratelimit"
)

// Decision is the outcome of one check against one policy.
type Decision struct {
	// Policy names the policy in the rate-limit fields.
	Policy string
	// Quota requests may be sent at once, and Window is how long the
	// quota takes to come back in full.
	Quota  int
	Window time.Duration
	// Allowed is false when the request is refused.
	Allowed   bool
	Remaining int
	// RetryAfter is how long to wait before a refused request may succeed.
	RetryAfter time.Duration
	// ResetAfter is how long until the full quota is available again.
	ResetAfter time.Duration
}

// Off reports a decision of a limit that is turned off: it carries no
// fields.
func (d Decision) Off() bool { return d.Quota == 0 }

// PolicyField is the RateLimit-Policy value: "name";q=quota;w=window.
// (Both fields are built with strconv rather than fmt: they are sent on
// every limited call.)
func (d Decision) PolicyField() string {
	return d.field(";q=", d.Quota, ";w=", seconds(d.Window))
}

// StateField is the RateLimit value: "name";r=remaining;t=seconds until
// the quota is back (until a request may pass, when refused).
func (d Decision) StateField() string {
	t := d.ResetAfter
	if !d.Allowed {
		t = d.RetryAfter
	}
	return d.field(";r=", d.Remaining, ";t=", seconds(t))
}

// field is "policy" followed by two named integers.
func (d Decision) field(name1 string, v1 int, name2 string, v2 int) string {
	b := make([]byte, 0, len(d.Policy)+32)
	b = strconv.AppendQuote(b, d.Policy)
	b = strconv.AppendInt(append(b, name1...), int64(v1), 10)
	b = strconv.AppendInt(append(b, name2...), int64(v2), 10)
	return string(b)
}

// RetryAfterSeconds is the Retry-After value of a refusal, at least 1.
func (d Decision) RetryAfterSeconds() int { return max(1, seconds(d.RetryAfter)) }

// SetHeaders sends the decision's rate-limit fields as the call's header
// metadata, for the gateway to answer with; a decision of a limit turned off
// sends nothing.
func SetHeaders(ctx context.Context, d Decision) {
	if d.Off() {
		return
	}
	_ = grpc.SetHeader(ctx, metadata.Pairs(PolicyHeader, d.PolicyField(), StateHeader, d.StateField()))
}

// Refusal is the error of a refused decision: Throttled, with the delay the
// caller should wait.
func Refusal(d Decision, format string, args ...any) error {
	e := fault.New(fault.Throttled, format, args...)
	e.RetryAfter = time.Duration(d.RetryAfterSeconds()) * time.Second
	return e
}

func seconds(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return int(math.Ceil(d.Seconds()))
}

// fallback tracks whether Redis is to be skipped for now: after a failure
// the replica counts on its own for retryEvery, then tries Redis again.
type fallback struct {
	logger     *slog.Logger
	what       string
	now        func() time.Time
	retryEvery time.Duration
	until      atomic.Int64 // unix nanoseconds; 0: Redis in use
	mu         sync.Mutex
}

// useRedis reports whether to try Redis for this request.
func (f *fallback) useRedis() bool {
	u := f.until.Load()
	return u == 0 || f.now().UnixNano() >= u
}

// failed records that Redis did not answer, or answered with an error.
func (f *fallback) failed(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.until.Load() == 0 {
		f.logger.Warn(f.what+": Redis unreachable or refusing writes; this replica counts on its own until it answers", "error", err.Error())
	}
	f.until.Store(f.now().Add(f.retryEvery).UnixNano())
}

// succeeded records that Redis answered.
func (f *fallback) succeeded() {
	if f.until.Load() == 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.until.Swap(0) != 0 {
		f.logger.Info(f.what + ": Redis answers again; counting there")
	}
}
