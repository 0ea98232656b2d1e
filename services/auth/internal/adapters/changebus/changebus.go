// Package changebus connects the auth application to the cache bus
// (pkg/cachebus): Listener hands it the changes every replica of both
// services publishes, and Publisher publishes the key pairs a caller of
// ForgetKeyPairAccess names.
package changebus

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/liveproctor/workspaces/pkg/cachebus"
	"github.com/liveproctor/workspaces/pkg/redisconn"
	"github.com/liveproctor/workspaces/services/auth/internal/app"
)

// Publisher publishes on the bus.
type Publisher struct{ client redis.UniversalClient }

var _ app.ChangePublisher = Publisher{}

// NewPublisher returns a Publisher publishing through client.
func NewPublisher(client redis.UniversalClient) Publisher { return Publisher{client: client} }

// PublishKeyPairsChanged publishes that the pairs appKeys changed.
func (p Publisher) PublishKeyPairsChanged(ctx context.Context, workspaceID string, appKeys []string) error {
	err := cachebus.Publish(ctx, p.client, cachebus.Change{Kind: cachebus.KeyPairsChanged, WorkspaceID: workspaceID, AppKeys: appKeys})
	if err != nil {
		return redisconn.Outage("publish changed key pairs", err, "the other replicas could not be told; retry shortly")
	}
	return nil
}

// Access is what the bus changes in the application: its remembered
// access checks.
type Access interface {
	KeyPairsChanged(appKeys []string)
	WorkspaceChanged(workspaceID string, appKeys []string)
	ForgetAllAccess()
}

// Listener hands the bus's changes to the application.
type Listener struct{ app Access }

var _ cachebus.Handler = Listener{}

// NewListener returns the Listener of app.
func NewListener(app Access) Listener { return Listener{app: app} }

// Changed tells the application what changed.
func (l Listener) Changed(c cachebus.Change) {
	switch c.Kind {
	case cachebus.KeyPairsChanged:
		l.app.KeyPairsChanged(c.AppKeys)
	case cachebus.WorkspaceChanged:
		l.app.WorkspaceChanged(c.WorkspaceID, c.AppKeys)
	}
}

// Lost drops every remembered access check.
func (l Listener) Lost() { l.app.ForgetAllAccess() }
