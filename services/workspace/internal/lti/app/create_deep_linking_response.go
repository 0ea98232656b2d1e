package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/ident"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// LTI13DeepLinkingResponse is the reply to a deep-linking request: the
// signed LtiDeepLinkingResponse the browser posts, as the form field JWT,
// to the platform's ReturnURL.
type LTI13DeepLinkingResponse struct {
	ReturnURL string
	JWT       string
}

var (
	errLTI13DeepLinkUnused = fault.New(fault.Unauthenticated,
		"this exam choice is unknown, already sent or expired (the page is over an hour old): open the LMS's content picker again")
	errNoToolKeys = fault.New(fault.Unavailable, "the tool's LTI 1.3 keys are not available on this service right now; retry shortly")
)

// DeepLinking answers the deep-linking page: it needs the workspaces
// holding registrations, the requests deep-linking launches kept, and the
// tool's keys, which sign the reply.
type DeepLinking struct {
	ws        Workspaces
	deepLinks LTI13DeepLinkStore
	tool      *ToolKeys
	s         Settings
}

// NewDeepLinking returns the deep-linking reply's use case.
func NewDeepLinking(ws Workspaces, deepLinks LTI13DeepLinkStore, tool *ToolKeys, s Settings) *DeepLinking {
	notNil(ws, deepLinks, tool)
	return &DeepLinking{ws: ws, deepLinks: deepLinks, tool: tool, s: s.withDefaults()}
}

// CreateResponse answers the deep-linking page, for anyone
// who holds its id (a single-use secret a verified deep-linking launch
// handed the teacher's browser): it takes the request kept under
// deepLinkID and signs, with the tool's key, the reply that adds a link to
// the exam examConfigID, with a line item out of scoreMaximum (nil:
// ltidomain.DefaultScoreMaximum) where the request allowed one. Only the
// exam and its maximum come from the browser; the rest was kept at the
// launch. An exam id that is not a UUID, or a maximum not over 0, is refused before
// the request is taken, so the teacher can correct it; an unknown, used or
// expired id, or a registration removed since, is UNAUTHENTICATED. A
// failure on our side (the store, the keys) keeps the request for a retry.
func (d *DeepLinking) CreateResponse(ctx context.Context, deepLinkID, examConfigID string, scoreMaximum *float64) (LTI13DeepLinkingResponse, error) {
	exam, err := ltidomain.CheckPickedExamConfig(examConfigID)
	if err != nil {
		return LTI13DeepLinkingResponse{}, err
	}
	maximum, err := ltidomain.CheckScoreMaximum(scoreMaximum)
	if err != nil {
		return LTI13DeepLinkingResponse{}, err
	}
	if deepLinkID == "" {
		return LTI13DeepLinkingResponse{}, errLTI13DeepLinkUnused
	}
	link, ok, err := d.deepLinks.Take(ctx, deepLinkID)
	if err != nil {
		return LTI13DeepLinkingResponse{}, err
	}
	if !ok {
		return LTI13DeepLinkingResponse{}, errLTI13DeepLinkUnused
	}
	jwt, err := d.signReply(ctx, link, exam, maximum)
	if err != nil {
		if fault.KindOf(err) != fault.Unauthenticated {
			d.putBack(ctx, deepLinkID, link)
		}
		return LTI13DeepLinkingResponse{}, err
	}
	return LTI13DeepLinkingResponse{ReturnURL: link.ReturnURL, JWT: jwt}, nil
}

// signReply checks that link's registration still holds its deployment in
// an active workspace, and signs the reply naming exam.
func (d *DeepLinking) signReply(ctx context.Context, link LTI13DeepLink, exam string, scoreMaximum float64) (string, error) {
	w, err := d.ws.ByLTIPair(ctx, link.PlatformIssuer, link.ClientID)
	if errors.Is(err, domain.ErrNotFound) {
		return "", ltidomain.ErrLTI13Registration
	}
	if err != nil {
		return "", fmt.Errorf("find the LTI registration of a deep-linking reply: %w", err)
	}
	reg, ok := w.LTIRegistrations().For(link.PlatformIssuer, link.ClientID)
	switch {
	case !ok || reg.ID != link.RegistrationID || w.ID() != link.WorkspaceID:
		return "", ltidomain.ErrLTI13Registration
	case w.Deleted():
		return "", errLTI13Deleted
	case !reg.HasDeployment(link.DeploymentID):
		return "", ltidomain.ErrLTI13Deployment
	}
	reply := ltidomain.DeepLinkingReply{
		ClientID: link.ClientID, PlatformIssuer: link.PlatformIssuer, DeploymentID: link.DeploymentID,
		Data: link.Data, LaunchURL: d.s.URLs.LTI13Launch(), ExamConfigID: exam,
		LineItem: link.LineItem, ScoreMaximum: scoreMaximum, Nonce: ident.NewSecret(), Now: d.s.Now(),
	}
	jwt, err := d.tool.Sign(ctx, reply.Claims())
	if errors.Is(err, ltidomain.ErrNoToolKey) {
		return "", fault.Wrap(fault.Unavailable, err, errNoToolKeys.Message)
	}
	return jwt, err
}

// putBack stores link again under id for what is left of its time, so
// that a reply that failed on our side can be retried.
func (d *DeepLinking) putBack(ctx context.Context, id string, link LTI13DeepLink) {
	left := link.CreatedAt.Add(LTI13DeepLinkTTL).Sub(d.s.Now())
	if left <= 0 {
		return
	}
	if err := d.deepLinks.Put(context.WithoutCancel(ctx), id, link, left); err != nil {
		d.s.Logger.Warn("a deep-linking request could not be kept for a retry", "registration", link.RegistrationID, "error", err.Error())
	}
}
