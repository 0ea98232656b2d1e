package portalstate

import (
	"time"

	portaldomain "github.com/liveproctor/workspaces/services/workspace/internal/portal/domain"
)

// linkRecord is a link as stored: JSON, so that a reader of Redis sees
// what it is. Its fields are the domain's, one for one.
type linkRecord struct {
	ID              string    `json:"id"`
	WorkspaceID     string    `json:"workspaceId"`
	ReturnURL       string    `json:"returnUrl,omitempty"`
	CreatedAt       time.Time `json:"createdAt"`
	ExpiresAt       time.Time `json:"expiresAt"`
	WorkspaceCutoff time.Time `json:"workspaceCutoff,omitzero"`
	OpenedAt        time.Time `json:"openedAt,omitzero"`
	SessionDigest   string    `json:"sessionDigest,omitempty"`
	RevokedAt       time.Time `json:"revokedAt,omitzero"`
}

// The record converts to the domain's link and back: a field added to one
// and not the other fails here.
var _ = portaldomain.Link(linkRecord{})
