package domain

import (
	"time"

	webhookdomain "github.com/liveproctor/workspaces/services/workspace/internal/webhook/domain"
)

// What the workspace holds for webhooks: the endpoints its audit trail is
// delivered to. Their rules are the webhook context's
// (webhookdomain.Endpoints); the workspace adds what only it knows: the
// event types it publishes (which an endpoint's filter names), that a
// deleted workspace changes nothing, and the events its document records
// with each change.

// WebhookURLPolicy is the outbound rule an endpoint's URL is stored under
// (https on public hosts, but for WEBHOOK_ALLOW_INSECURE_HOSTS).
type WebhookURLPolicy = webhookdomain.URLPolicy

// webhookRules are the rules an endpoint's fields follow.
func webhookRules(urls WebhookURLPolicy) webhookdomain.Rules {
	types := make([]string, len(EventTypes))
	for i, t := range EventTypes {
		types[i] = string(t)
	}
	return webhookdomain.Rules{URLs: urls, EventTypes: types}
}

// CheckNewWebhook checks an endpoint's fields before anything is made for
// it, naming every one that breaks a rule.
func CheckNewWebhook(in webhookdomain.NewEndpoint, urls WebhookURLPolicy) error {
	return webhookdomain.CheckNewEndpoint(in, webhookRules(urls))
}

// CheckWebhookChanges checks the fields an update sets.
func CheckWebhookChanges(c webhookdomain.Changes, urls WebhookURLPolicy) error {
	return c.Check(webhookRules(urls))
}

// Webhooks are the workspace's webhook endpoints, to read; they change
// through the methods below.
func (w *Workspace) Webhooks() webhookdomain.Endpoints { return w.webhooks }

// AddWebhook adds the endpoint in with the id given, its secret sealed for
// that id, and returns it.
func (w *Workspace) AddWebhook(id string, in webhookdomain.NewEndpoint, sealedSecret []byte, urls WebhookURLPolicy, now time.Time) (webhookdomain.Endpoint, error) {
	if w.Deleted() {
		return webhookdomain.Endpoint{}, ErrDeleted
	}
	e, err := w.webhooks.Add(id, in, sealedSecret, webhookRules(urls), now)
	if err != nil {
		return webhookdomain.Endpoint{}, err
	}
	w.record(EventWebhookCreated, webhookTarget(id), now, nil)
	return e, nil
}

// UpdateWebhook makes the changes c sets to the endpoint id and returns it;
// changed is false when it was as c says already (nothing recorded).
func (w *Workspace) UpdateWebhook(id string, c webhookdomain.Changes, urls WebhookURLPolicy, now time.Time) (e webhookdomain.Endpoint, changed bool, err error) {
	if w.Deleted() {
		return webhookdomain.Endpoint{}, false, ErrDeleted
	}
	e, fields, err := w.webhooks.Update(id, c, webhookRules(urls), now)
	if err != nil || len(fields) == 0 {
		return e, false, err
	}
	w.record(EventWebhookUpdated, webhookTarget(id), now, fields)
	return e, true, nil
}

// RemoveWebhook removes the endpoint id and returns it.
func (w *Workspace) RemoveWebhook(id string, now time.Time) (webhookdomain.Endpoint, error) {
	if w.Deleted() {
		return webhookdomain.Endpoint{}, ErrDeleted
	}
	removed, err := w.webhooks.Remove(id)
	if err != nil {
		return webhookdomain.Endpoint{}, err
	}
	w.record(EventWebhookDeleted, webhookTarget(id), now, nil)
	return removed, nil
}

// RotateWebhookSecret makes sealedSecret the endpoint's secret, the one it
// replaces signing beside it for overlap, and returns the endpoint.
func (w *Workspace) RotateWebhookSecret(id string, sealedSecret []byte, overlap time.Duration, now time.Time) (webhookdomain.Endpoint, error) {
	if w.Deleted() {
		return webhookdomain.Endpoint{}, ErrDeleted
	}
	e, err := w.webhooks.RotateSecret(id, sealedSecret, overlap, now)
	if err != nil {
		return webhookdomain.Endpoint{}, err
	}
	w.record(EventWebhookSecretRotated, webhookTarget(id), now, nil)
	return e, nil
}

// DisableWebhook turns the endpoint id off for reason (delivery's
// decision), and reports whether it was on; only then is it recorded.
func (w *Workspace) DisableWebhook(id, reason string, now time.Time) (bool, error) {
	if w.Deleted() {
		return false, ErrDeleted
	}
	disabled, err := w.webhooks.Disable(id, reason, now)
	if disabled {
		w.record(EventWebhookDisabled, webhookTarget(id), now, nil).Reason = reason
	}
	return disabled, err
}

// RecordWebhookAttemptsExhausted records that delivery gave up the event
// eventID for the endpoint id: every attempt failed.
func (w *Workspace) RecordWebhookAttemptsExhausted(id, eventID string, now time.Time) error {
	if w.Deleted() {
		return ErrDeleted
	}
	if _, ok := w.webhooks.Get(id); !ok {
		return webhookdomain.ErrEndpointNotFound
	}
	w.record(EventWebhookAttemptsExhausted, webhookTarget(id), now, nil).EventID = eventID
	return nil
}

// webhookTarget is an endpoint as the target of an event.
func webhookTarget(id string) Target { return Target{Type: TargetWebhook, ID: id} }
