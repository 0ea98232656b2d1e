package outbound_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/outbound"
)

func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	const most = 10 * time.Hour
	for _, c := range []struct {
		value string
		most  time.Duration
		wait  time.Duration
		ok    bool
	}{
		{"0", most, 0, true},
		{"30", most, 30 * time.Second, true},
		{" 30 ", most, 30 * time.Second, true},
		{"36000", most, 10 * time.Hour, true},
		{"36001", most, most, true},
		{"3601", time.Hour, time.Hour, true}, // the cap is the caller's
		{"99999999999999999999999", most, most, true},
		{now.Add(90 * time.Second).Format(http.TimeFormat), most, 90 * time.Second, true},
		{"Sat, 28 Nov 2026 11:00:00 GMT", most, 0, true}, // in the past: now
		{"Mon, 28 Nov 2033 12:00:00 GMT", most, most, true},
		{"Sat, 28 Nov 2026 14:00:00 GMT", time.Hour, time.Hour, true},
		{"Saturday, 28-Nov-26 12:01:00 GMT", most, time.Minute, true}, // RFC 850, obsolete but allowed
		{"", most, 0, false},
		{"-5", most, 0, false},
		{"+5", most, 0, false},
		{"1.5", most, 0, false},
		{"tomorrow", most, 0, false},
	} {
		wait, ok := outbound.ParseRetryAfter(c.value, now, c.most)
		if wait != c.wait || ok != c.ok {
			t.Errorf("ParseRetryAfter(%q, %v) = %v, %v; want %v, %v", c.value, c.most, wait, ok, c.wait, c.ok)
		}
	}
}

// Whatever a server sends, the wait it asks for is within bounds.
func FuzzParseRetryAfter(f *testing.F) {
	for _, seed := range []string{"0", "120", "99999999999999999999", "Sat, 28 Nov 2026 12:00:00 GMT", "", "-1", "\xff"} {
		f.Add(seed)
	}
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	const most = 10 * time.Hour
	f.Fuzz(func(t *testing.T, value string) {
		wait, ok := outbound.ParseRetryAfter(value, now, most)
		if wait < 0 || wait > most || (!ok && wait != 0) {
			t.Fatalf("ParseRetryAfter(%q) = %v, %v", value, wait, ok)
		}
	})
}

func TestSuggestedWait(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		value string
		want  time.Duration
	}{
		{"", 5 * time.Second},     // none: the fallback
		{"soon", 5 * time.Second}, // unreadable: the fallback
		{"0", time.Second},        // at once: still a second
		{"30", 30 * time.Second},  // as asked
		{"86400", time.Hour},      // at most most
		{now.Add(-time.Minute).Format(http.TimeFormat), time.Second}, // a date gone by
	} {
		if got := outbound.SuggestedWait(tc.value, now, time.Hour, 5*time.Second); got != tc.want {
			t.Errorf("SuggestedWait(%q) = %v, want %v", tc.value, got, tc.want)
		}
	}
}
