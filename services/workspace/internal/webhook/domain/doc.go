// Package domain holds the webhook context's rules: a workspace's webhook
// endpoints (where its audit trail is delivered, signed), their bounds, the
// rule of their URLs, and their secrets' rotation with an overlap.
//
// It is named domain, like every context's domain package (its folder,
// internal/webhook/domain, says which context); a file that imports both
// names this one webhookdomain. It imports nothing of the workspace
// context: the workspace domain holds the endpoints (Endpoints), gives in
// the event types it publishes, and records the events of their changes,
// so the dependency runs from the workspace to webhooks, never back.
// Besides the standard library it imports pkg/fault (error kinds) and
// pkg/outbound (the rule of a stored URL).
package domain
