// Package deliverystore keeps the delivery state of webhooks in MongoDB,
// apart from the workspace documents that hold the endpoints' settings:
//
//   - webhook_cursors: where each delivery stands. An endpoint has one live
//     cursor (_id is the endpoint's id) following its workspace's audit
//     trail, and beside it, for a while, a cursor per recovery, resend or
//     test message it was asked for. A dispatcher claims a due cursor with
//     one conditional findAndModify that leases it, and settles it with a
//     write conditional on the lease's token (cursors.go);
//   - webhook_attempts: every attempt made, for the endpoint's owner to
//     page through, removed by a TTL index after the retention
//     (attempts.go).
//
// Every write is to one document, and every query has an index
// (indexes.go).
package deliverystore

import (
	"context"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/liveproctor/workspaces/pkg/breaker"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/mongoconn"
	webhookapp "github.com/liveproctor/workspaces/services/workspace/internal/webhook/app"
)

// Collection names.
const (
	CursorsCollection  = "webhook_cursors"
	AttemptsCollection = "webhook_attempts"
)

// Store is the webhooks' delivery state on a MongoDB database.
type Store struct {
	cursors  *mongo.Collection
	attempts *mongo.Collection
	// retention is how long attempts are kept: the expireAfterSeconds of
	// their TTL index.
	retention time.Duration
	now       func() time.Time
	do        mongoconn.Do
}

var (
	_ webhookapp.Deliveries = (*Store)(nil)
	_ webhookapp.Cursors    = (*Store)(nil)
)

// Option changes how New builds a Store.
type Option func(*Store)

// WithBreaker sends every operation through b (the workspace store's: the
// same database).
func WithBreaker(b *breaker.Breaker) Option {
	return func(s *Store) { s.do = mongoconn.Through(b) }
}

// WithAttemptRetention keeps attempts for d (30 days by default).
func WithAttemptRetention(d time.Duration) Option {
	return func(s *Store) {
		if d > 0 {
			s.retention = d
		}
	}
}

// WithClock replaces time.Now for the times the store stamps itself (a
// cursor's making), for tests.
func WithClock(now func() time.Time) Option { return func(s *Store) { s.now = now } }

// New returns a store on db. Call Prepare once before use.
func New(db *mongo.Database, opts ...Option) *Store {
	s := &Store{
		cursors:   db.Collection(CursorsCollection),
		attempts:  db.Collection(AttemptsCollection),
		retention: 30 * 24 * time.Hour,
		now:       time.Now,
		do:        mongoconn.Through(nil),
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Prepare creates the indexes that are missing and moves the attempts'
// TTL to the configured retention, at every start.
func (s *Store) Prepare(ctx context.Context) error {
	for _, c := range []*mongo.Collection{s.cursors, s.attempts} {
		if err := mongoconn.EnsureIndexes(ctx, s.do, c, indexes, s.retention); err != nil {
			return err
		}
	}
	return nil
}
