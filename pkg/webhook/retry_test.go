package webhook_test

import (
	"math/rand/v2"
	"net/http"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/webhook"
)

func fixed(r float64) func() float64 { return func() float64 { return r } }

// The schedule of the specification: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h,
// 10 h, then no more (about a day in all), each step within ±10%.
func TestBackoffFollowsTheSchedule(t *testing.T) {
	steps := []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour, 10 * time.Hour}
	var total time.Duration
	for i, step := range steps {
		attempt := i + 1
		if got, ok := webhook.DefaultSchedule.Backoff(attempt, fixed(0.5)); !ok || got != step {
			t.Errorf("Backoff(%d) at the middle = %v, %v; want %v", attempt, got, ok, step)
		}
		if got, _ := webhook.DefaultSchedule.Backoff(attempt, fixed(0)); got != step*9/10 {
			t.Errorf("Backoff(%d) at the low end = %v, want %v", attempt, got, step*9/10)
		}
		total += step
	}
	if _, ok := webhook.DefaultSchedule.Backoff(webhook.DefaultSchedule.Attempts(), fixed(0.5)); ok || webhook.DefaultSchedule.Attempts() != 8 {
		t.Errorf("attempt %d is the last, but Backoff schedules another", webhook.DefaultSchedule.Attempts())
	}
	if total < 24*time.Hour || total > 30*time.Hour {
		t.Errorf("the schedule spans %v, want about a day", total)
	}

	random := rand.New(rand.NewPCG(1, 2)).Float64
	for range 1000 {
		for i, step := range steps {
			got, _ := webhook.DefaultSchedule.Backoff(i+1, random)
			if got < step*9/10 || got > step*11/10 {
				t.Fatalf("Backoff(%d) = %v, beyond ±10%% of %v", i+1, got, step)
			}
		}
	}
}

func TestClassify(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	inAnHour := now.Add(time.Hour).Format(http.TimeFormat)
	for _, c := range []struct {
		status     int
		retryAfter string
		verdict    webhook.Verdict
		wait       time.Duration
	}{
		{200, "", webhook.Delivered, 0},
		{204, "", webhook.Delivered, 0},
		{299, "", webhook.Delivered, 0},
		{410, "", webhook.Gone, 0},
		{301, "", webhook.Failed, 0}, // redirects are not followed
		{302, "", webhook.Failed, 0},
		{400, "", webhook.Failed, 0},
		{404, "", webhook.Failed, 0},
		{500, "60", webhook.Failed, 0}, // Retry-After only counts where it says when to come back
		{429, "", webhook.Failed, 0},
		{429, "120", webhook.Failed, 2 * time.Minute},
		{502, "7", webhook.Failed, 7 * time.Second},
		{503, inAnHour, webhook.Failed, time.Hour},
		{504, "999999", webhook.Failed, webhook.MaxRetryAfter},
		{503, "soon", webhook.Failed, 0},
	} {
		h := http.Header{}
		if c.retryAfter != "" {
			h.Set("Retry-After", c.retryAfter)
		}
		verdict, wait := webhook.Classify(c.status, h, now)
		if verdict != c.verdict || wait != c.wait {
			t.Errorf("%d with Retry-After %q: %v, %v; want %v, %v", c.status, c.retryAfter, verdict, wait, c.verdict, c.wait)
		}
	}
}

func TestNextAttempt(t *testing.T) {
	mid := fixed(0.5)
	for _, c := range []struct {
		name    string
		outcome webhook.Outcome
		attempt int
		wait    time.Duration
		ok      bool
	}{
		{"delivered", webhook.Outcome{Verdict: webhook.Delivered, Status: 200}, 1, 0, false},
		{"gone", webhook.Outcome{Verdict: webhook.Gone, Status: 410}, 1, 0, false},
		{"failed, on schedule", webhook.Outcome{Verdict: webhook.Failed, Status: 500}, 2, 5 * time.Minute, true},
		{"Retry-After longer than the step", webhook.Outcome{Verdict: webhook.Failed, Status: 503, RetryAfter: time.Hour}, 1, time.Hour, true},
		{"Retry-After shorter than the step", webhook.Outcome{Verdict: webhook.Failed, Status: 429, RetryAfter: time.Second}, 3, 30 * time.Minute, true},
		{"the last attempt, Retry-After or not", webhook.Outcome{Verdict: webhook.Failed, Status: 503, RetryAfter: time.Hour}, webhook.DefaultSchedule.Attempts(), 0, false},
	} {
		wait, ok := webhook.DefaultSchedule.NextAttempt(c.outcome, c.attempt, mid)
		if wait != c.wait || ok != c.ok {
			t.Errorf("%s: NextAttempt(%d) = %v, %v; want %v, %v", c.name, c.attempt, wait, ok, c.wait, c.ok)
		}
	}
}

// A schedule of one's own (WEBHOOK_RETRY_SCHEDULE) is followed step by
// step, and held within bounds.
func TestScheduleOfOnesOwn(t *testing.T) {
	s := webhook.Schedule{time.Second, 3 * time.Second}
	if err := s.Check(); err != nil || s.Attempts() != 3 {
		t.Fatalf("%v: %v, %d attempts; want valid, 3 attempts", s, err, s.Attempts())
	}
	failed := webhook.Outcome{Verdict: webhook.Failed, Status: 500}
	for attempt, want := range map[int]time.Duration{1: time.Second, 2: 3 * time.Second} {
		if wait, ok := s.NextAttempt(failed, attempt, fixed(0.5)); !ok || wait != want {
			t.Errorf("after attempt %d: %v, %v; want %v", attempt, wait, ok, want)
		}
	}
	if _, ok := s.NextAttempt(failed, 3, fixed(0.5)); ok {
		t.Error("the third attempt is the last, but another is scheduled")
	}
	for _, bad := range []webhook.Schedule{
		nil,
		{500 * time.Millisecond},
		{time.Second, 11 * time.Hour},
		make(webhook.Schedule, webhook.MaxRetries+1),
	} {
		if bad.Check() == nil {
			t.Errorf("%v passes the check", bad)
		}
	}
	full := make(webhook.Schedule, webhook.MaxRetries)
	for i := range full {
		full[i] = webhook.MaxRetryAfter
	}
	if err := full.Check(); err != nil {
		t.Errorf("the longest schedule: %v", err)
	}
}
