package mongostore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// Revision claims: how Update checks the revision with a write by _id.
//
// The check was the filter {_id, revision}. On the embedded store any
// filter but a lone _id equality reads every workspace document (5 to 8 s
// per update at 50,000, past the services' call timeout; see
// bench/store-scale.md). Instead, an Update first inserts a claim whose _id
// is "<workspace id>@<revision it read>.<k>": _id is unique, so of the
// writers that read one revision, one inserts the claim and the others get
// a duplicate key (ErrRevisionChanged). The claim holder checks that the
// workspace is still at that revision (a claim is released once its write
// moved the revision on, so a writer that read an old revision may get the
// claim, and then finds the workspace past it), writes the workspace by _id
// alone, and releases the claim. Only claims of writes in flight, or whose
// outcome is unknown, stay.
//
// A claim whose holder died before writing would block the workspace, so a
// claim older than claimStale, on a workspace still at that revision, is
// taken over by the next attempt (k+1). A writer gives up its claim when
// its write surely failed.
const RevisionClaimsCollection = "revision_claims"

// claimStale is how old a claim must be before it may be taken over: far
// longer than any write takes within the services' timeouts.
const claimStale = time.Minute

// claimTakeovers bounds the takeovers one Update attempts.
const claimTakeovers = 3

type claimDoc struct {
	ID        string    `bson:"_id"`
	CreatedAt time.Time `bson:"createdAt"`
}

// claimRevision claims the move of workspace id from revision rev. It
// returns a function that releases the claim and the workspace's outbox as
// stored at that revision (read to check the revision, and what Update
// rewrites), ErrRevisionChanged when another writer holds or used it, or
// ErrNotFound.
func (r *Repository) claimRevision(ctx context.Context, id string, rev int64) (func(context.Context), []bson.Raw, error) {
	for k := range claimTakeovers {
		claim := fmt.Sprintf("%s@%d.%d", id, rev, k)
		err := r.do(ctx, func(ctx context.Context) error {
			_, err := r.claims.InsertOne(ctx, claimDoc{ID: claim, CreatedAt: r.now().UTC()})
			return err
		})
		if err == nil {
			release := func(ctx context.Context) {
				_ = r.do(ctx, func(ctx context.Context) error {
					_, err := r.claims.DeleteOne(ctx, bson.D{{Key: "_id", Value: claim}})
					return err
				})
			}
			// The claim of a revision is released once the write moved
			// past it, so holding it proves nothing until the workspace
			// is seen still at that revision. No other claimed write can
			// move it meanwhile.
			var doc struct {
				Revision int64      `bson:"revision"`
				Outbox   []bson.Raw `bson:"outbox"`
			}
			err := r.do(ctx, func(ctx context.Context) error {
				return r.workspaces.FindOne(ctx, bson.D{{Key: "_id", Value: id}},
					options.FindOne().SetProjection(bson.D{{Key: "revision", Value: 1}, {Key: "outbox", Value: 1}})).Decode(&doc)
			})
			switch {
			case errors.Is(err, mongo.ErrNoDocuments):
				err = domain.ErrNotFound
			case err != nil:
				err = storeError("read workspace", err)
			case doc.Revision != rev:
				err = domain.ErrRevisionChanged
			}
			if err != nil {
				release(context.WithoutCancel(ctx))
				return nil, nil, err
			}
			return release, doc.Outbox, nil
		}
		if !mongo.IsDuplicateKeyError(err) {
			return nil, nil, storeError("claim revision", err)
		}
		// Taken: by a writer that wrote (the revision moved on), one
		// writing now, or one that died before writing.
		var held claimDoc
		err = r.do(ctx, func(ctx context.Context) error {
			return r.claims.FindOne(ctx, bson.D{{Key: "_id", Value: claim}}).Decode(&held)
		})
		if err != nil && !errors.Is(err, mongo.ErrNoDocuments) {
			return nil, nil, storeError("read revision claim", err)
		}
		if err == nil && held.CreatedAt.After(r.now().Add(-claimStale)) {
			return nil, nil, r.revisionChanged(ctx, id)
		}
		current, err := r.Get(ctx, id)
		if err != nil {
			return nil, nil, err
		}
		if current.Revision() != rev {
			return nil, nil, domain.ErrRevisionChanged
		}
	}
	return nil, nil, domain.ErrRevisionChanged
}

// revisionChanged answers a lost claim: ErrNotFound when the workspace is
// gone, ErrRevisionChanged otherwise.
func (r *Repository) revisionChanged(ctx context.Context, id string) error {
	if _, err := r.Get(ctx, id); err != nil {
		return err
	}
	return domain.ErrRevisionChanged
}
