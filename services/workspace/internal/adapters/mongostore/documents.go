package mongostore

import (
	"time"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
	webhookdomain "github.com/liveproctor/workspaces/services/workspace/internal/webhook/domain"
)

// workspaceDoc is a workspace as stored in the workspaces collection. Key
// pairs and registration codes live inside it, so a workspace is one
// document write; their uniqueness rests on the reservation collections.
type workspaceDoc struct {
	ID                 string     `bson:"_id"`
	Name               string     `bson:"name"`
	NameKey            string     `bson:"nameKey"` // lower-cased name: the stand-in has no collation
	Type               string     `bson:"type"`
	ParentID           *string    `bson:"parentId"`
	Address            addressDoc `bson:"address"`
	Products           []string   `bson:"products"`
	ObjectiveDocuments []string   `bson:"objectiveDocuments"`
	RateLimit          *rateDoc   `bson:"rateLimit"` // null: the service's default
	Tags               []tagDoc   `bson:"tags"`
	SupportToolID      string     `bson:"supportToolId"`
	CreatedBy          string     `bson:"createdBy"`
	Managers           []string   `bson:"managers"`
	Keys               []keyDoc   `bson:"keys"`
	RegistrationCodes  []string   `bson:"registrationCodes"`
	// LTIRegistrations are the workspace's LTI 1.3 platforms; their
	// (issuer, clientId) pairs are reserved in lti_registrations.
	LTIRegistrations []ltiRegistrationDoc `bson:"ltiRegistrations"`
	// LTIDeployments are the digests (ltiPairID) of every (issuer,
	// deployment id) its registrations hold: a login that names its
	// deployment but no client_id finds the registrations that can own it
	// by one equality on one index (WorkspacesWithLTIIssuer).
	LTIDeployments []string `bson:"ltiDeployments"`
	// Webhooks are the endpoints the workspace's audit trail is delivered
	// to; what delivery keeps of them (cursors, attempts) is in
	// collections of its own, so that delivering never writes here.
	Webhooks          []webhookDoc `bson:"webhooks"`
	CreateFingerprint string       `bson:"createFingerprint"`
	SchemaVersion     string       `bson:"schemaVersion"`
	CreatedAt         time.Time    `bson:"createdAt"`
	UpdatedAt         time.Time    `bson:"updatedAt"`
	DeletedAt         *time.Time   `bson:"deletedAt"` // null while active; lists filter on it
	TokenCutoff       *time.Time   `bson:"tokenCutoff"`
	Revision          int64        `bson:"revision"`
	// VisibleTo is the workspace itself and its managers: the callers
	// whose lists show it while it is active. One array, so that a list is
	// one equality on one index (list_mongo.go).
	VisibleTo []string `bson:"visibleTo"`
	// Outbox holds the events of changes stored but not yet published to
	// the events collection (events_mongo.go); PendingSince is when the
	// oldest of them occurred, and is absent while the outbox is empty, so
	// that the relay finds its work on a small sparse index.
	Outbox       []eventDoc `bson:"outbox"`
	PendingSince *time.Time `bson:"pendingSince,omitempty"`
}

type addressDoc struct {
	City    string `bson:"city"`
	State   string `bson:"state"`
	Country string `bson:"country"`
}

type rateDoc struct {
	PerSecond int `bson:"perSecond"`
	Burst     int `bson:"burst"`
}

type tagDoc struct {
	Key   string `bson:"key"`
	Type  string `bson:"type"`
	Value string `bson:"value"`
}

// keyDoc is a key pair: the secret sealed (AES-GCM) and as a keyed digest,
// never in the clear.
type keyDoc struct {
	AppKey       string     `bson:"appKey"`
	SealedSecret []byte     `bson:"sealedSecret"`
	SecretDigest []byte     `bson:"secretDigest"`
	Role         string     `bson:"role"`
	Name         string     `bson:"name"`
	Tags         []tagDoc   `bson:"tags"`
	CreatedAt    time.Time  `bson:"createdAt"`
	UpdatedAt    time.Time  `bson:"updatedAt"`
	ExpiresAt    *time.Time `bson:"expiresAt"` // null: does not expire; the sweeper looks for past ones
}

// reservationDoc claims an app key or a registration code for a workspace.
// Its _id is the key or code, which makes the claim unique store-wide.
type reservationDoc struct {
	ID          string    `bson:"_id"`
	WorkspaceID string    `bson:"workspaceId"`
	CreatedAt   time.Time `bson:"createdAt"`
	// LastUsedAt is set on app key reservations, coarsely (see
	// domain.KeyUseGranularity), so recording a use never rewrites the
	// workspace document.
	LastUsedAt *time.Time `bson:"lastUsedAt,omitempty"`
	// RetiredAt is set on an app key whose pair was revoked or expired.
	RetiredAt *time.Time `bson:"retiredAt,omitempty"`
}

