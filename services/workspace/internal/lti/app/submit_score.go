package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"time"

	"github.com/liveproctor/workspaces/pkg/clip"
	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/ident"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// Grades takes the vendor's scores for launches and tells what became of
// them: it needs the workspaces' tenancy rule, the launches and the
// scores' store.
type Grades struct {
	ws      Workspaces
	records LTI13LaunchStore
	scores  ScoreStore
	now     func() time.Time
}

// NewGrades returns the scores' use cases; now is the clock.
func NewGrades(ws Workspaces, records LTI13LaunchStore, scores ScoreStore, now func() time.Time) *Grades {
	notNil(ws, records, scores, now)
	return &Grades{ws: ws, records: records, scores: scores, now: now}
}

// Submit keeps a score for launch launchID of a workspace the caller owns
// or manages, pending, for the delivery to send to the launch's line item
// (ScoreDelivery); it answers at once. The launch's platform must have
// offered the score service with it, and either a line item or the right
// to manage line items.
func (g *Grades) Submit(ctx context.Context, caller domain.Caller, id, launchID string, in ltidomain.ScoreInput) (ScoreRecord, error) {
	score, err := ltidomain.CheckScore(in)
	if err != nil {
		return ScoreRecord{}, err
	}
	if _, err := g.ws.Managed(ctx, caller, id); err != nil {
		return ScoreRecord{}, err
	}
	notFound := fault.New(fault.NotFound, "LTI launch %q not found", clip.Runes(launchID, 64))
	if !ident.IsSecret(launchID) {
		return ScoreRecord{}, notFound
	}
	launch, ok, err := g.records.Get(ctx, id, launchID)
	if err != nil {
		return ScoreRecord{}, err
	}
	if !ok {
		return ScoreRecord{}, notFound
	}
	ags := launch.Services
	if !slices.Contains(ags.Scopes, ScopeScore) || (ags.LineItem == "" && !(ags.LineItems != "" && slices.Contains(ags.Scopes, ScopeLineItem))) {
		return ScoreRecord{}, fault.New(fault.FailedPrecondition,
			"the platform offered no gradebook for LTI launch %q: it gave the tool neither a line item to score nor line items to manage", clip.Runes(launchID, 64))
	}
	now := g.now().UTC().Truncate(time.Millisecond)
	r := ScoreRecord{
		ID: ident.NewSecret(), WorkspaceID: id, LaunchID: launchID, Queue: scoreQueue(launch),
		RegistrationID: launch.RegistrationID, UserID: launch.Subject, ContextID: launch.ContextID,
		ResourceLinkID: launch.ResourceLinkID, ResourceID: launch.ExamConfigID,
		LineItem: ags.LineItem, LineItems: ags.LineItems, Scopes: slices.Clone(ags.Scopes),
		Score: score, Status: ScorePending, CreatedAt: now, UpdatedAt: now,
	}
	if err := g.scores.Add(ctx, r); err != nil {
		return ScoreRecord{}, err
	}
	return r, nil
}

// Get returns a score of a workspace the caller owns or manages. A score
// that is unknown, past its retention or another workspace's is one
// not-found answer.
func (g *Grades) Get(ctx context.Context, caller domain.Caller, id, scoreID string) (ScoreRecord, error) {
	if _, err := g.ws.Managed(ctx, caller, id); err != nil {
		return ScoreRecord{}, err
	}
	notFound := fault.New(fault.NotFound, "LTI score %q not found", clip.Runes(scoreID, 64))
	if !ident.IsSecret(scoreID) {
		return ScoreRecord{}, notFound
	}
	r, ok, err := g.scores.Get(ctx, id, scoreID)
	if err != nil {
		return ScoreRecord{}, err
	}
	if !ok {
		return ScoreRecord{}, notFound
	}
	return r, nil
}

// scoreQueue names the queue of launch's scores: one per user and line
// item, the launch's line item, or where it has none the one its resource
// link's scores find or make (lineItemKey).
func scoreQueue(launch LTI13LaunchRecord) string {
	where := "lineitem\x00" + launch.Services.LineItem
	if launch.Services.LineItem == "" {
		where = "link\x00" + lineItemKey(launch.RegistrationID, launch.ContextID, launch.ResourceLinkID, launch.ExamConfigID)
	}
	return digest(launch.RegistrationID, where, launch.Subject)
}

// lineItemKey names the line item found or made for a resource link (and
// exam configuration) of a registration's context.
func lineItemKey(registrationID, contextID, resourceLinkID, resourceID string) string {
	return digest(registrationID, contextID, resourceLinkID, resourceID)
}

// digest is a fixed-length name for parts, each told apart from the next.
func digest(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}
