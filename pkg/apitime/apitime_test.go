package apitime_test

import (
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/apitime"
)

func TestFormatIsUTCWithMillisecondsAndParseReadsIt(t *testing.T) {
	austin := time.FixedZone("CST", -6*60*60)
	at := time.Date(2026, 11, 22, 1, 46, 0, 123_456_789, austin)
	s := apitime.Format(at)
	if s != "2026-11-22T07:46:00.123Z" {
		t.Fatalf("Format = %q", s)
	}
	back, err := apitime.Parse(s)
	if err != nil || !back.Equal(at.Truncate(time.Millisecond)) {
		t.Fatalf("Parse = %v, %v", back, err)
	}
	for _, bad := range []string{"2026-11-22T07:46:00Z", "2026-11-22T01:46:00.123-06:00", ""} {
		if _, err := apitime.Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted a time not written by Format", bad)
		}
	}
}
