// Package changebus carries the workspace application's cache
// invalidations over the cache bus (pkg/cachebus): Notifier publishes the
// changes the application makes, Listener hands every replica's
// application the changes published, by any replica.
package changebus

import (
	"context"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/liveproctor/workspaces/pkg/cachebus"
	"github.com/liveproctor/workspaces/services/workspace/internal/app"
)

// publishTimeout bounds one publish, which the change's answer waits for.
const publishTimeout = time.Second

// Notifier publishes the application's changes on the bus.
type Notifier struct {
	client redis.UniversalClient
	logger *slog.Logger
}

var _ app.ChangeNotifier = (*Notifier)(nil)

// NewNotifier returns a Notifier publishing through client.
func NewNotifier(client redis.UniversalClient, logger *slog.Logger) *Notifier {
	return &Notifier{client: client, logger: logger}
}

// KeyPairsChanged publishes that the pairs appKeys changed.
func (n *Notifier) KeyPairsChanged(ctx context.Context, workspaceID string, appKeys []string) {
	n.publish(ctx, cachebus.Change{Kind: cachebus.KeyPairsChanged, WorkspaceID: workspaceID, AppKeys: appKeys})
}

// WorkspaceChanged publishes that the workspace changed.
func (n *Notifier) WorkspaceChanged(ctx context.Context, workspaceID string, appKeys []string) {
	n.publish(ctx, cachebus.Change{Kind: cachebus.WorkspaceChanged, WorkspaceID: workspaceID, AppKeys: appKeys})
}

// publish sends c once, before the change's answer, so that every replica
// is being told when the caller learns of the change. The change is stored
// already: a caller that gives up does not stop the message, and a failure
// is only logged.
func (n *Notifier) publish(ctx context.Context, c cachebus.Change) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), publishTimeout)
	defer cancel()
	if err := cachebus.Publish(ctx, n.client, c); err != nil {
		n.logger.Warn("other replicas could not be told of a change: they drop what they cached of it within CREDENTIAL_CACHE_TTL and ACCESS_CACHE_TTL",
			"workspace_id", c.WorkspaceID, "change", string(c.Kind), "error", err.Error())
	}
}

// Credentials is what the bus changes in the application: its credential
// cache.
type Credentials interface {
	ForgetCredentials(appKeys ...string)
	ForgetAllCredentials()
}

// Listener hands the bus's changes to the application.
type Listener struct{ app Credentials }

var _ cachebus.Handler = Listener{}

// NewListener returns the Listener of app.
func NewListener(app Credentials) Listener { return Listener{app: app} }

// Changed drops the changed pairs' credentials: a workspace's change names
// all its pairs.
func (l Listener) Changed(c cachebus.Change) { l.app.ForgetCredentials(c.AppKeys...) }

// Lost drops every credential.
func (l Listener) Lost() { l.app.ForgetAllCredentials() }
