package domain_test

import (
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

func TestLaunchHealthKeepsTheLatestLaunch(t *testing.T) {
	at := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	var h ltidomain.LaunchHealth
	// Replicas may record launches out of order: the latest stays.
	for _, launched := range []time.Time{at, at.Add(time.Hour), at.Add(time.Minute)} {
		h = h.Accepted(launched)
	}
	if !h.LastLaunchAt.Equal(at.Add(time.Hour)) {
		t.Fatalf("lastLaunchAt %v, want %v", h.LastLaunchAt, at.Add(time.Hour))
	}
}

func TestLaunchHealthKeepsTheNewestFailuresFirst(t *testing.T) {
	at := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	var h ltidomain.LaunchHealth
	for i := range ltidomain.MaxRecentFailures + 5 {
		h = h.Refused(ltidomain.NewLaunchFailure(at.Add(time.Duration(i)*time.Second), fmt.Sprint("refusal ", i), "req"))
	}
	if len(h.Failures) != ltidomain.MaxRecentFailures {
		t.Fatalf("%d failures kept, want %d", len(h.Failures), ltidomain.MaxRecentFailures)
	}
	for i, f := range h.Failures {
		if want := fmt.Sprint("refusal ", ltidomain.MaxRecentFailures+4-i); f.Reason != want {
			t.Fatalf("failure %d is %q, want %q (newest first)", i, f.Reason, want)
		}
	}
}

func TestLaunchFailureIsBounded(t *testing.T) {
	f := ltidomain.NewLaunchFailure(time.Now(), strings.Repeat("é", 2*ltidomain.MaxFailureReason), strings.Repeat("r", 300))
	if n := utf8.RuneCountInString(f.Reason); n != ltidomain.MaxFailureReason+1 || !strings.HasSuffix(f.Reason, "…") {
		t.Errorf("reason of %d characters: %q…", n, f.Reason[:20])
	}
	if n := utf8.RuneCountInString(f.RequestID); n != ltidomain.MaxFailureRequestID+1 {
		t.Errorf("request id of %d characters", n)
	}
}
