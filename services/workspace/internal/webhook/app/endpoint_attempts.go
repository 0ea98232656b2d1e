package app

import (
	"context"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// AttemptsPageSize is how many attempts a page holds at most.
const AttemptsPageSize = 100

// Attempts returns a page of the delivery attempts to an endpoint of a
// workspace the caller owns or manages, newest first, and the token of the
// next page ("" after the last).
func (e *Endpoints) Attempts(ctx context.Context, caller domain.Caller, id, endpointID, pageToken string) ([]Attempt, string, error) {
	if _, _, err := e.endpoint(ctx, caller, id, endpointID); err != nil {
		return nil, "", err
	}
	return e.deliveries.Attempts(ctx, endpointID, pageToken, AttemptsPageSize)
}