// ltiRegistrationDoc is an LTI 1.3 platform registration.
type ltiRegistrationDoc struct {
	ID            string    `bson:"id"`
	Issuer        string    `bson:"issuer"`
	ClientID      string    `bson:"clientId"`
	DeploymentIDs []string  `bson:"deploymentIds"`
	AuthLoginURL  string    `bson:"authLoginUrl"`
	JWKSURL       string    `bson:"jwksUrl"`
	AuthTokenURL  string    `bson:"authTokenUrl"` // empty: none
	CreatedAt     time.Time `bson:"createdAt"`
	UpdatedAt     time.Time `bson:"updatedAt"`
}

// ltiReservationDoc claims an (issuer, clientId) pair for a registration.
// Its _id is a digest of the pair (ltiPairID), which makes the claim unique
// store-wide; the pair itself is kept beside it for people reading the
// collection.
type ltiReservationDoc struct {
	ID             string    `bson:"_id"`
	Issuer         string    `bson:"issuer"`
	ClientID       string    `bson:"clientId"`
	WorkspaceID    string    `bson:"workspaceId"`
	RegistrationID string    `bson:"registrationId"`
	CreatedAt      time.Time `bson:"createdAt"`
}

// webhookDoc is a webhook endpoint; its secrets sealed (AES-GCM, bound to
// the endpoint's id), never in the clear.
type webhookDoc struct {
	ID             string    `bson:"id"`
	URL            string    `bson:"url"`
	Description    string    `bson:"description"`
	EventTypes     []string  `bson:"eventTypes"` // empty: every type
	Enabled        bool      `bson:"enabled"`
	DisabledReason string    `bson:"disabledReason"`
	EnabledAt      time.Time `bson:"enabledAt"`
	CreatedAt      time.Time `bson:"createdAt"`
	UpdatedAt      time.Time `bson:"updatedAt"`
	SealedSecret   []byte    `bson:"sealedSecret"`
	// SealedPreviousSecret signs beside SealedSecret until PreviousUntil;
	// null when there is none.
	SealedPreviousSecret []byte     `bson:"sealedPreviousSecret"`
	PreviousUntil        *time.Time `bson:"previousUntil"`
}

func fromWebhooks(endpoints []webhookdomain.Endpoint) []webhookDoc {
	out := make([]webhookDoc, len(endpoints))
	for i, e := range endpoints {
		out[i] = webhookDoc{
			ID: e.ID, URL: e.URL, Description: e.Description, EventTypes: nonNil(e.EventTypes),
			Enabled: e.Enabled, DisabledReason: e.DisabledReason,
			EnabledAt: e.EnabledAt.UTC(), CreatedAt: e.CreatedAt.UTC(), UpdatedAt: e.UpdatedAt.UTC(),
			SealedSecret: e.SealedSecret, SealedPreviousSecret: e.SealedPreviousSecret, PreviousUntil: timeOrNil(e.PreviousUntil),
		}
	}
	return out
}

func toWebhooks(docs []webhookDoc) []webhookdomain.Endpoint {
	out := make([]webhookdomain.Endpoint, len(docs))
	for i, d := range docs {
		out[i] = webhookdomain.Endpoint{
			ID: d.ID, URL: d.URL, Description: d.Description, EventTypes: nonNil(d.EventTypes),
			Enabled: d.Enabled, DisabledReason: d.DisabledReason,
			EnabledAt: d.EnabledAt.UTC(), CreatedAt: d.CreatedAt.UTC(), UpdatedAt: d.UpdatedAt.UTC(),
			SealedSecret: d.SealedSecret, SealedPreviousSecret: d.SealedPreviousSecret,
		}
		if d.PreviousUntil != nil {
			out[i].PreviousUntil = d.PreviousUntil.UTC()
		}
	}
	return out
}

func fromLTIRegistrations(regs []ltidomain.Registration) []ltiRegistrationDoc {
	out := make([]ltiRegistrationDoc, len(regs))
	for i, r := range regs {
		out[i] = ltiRegistrationDoc{
			ID: r.ID, Issuer: r.Issuer, ClientID: r.ClientID, DeploymentIDs: nonNil(r.DeploymentIDs),
			AuthLoginURL: r.AuthLoginURL, JWKSURL: r.JWKSURL, AuthTokenURL: r.AuthTokenURL,
			CreatedAt: r.CreatedAt.UTC(), UpdatedAt: r.UpdatedAt.UTC(),
		}
	}
	return out
}

