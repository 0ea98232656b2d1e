package domain

import (
	"time"

	"github.com/liveproctor/workspaces/pkg/clip"
)

// A registration's launch health: what its administrator reads to find why
// the platform's launches fail without asking the teacher who saw the
// refusal page. It is kept beside the registration, not in the workspace
// document: launches change it, and a launch must not contend with the
// workspace's revision-checked writes.

// Bounds of a registration's launch health.
const (
	// MaxRecentFailures is how many refusals are kept, the newest: enough
	// to see the one the administrator is asked about, and what happened
	// around it.
	MaxRecentFailures = 10
	// MaxFailureReason bounds a refusal's reason, in characters; the
	// refusals' own messages are shorter, and it bounds what a caller's
	// quoted values add.
	MaxFailureReason = 600
	// MaxFailureRequestID bounds the request id kept (the gateway's ids
	// are shorter; the gRPC metadata allows 128 bytes).
	MaxFailureRequestID = 128
	// LastLaunchGranularity is how often, at most, a replica records a
	// registration's accepted launch: a class launching at once is one
	// write, not one per student to the same record, and lastLaunchAt is
	// exact to it.
	LastLaunchGranularity = time.Minute
)

// LaunchFailure is one refused launch or login of a registration.
type LaunchFailure struct {
	At time.Time
	// Reason is the refusal's message, as the refusal page shows it.
	Reason string
	// RequestID is the refused request's id, to find it in the logs.
	RequestID string
}

// NewLaunchFailure is the refusal at with reason in the request
// requestID, each clipped to its bound.
func NewLaunchFailure(at time.Time, reason, requestID string) LaunchFailure {
	return LaunchFailure{At: at, Reason: clip.Runes(reason, MaxFailureReason), RequestID: clip.Runes(requestID, MaxFailureRequestID)}
}

// LaunchHealth is a registration's launch health.
type LaunchHealth struct {
	// LastLaunchAt is when the platform's latest accepted launch was;
	// zero until one is.
	LastLaunchAt time.Time
	// Failures are the latest refusals, newest first, at most
	// MaxRecentFailures.
	Failures []LaunchFailure
}

// Accepted is h after a launch accepted at: the latest of the launches
// counts, whatever order replicas record them in.
func (h LaunchHealth) Accepted(at time.Time) LaunchHealth {
	if at.After(h.LastLaunchAt) {
		h.LastLaunchAt = at
	}
	return h
}

// Refused is h with f first among its failures, the oldest beyond
// MaxRecentFailures dropped.
func (h LaunchHealth) Refused(f LaunchFailure) LaunchHealth {
	failures := make([]LaunchFailure, 0, min(len(h.Failures)+1, MaxRecentFailures))
	failures = append(failures, f)
	h.Failures = append(failures, h.Failures[:min(len(h.Failures), MaxRecentFailures-1)]...)
	return h
}
