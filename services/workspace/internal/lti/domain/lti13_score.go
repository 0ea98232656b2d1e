package domain

import (
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/liveproctor/workspaces/pkg/clip"
	"github.com/liveproctor/workspaces/pkg/fault"
)

// The values AGS 2.0's score service (§3.4.5, §3.4.6) gives a score's
// progress fields.
var (
	ActivityProgresses = []string{"Initialized", "Started", "InProgress", "Submitted", "Completed"}
	GradingProgresses  = []string{"FullyGraded", "Pending", "PendingManual", "Failed", "NotReady"}
)

// ScoreCommentMax bounds a score's comment, in characters: a teacher's
// note beside the grade, not a report (LMSs show it in a gradebook cell).
const ScoreCommentMax = 4000

// ScoreInput is a score as the vendor's back end sends it; a nil number
// was not sent.
type ScoreInput struct {
	ScoreGiven       *float64
	ScoreMaximum     *float64
	ActivityProgress string
	GradingProgress  string
	Comment          string
	// SubmittedAt is RFC 3339, or empty.
	SubmittedAt string
}

// Score is a grade for a launch's user, held to AGS 2.0's score
// publish service: what the platform's line item is sent.
type Score struct {
	Given            float64
	Maximum          float64
	ActivityProgress string
	GradingProgress  string
	Comment          string
	// SubmittedAt is when the learner submitted; zero when not given.
	SubmittedAt time.Time
}

// CheckScore returns in as a Score, or an Invalid error naming every field
// missing or out of bounds: a given score is a finite number of at least 0 (over the
// maximum is extra credit, which AGS allows), the maximum one over 0, the
// progresses AGS's values, the comment at most ScoreCommentMax characters.
func CheckScore(in ScoreInput) (Score, error) {
	var bad []fault.FieldViolation
	refuse := func(field, description string) {
		bad = append(bad, fault.FieldViolation{Field: field, Description: description})
	}
	var given, maximum float64
	switch {
	case in.ScoreGiven == nil:
		refuse("scoreGiven", "is required")
	case math.IsNaN(*in.ScoreGiven) || math.IsInf(*in.ScoreGiven, 0) || *in.ScoreGiven < 0:
		refuse("scoreGiven", "must be a number of at least 0")
	default:
		given = *in.ScoreGiven
	}
	switch {
	case in.ScoreMaximum == nil:
		refuse("scoreMaximum", "is required")
	case math.IsNaN(*in.ScoreMaximum) || math.IsInf(*in.ScoreMaximum, 0) || *in.ScoreMaximum <= 0:
		refuse("scoreMaximum", "must be a number over 0")
	default:
		maximum = *in.ScoreMaximum
	}
	if !slices.Contains(ActivityProgresses, in.ActivityProgress) {
		refuse("activityProgress", "must be one of "+strings.Join(ActivityProgresses, ", "))
	}
	if !slices.Contains(GradingProgresses, in.GradingProgress) {
		refuse("gradingProgress", "must be one of "+strings.Join(GradingProgresses, ", "))
	}
	if !utf8.ValidString(in.Comment) || utf8.RuneCountInString(in.Comment) > ScoreCommentMax {
		refuse("comment", "must be at most "+strconv.Itoa(ScoreCommentMax)+" characters")
	}
	var submitted time.Time
	if in.SubmittedAt != "" {
		t, err := time.Parse(time.RFC3339Nano, in.SubmittedAt)
		if err != nil {
			refuse("submittedAt", "must be an RFC 3339 date and time, such as 2026-11-28T09:00:00Z")
		}
		submitted = t.UTC()
	}
	if err := fault.InvalidFields(bad); err != nil {
		return Score{}, err
	}
	return Score{
		Given: given, Maximum: maximum,
		ActivityProgress: in.ActivityProgress, GradingProgress: in.GradingProgress,
		Comment: in.Comment, SubmittedAt: submitted,
	}, nil
}

// NextScoreTimestamp is the timestamp of a user's next score on a line
// item, whose last score was stamped last (zero: none): now to the
// millisecond, or a millisecond after last when now is not after it (two
// scores in one millisecond, or a replica's clock behind another's). A
// platform ignores a score no newer than the last it kept (AGS 2.0
// §3.4.4), so the stamps of one user's scores on one line item only grow.
func NextScoreTimestamp(last, now time.Time) time.Time {
	t := now.UTC().Truncate(time.Millisecond)
	if !t.After(last) {
		t = last.UTC().Truncate(time.Millisecond).Add(time.Millisecond)
	}
	return t
}

// ScoreMediaType is the media type of a score sent to a line item.
const ScoreMediaType = "application/vnd.ims.lis.v1.score+json"

// Payload is the score as a line item's scores service takes it, for the
// user userID (the launch's sub), stamped at.
func (s Score) Payload(userID string, at time.Time) map[string]any {
	p := map[string]any{
		"userId":           userID,
		"scoreGiven":       s.Given,
		"scoreMaximum":     s.Maximum,
		"activityProgress": s.ActivityProgress,
		"gradingProgress":  s.GradingProgress,
		"timestamp":        at.UTC().Format("2006-01-02T15:04:05.000Z07:00"),
	}
	if s.Comment != "" {
		p["comment"] = s.Comment
	}
	if !s.SubmittedAt.IsZero() {
		p["submission"] = map[string]any{"submittedAt": s.SubmittedAt.UTC().Format(time.RFC3339Nano)}
	}
	return p
}

// ScoresURL is the scores service of the line item at lineItem: "/scores"
// appended to its path, before its query (Moodle's and Canvas's line
// items carry one), which is kept as given.
func ScoresURL(lineItem string) (string, error) {
	u, err := url.Parse(lineItem)
	if err != nil || !u.IsAbs() || u.Host == "" {
		return "", fault.New(fault.Invalid, "the line item URL %q is not an absolute URL", clip.Runes(lineItem, 200))
	}
	u.Fragment, u.RawFragment = "", ""
	u.Path = strings.TrimSuffix(u.Path, "/") + "/scores"
	if u.RawPath != "" {
		u.RawPath = strings.TrimSuffix(u.RawPath, "/") + "/scores"
	}
	return u.String(), nil
}