// ltiDeployments is the LTIDeployments field of a workspace with regs:
// never null, so that an earlier document, which lacks it, is told apart.
func ltiDeployments(regs []ltidomain.Registration) []string {
	out := []string{}
	for _, r := range regs {
		for _, d := range r.DeploymentIDs {
			out = append(out, ltiPairID(r.Issuer, d))
		}
	}
	return out
}

func toLTIRegistrations(docs []ltiRegistrationDoc) []ltidomain.Registration {
	out := make([]ltidomain.Registration, len(docs))
	for i, d := range docs {
		out[i] = ltidomain.Registration{
			ID: d.ID, Issuer: d.Issuer, ClientID: d.ClientID, DeploymentIDs: nonNil(d.DeploymentIDs),
			AuthLoginURL: d.AuthLoginURL, JWKSURL: d.JWKSURL, AuthTokenURL: d.AuthTokenURL,
			CreatedAt: d.CreatedAt.UTC(), UpdatedAt: d.UpdatedAt.UTC(),
		}
	}
	return out
}

func fromWorkspace(w *domain.Workspace) workspaceDoc {
	keys := w.Keys()
	d := workspaceDoc{
		ID:                 w.ID(),
		Name:               w.Name(),
		NameKey:            domain.NameKey(w.Name()),
		Type:               string(w.Type()),
		Address:            addressDoc(w.Address()),
		Products:           nonNil(w.Products()),
		ObjectiveDocuments: nonNil(w.ObjectiveDocuments()),
		Tags:               fromTags(w.Tags()),
		SupportToolID:      w.SupportToolID(),
		CreatedBy:          w.CreatedBy(),
		Managers:           nonNil(w.Managers()),
		Keys:               make([]keyDoc, len(keys)),
		RegistrationCodes:  nonNil(w.RegistrationCodes()),
		LTIRegistrations:   fromLTIRegistrations(w.LTIRegistrations().All()),
		LTIDeployments:     ltiDeployments(w.LTIRegistrations().All()),
		Webhooks:           fromWebhooks(w.Webhooks().All()),
		CreateFingerprint:  w.CreateFingerprint(),
		SchemaVersion:      domain.SchemaVersion,
		CreatedAt:          w.CreatedAt().UTC(),
		UpdatedAt:          w.UpdatedAt().UTC(),
		DeletedAt:          timeOrNil(w.DeletedAt()),
		TokenCutoff:        timeOrNil(w.TokenCutoff()),
		Revision:           w.Revision(),
		VisibleTo:          append([]string{w.ID()}, w.Managers()...),
		Outbox:             fromEvents(w.PendingEvents()),
	}
	d.PendingSince = oldest(d.Outbox)
	if parent := w.ParentID(); parent != "" {
		d.ParentID = &parent
	}
	if r, ok := w.RateLimit(); ok {
		d.RateLimit = &rateDoc{PerSecond: r.PerSecond, Burst: r.Burst}
	}
	for i, k := range keys {
		d.Keys[i] = fromKey(k)
	}
	return d
}

func fromKey(k domain.KeyPair) keyDoc {
	return keyDoc{
		AppKey:       k.AppKey,
		SealedSecret: k.SealedSecret,
		SecretDigest: k.SecretDigest,
		Role:         string(k.Role),
		Name:         k.Name,
		Tags:         fromTags(k.Tags),
		CreatedAt:    k.CreatedAt.UTC(),
		UpdatedAt:    k.UpdatedAt.UTC(),
		ExpiresAt:    timeOrNil(k.ExpiresAt),
	}
}

