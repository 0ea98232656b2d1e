package mongostore

import (
	"context"
	"sync"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// The embedded stand-in. `make run` and the tests use FerretDB v1.24 (SQLite
// backend) in place of MongoDB. The adapter is written for MongoDB; what the
// stand-in does differently is handled here, and only here:
//
//   - Its updates are not atomic: it reads the documents a filter matches,
//     then writes each by _id, so two updateOne({_id, revision: n}) can both
//     match and the second undoes the first. On the stand-in, writes of one
//     workspace document are therefore serialised within the process
//     (serialise), which makes it correct for one workspace-service replica
//     and no more.
//   - It refuses TTL indexes, so events past their retention are removed by
//     a loop (RunEventRetention) instead.
//   - It pushes down no filter but a lone _id equality, and no sort: every
//     other query reads the whole collection. That is measured and stated
//     (README, bench/store-scale.md), not designed around.
//
// It is recognised by buildInfo, which FerretDB answers with a
// ferretdbVersion field.
type standIn struct {
	version string // "" on MongoDB
	mu      sync.Mutex
	locks   map[string]*workspaceLock
}

// workspaceLock is the lock of one workspace's writes; refs counts its
// holders and waiters, so the map keeps only locks in use.
type workspaceLock struct {
	sync.Mutex
	refs int
}

// detectStandIn asks the store what it is.
func (r *Repository) detectStandIn(ctx context.Context) error {
	var info struct {
		FerretDB string `bson:"ferretdbVersion"`
	}
	err := r.do(ctx, func(ctx context.Context) error {
		return r.workspaces.Database().RunCommand(ctx, bson.D{{Key: "buildInfo", Value: 1}}).Decode(&info)
	})
	if err != nil {
		return storeError("buildInfo", err)
	}
	r.standIn.version = info.FerretDB
	return nil
}

// StandIn returns the FerretDB version when Prepare found the store to be
// the embedded stand-in, and "" on MongoDB.
func (r *Repository) StandIn() string { return r.standIn.version }

// serialise waits until this process writes workspace id from nowhere else,
// on the stand-in, and returns the function that lets the next writer in. On
// MongoDB it does nothing: its conditional updates are atomic.
func (s *standIn) serialise(id string) (unlock func()) {
	if s.version == "" {
		return func() {}
	}
	s.mu.Lock()
	if s.locks == nil {
		s.locks = map[string]*workspaceLock{}
	}
	l := s.locks[id]
	if l == nil {
		l = &workspaceLock{}
		s.locks[id] = l
	}
	l.refs++
	s.mu.Unlock()
	l.Lock()
	return func() {
		l.Unlock()
		s.mu.Lock()
		if l.refs--; l.refs == 0 {
			delete(s.locks, id)
		}
		s.mu.Unlock()
	}
}
