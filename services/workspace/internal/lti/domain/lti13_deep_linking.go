package domain

import (
	"math"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
)

// The claims of the tool's reply to a deep-linking request (1EdTech Deep
// Linking 2.0 §4.5).
const (
	claimDeepLinkContentItems = "https://purl.imsglobal.org/spec/lti-dl/claim/content_items"
	claimDeepLinkData         = "https://purl.imsglobal.org/spec/lti-dl/claim/data"
)

// MessageDeepLinkingResponse is the message type of the tool's reply.
const MessageDeepLinkingResponse = "LtiDeepLinkingResponse"

// DeepLinkingReplyLifetime is how long the reply's JWT is valid: the
// browser posts it to the platform at once.
const DeepLinkingReplyLifetime = 5 * time.Minute

// DeepLinkItemTitle is the title of the link the reply adds to the course.
const DeepLinkItemTitle = "LiveProctor exam"

// DeepLinkingReply is the tool's answer to a deep-linking request: one
// LTI resource link that launches the exam the teacher picked.
type DeepLinkingReply struct {
	// ClientID is the tool's client id on the platform (the reply's iss);
	// PlatformIssuer the platform's issuer (its aud).
	ClientID       string
	PlatformIssuer string
	DeploymentID   string
	// Data is the request's data claim, echoed as is; empty when the
	// request had none (an empty data is not echoed).
	Data string
	// LaunchURL is the link's url: the tool's LTI 1.3 launch URL.
	LaunchURL    string
	ExamConfigID string
	// LineItem is whether the link carries a line item
	// (DeepLinkingSettings.LineItem), whose maximum is ScoreMaximum.
	LineItem     bool
	ScoreMaximum float64
	Nonce        string
	Now          time.Time
}

// Claims are the reply's JWT claims: issued now, valid for
// DeepLinkingReplyLifetime, with one ltiResourceLink content item whose
// custom parameter exam_config_id names the exam. With LineItem the item
// asks the platform for its gradebook column (Deep Linking 2.0 §3.2.1):
// labelled as the link, out of ScoreMaximum, its resourceId the exam, so
// that scores find it by the exam.
func (r DeepLinkingReply) Claims() map[string]any {
	item := map[string]any{
		"type":   "ltiResourceLink",
		"title":  DeepLinkItemTitle,
		"url":    r.LaunchURL,
		"custom": map[string]string{"exam_config_id": r.ExamConfigID},
	}
	if r.LineItem {
		item["lineItem"] = map[string]any{"label": DeepLinkItemTitle, "scoreMaximum": r.ScoreMaximum, "resourceId": r.ExamConfigID}
	}
	c := map[string]any{
		"iss":                     r.ClientID,
		"aud":                     r.PlatformIssuer,
		"iat":                     r.Now.Unix(),
		"exp":                     r.Now.Add(DeepLinkingReplyLifetime).Unix(),
		"nonce":                   r.Nonce,
		claimDeploymentID:         r.DeploymentID,
		claimMessageType:          MessageDeepLinkingResponse,
		claimVersion:              "1.3.0",
		claimDeepLinkContentItems: []any{item},
	}
	if r.Data != "" {
		c[claimDeepLinkData] = r.Data
	}
	return c
}

// CheckPickedExamConfig returns the exam configuration a teacher picked on
// the deep-linking page, as CheckExamConfig reads a launch's: trimmed, a
// UUID, with the same refusals.
func CheckPickedExamConfig(id string) (string, error) {
	return CheckExamConfig([]LaunchParam{{Name: paramExamConfigID, Value: id}})
}

// DefaultScoreMaximum is a deep-linked exam's gradebook maximum when the
// teacher gives none.
const DefaultScoreMaximum = 100

// ErrScoreMaximum refuses a gradebook maximum that is no number over 0.
var ErrScoreMaximum = fault.New(fault.Invalid, "the score maximum must be a number over 0 (the points of the gradebook column)")

// CheckScoreMaximum returns the gradebook maximum a teacher gave on the
// deep-linking page: DefaultScoreMaximum when none (nil), else a finite
// number over 0, as AGS 2.0 requires of a line item's scoreMaximum.
func CheckScoreMaximum(v *float64) (float64, error) {
	switch {
	case v == nil:
		return DefaultScoreMaximum, nil
	case math.IsNaN(*v) || math.IsInf(*v, 0) || *v <= 0:
		return 0, ErrScoreMaximum
	}
	return *v, nil
}