func (d *workspaceDoc) toWorkspace() *domain.Workspace {
	s := domain.StoredWorkspace{
		ID:                 d.ID,
		Name:               d.Name,
		Type:               domain.Type(d.Type),
		Address:            domain.Address(d.Address),
		Products:           d.Products,
		ObjectiveDocuments: d.ObjectiveDocuments,
		RateLimit:          (*domain.RateLimit)(d.RateLimit),
		Tags:               toTags(d.Tags),
		SupportToolID:      d.SupportToolID,
		CreatedBy:          d.CreatedBy,
		Managers:           d.Managers,
		Keys:               make([]domain.KeyPair, len(d.Keys)),
		RegistrationCodes:  d.RegistrationCodes,
		LTIRegistrations:   toLTIRegistrations(d.LTIRegistrations),
		Webhooks:           toWebhooks(d.Webhooks),
		CreateFingerprint:  d.CreateFingerprint,
		CreatedAt:          d.CreatedAt.UTC(),
		UpdatedAt:          d.UpdatedAt.UTC(),
		Revision:           d.Revision,
	}
	if d.ParentID != nil {
		s.ParentID = *d.ParentID
	}
	if d.DeletedAt != nil {
		s.DeletedAt = d.DeletedAt.UTC()
	}
	if d.TokenCutoff != nil {
		s.TokenCutoff = d.TokenCutoff.UTC()
	}
	for i, k := range d.Keys {
		s.Keys[i] = domain.KeyPair{
			AppKey:       k.AppKey,
			SealedSecret: k.SealedSecret,
			SecretDigest: k.SecretDigest,
			Role:         domain.KeyRole(k.Role),
			Name:         k.Name,
			Tags:         toTags(k.Tags),
			CreatedAt:    k.CreatedAt.UTC(),
			UpdatedAt:    k.UpdatedAt.UTC(),
		}
		if k.ExpiresAt != nil {
			s.Keys[i].ExpiresAt = k.ExpiresAt.UTC()
		}
	}
	return domain.UnmarshalWorkspaceFromDatabase(s)
}

func fromTags(tags []domain.Tag) []tagDoc {
	out := make([]tagDoc, len(tags))
	for i, t := range tags {
		out[i] = tagDoc(t)
	}
	return out
}

func toTags(tags []tagDoc) []domain.Tag {
	out := make([]domain.Tag, len(tags))
	for i, t := range tags {
		out[i] = domain.Tag(t)
	}
	return out
}

// nonNil stores an empty array rather than null, so array queries behave
// the same on every document.
func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

// oldest is when the first of events occurred; nil when there are none.
func oldest(events []eventDoc) *time.Time {
	var first *time.Time
	for _, e := range events {
		if first == nil || e.OccurredAt.Before(*first) {
			at := e.OccurredAt
			first = &at
		}
	}
	return first
}

// eventDoc is an event as a workspace's outbox holds it (Key is the change
// key), and, with an _id and an id, as the events collection holds it.
type eventDoc struct {
	Key           string    `bson:"key"`
	Type          string    `bson:"type"`
	OccurredAt    time.Time `bson:"occurredAt"`
	WorkspaceID   string    `bson:"workspaceId"`
	Managers      []string  `bson:"managers"`
	Actor         actorDoc  `bson:"actor"`
	Target        targetDoc `bson:"target"`
	RequestID     string    `bson:"requestId"`
	ChangedFields []string  `bson:"changedFields"`
	// Reason and EventID are carried by the types that say so; absent
	// otherwise.
	Reason  string `bson:"reason,omitempty"`
	EventID string `bson:"eventId,omitempty"`
}

type actorDoc struct {
	System      bool   `bson:"system"`
	WorkspaceID string `bson:"workspaceId"`
	AppKey      string `bson:"appKey"`
	// PortalLinkID is an administrator's in the portal; absent for every
	// other actor.
	PortalLinkID string `bson:"portalLinkId,omitempty"`
}

type targetDoc struct {
	Type string `bson:"type"`
	ID   string `bson:"id"`
}

// publishedEventDoc is an event of the audit trail. Its _id is the change
// key, so a second publish of the same change is a duplicate key; id is the
// public, time-ordered id lists are sorted and paged by.
type publishedEventDoc struct {
	Key   string   `bson:"_id"`
	ID    string   `bson:"id"`
	Event eventDoc `bson:",inline"`
}

func fromEvents(events []domain.Event) []eventDoc {
	out := make([]eventDoc, len(events))
	for i, e := range events {
		out[i] = eventDoc{
			Key:           e.Key,
			Type:          string(e.Type),
			OccurredAt:    e.OccurredAt.UTC(),
			WorkspaceID:   e.WorkspaceID,
			Managers:      nonNil(e.Managers),
			Actor:         actorDoc(e.Actor),
			Target:        targetDoc(e.Target),
			RequestID:     e.RequestID,
			ChangedFields: nonNil(e.ChangedFields),
			Reason:        e.Reason,
			EventID:       e.EventID,
		}
	}
	return out
}

func (d *publishedEventDoc) toEvent() domain.Event {
	e := d.Event
	return domain.Event{
		ID:            d.ID,
		Key:           d.Key,
		Type:          domain.EventType(e.Type),
		OccurredAt:    e.OccurredAt.UTC(),
		WorkspaceID:   e.WorkspaceID,
		Managers:      e.Managers,
		Actor:         domain.Actor(e.Actor),
		Target:        domain.Target(e.Target),
		RequestID:     e.RequestID,
		ChangedFields: e.ChangedFields,
		Reason:        e.Reason,
		EventID:       e.EventID,
	}
}
