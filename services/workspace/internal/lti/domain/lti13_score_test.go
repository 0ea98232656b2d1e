package domain_test

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

func goodScore() ltidomain.ScoreInput {
	return ltidomain.ScoreInput{
		ScoreGiven: ptr(7.5), ScoreMaximum: ptr(10), ActivityProgress: "Completed", GradingProgress: "FullyGraded",
		Comment: "Well argued.", SubmittedAt: "2026-11-28T09:00:00.250+01:00",
	}
}

func ptr(v float64) *float64 { return &v }

func TestCheckScore(t *testing.T) {
	s, err := ltidomain.CheckScore(goodScore())
	if err != nil {
		t.Fatal(err)
	}
	want := time.Date(2026, 11, 28, 8, 0, 0, 250e6, time.UTC)
	if s.Given != 7.5 || s.Maximum != 10 || s.Comment != "Well argued." || !s.SubmittedAt.Equal(want) || s.SubmittedAt.Location() != time.UTC {
		t.Fatalf("%+v", s)
	}
	for _, c := range []struct {
		name   string
		change func(*ltidomain.ScoreInput)
		fields []string
	}{
		{"zero and extra credit are grades", func(in *ltidomain.ScoreInput) { in.ScoreGiven = ptr(0) }, nil},
		{"over the maximum", func(in *ltidomain.ScoreInput) { in.ScoreGiven = ptr(12) }, nil},
		{"no comment, no submission", func(in *ltidomain.ScoreInput) { in.Comment, in.SubmittedAt = "", "" }, nil},
		{"the longest comment", func(in *ltidomain.ScoreInput) { in.Comment = strings.Repeat("é", ltidomain.ScoreCommentMax) }, nil},
		{"negative", func(in *ltidomain.ScoreInput) { in.ScoreGiven = ptr(-0.5) }, []string{"scoreGiven"}},
		{"not a number", func(in *ltidomain.ScoreInput) { in.ScoreGiven = ptr(math.NaN()) }, []string{"scoreGiven"}},
		{"infinite", func(in *ltidomain.ScoreInput) { in.ScoreGiven = ptr(math.Inf(1)) }, []string{"scoreGiven"}},
		{"a maximum of 0", func(in *ltidomain.ScoreInput) { in.ScoreMaximum = ptr(0) }, []string{"scoreMaximum"}},
		{"negative maximum", func(in *ltidomain.ScoreInput) { in.ScoreMaximum = ptr(-1) }, []string{"scoreMaximum"}},
		{"neither number", func(in *ltidomain.ScoreInput) { in.ScoreGiven, in.ScoreMaximum = nil, nil }, []string{"scoreGiven", "scoreMaximum"}},
		{"activity", func(in *ltidomain.ScoreInput) { in.ActivityProgress = "completed" }, []string{"activityProgress"}},
		{"grading", func(in *ltidomain.ScoreInput) { in.GradingProgress = "" }, []string{"gradingProgress"}},
		{"long comment", func(in *ltidomain.ScoreInput) { in.Comment = strings.Repeat("a", ltidomain.ScoreCommentMax+1) }, []string{"comment"}},
		{"not UTF-8", func(in *ltidomain.ScoreInput) { in.Comment = "\xff" }, []string{"comment"}},
		{"date only", func(in *ltidomain.ScoreInput) { in.SubmittedAt = "2026-11-28" }, []string{"submittedAt"}},
		{"no zone", func(in *ltidomain.ScoreInput) { in.SubmittedAt = "2026-11-28T09:00:00" }, []string{"submittedAt"}},
		{"every field", func(in *ltidomain.ScoreInput) {
			*in = ltidomain.ScoreInput{ScoreGiven: ptr(-1), SubmittedAt: "yesterday"}
		}, []string{"scoreGiven", "scoreMaximum", "activityProgress", "gradingProgress", "submittedAt"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := goodScore()
			c.change(&in)
			_, err := ltidomain.CheckScore(in)
			if c.fields == nil {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			f, ok := fault.As(err)
			if !ok || f.Kind != fault.Invalid {
				t.Fatalf("got %v, want Invalid", err)
			}
			var got []string
			for _, v := range f.Fields {
				got = append(got, v.Field)
			}
			if !slices.Equal(got, c.fields) {
				t.Fatalf("fields %v, want %v", got, c.fields)
			}
		})
	}
}

// The stamps of one user's scores on one line item grow strictly, to the
// millisecond, whatever the clock does.
func TestNextScoreTimestamp(t *testing.T) {
	at := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name      string
		last, now time.Time
		want      time.Time
	}{
		{"first", time.Time{}, at.Add(1234567), at.Add(time.Millisecond)},
		{"later", at, at.Add(5 * time.Second), at.Add(5 * time.Second)},
		{"same millisecond", at.Add(400 * time.Microsecond), at.Add(900 * time.Microsecond), at.Add(time.Millisecond)},
		{"equal", at, at, at.Add(time.Millisecond)},
		{"clock behind", at, at.Add(-time.Minute), at.Add(time.Millisecond)},
		{"another zone", at, at.Add(time.Hour).In(time.FixedZone("X", 3600)), at.Add(time.Hour)},
	} {
		got := ltidomain.NextScoreTimestamp(c.last, c.now)
		if !got.Equal(c.want) || got.Location() != time.UTC || !got.After(c.last) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	var last time.Time
	for range 1000 {
		next := ltidomain.NextScoreTimestamp(last, at)
		if !next.After(last) {
			t.Fatalf("%v after %v", next, last)
		}
		last = next
	}
}

func TestScorePayload(t *testing.T) {
	s, err := ltidomain.CheckScore(goodScore())
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 28, 9, 0, 0, 7e6, time.UTC)
	raw, err := json.Marshal(s.Payload("user-7", at))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"activityProgress":"Completed","comment":"Well argued.","gradingProgress":"FullyGraded",` +
		`"scoreGiven":7.5,"scoreMaximum":10,"submission":{"submittedAt":"2026-11-28T08:00:00.25Z"},` +
		`"timestamp":"2026-11-28T09:00:00.007Z","userId":"user-7"}`
	if string(raw) != want {
		t.Fatalf("%s\nwant %s", raw, want)
	}
	bare := ltidomain.Score{Given: 0, Maximum: 1, ActivityProgress: "Started", GradingProgress: "NotReady"}
	raw, _ = json.Marshal(bare.Payload("u", at))
	if strings.Contains(string(raw), "comment") || strings.Contains(string(raw), "submission") || !strings.Contains(string(raw), `"scoreGiven":0`) {
		t.Fatalf("%s", raw)
	}
}

// "/scores" goes into the path, before any query (1EdTech's PHP library
// #28 put it after Moodle's and Canvas's query strings).
func TestScoresURL(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"https://lms.example.edu/api/lti/courses/9/line_items/4", "https://lms.example.edu/api/lti/courses/9/line_items/4/scores"},
		{"https://lms.example.edu/mod/lti/services.php/9/lineitems/4/lineitem?type_id=7", "https://lms.example.edu/mod/lti/services.php/9/lineitems/4/lineitem/scores?type_id=7"},
		{"https://lms.example.edu/li/4/?a=1&b=%2F#frag", "https://lms.example.edu/li/4/scores?a=1&b=%2F"},
		{"https://lms.example.edu:8443/li/a%2Fb?x", "https://lms.example.edu:8443/li/a%2Fb/scores?x"},
	} {
		got, err := ltidomain.ScoresURL(c.in)
		if err != nil || got != c.want {
			t.Errorf("%s: %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "/li/4", "https://", "::"} {
		if _, err := ltidomain.ScoresURL(bad); fault.KindOf(err) != fault.Invalid {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
