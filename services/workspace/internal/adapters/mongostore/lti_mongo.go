package mongostore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/mongoconn"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// The reservations of LTI 1.3 (issuer, clientId) pairs, in
// lti_registrations. Registrations live in their workspace's document; a
// pair is unique across workspaces because it has one reservation document
// whose _id is the pair's digest, so the insert is the claim (as for app
// keys): one write, no transaction across documents. Every query of the
// reservations is by _id; a login without client_id reads the workspaces
// instead (WorkspacesWithLTIIssuer), where the registrations and their
// deployment ids are.

// ltiPairID is the reservation's _id: a digest of the issuer, a NUL (which
// neither may hold) and the client id, so pairs of any length make ids of
// one length. A workspace's ltiDeployments hold the same digest of the
// issuer and each of its deployment ids.
func ltiPairID(issuer, clientID string) string {
	sum := sha256.Sum256([]byte(issuer + "\x00" + clientID))
	return hex.EncodeToString(sum[:])
}

// ReserveLTIRegistration inserts the pair's reservation: a duplicate _id
// means the pair is held.
func (r *Repository) ReserveLTIRegistration(ctx context.Context, issuer, clientID string, res domain.LTIReservation) error {
	doc := ltiReservationDoc{
		ID: ltiPairID(issuer, clientID), Issuer: issuer, ClientID: clientID,
		WorkspaceID: res.WorkspaceID, RegistrationID: res.RegistrationID, CreatedAt: res.CreatedAt.UTC(),
	}
	err := r.do(ctx, func(ctx context.Context) error {
		_, err := r.lti.InsertOne(ctx, doc)
		return err
	})
	switch {
	case err == nil:
		return nil
	case mongo.IsDuplicateKeyError(err):
		return ltidomain.ErrRegistrationTaken
	default:
		return mongoconn.Error("reserve an LTI registration", err)
	}
}

// LTIReservation reads the pair's reservation.
func (r *Repository) LTIReservation(ctx context.Context, issuer, clientID string) (domain.LTIReservation, error) {
	var doc ltiReservationDoc
	err := r.do(ctx, func(ctx context.Context) error {
		return r.lti.FindOne(ctx, bson.D{{Key: "_id", Value: ltiPairID(issuer, clientID)}}).Decode(&doc)
	})
	if errors.Is(err, mongo.ErrNoDocuments) {
		return domain.LTIReservation{}, domain.ErrNotFound
	}
	if err != nil {
		return domain.LTIReservation{}, mongoconn.Error("read an LTI reservation", err)
	}
	return domain.LTIReservation{WorkspaceID: doc.WorkspaceID, RegistrationID: doc.RegistrationID, CreatedAt: doc.CreatedAt.UTC()}, nil
}

// ReleaseLTIRegistration deletes the pair's reservation if registrationID
// holds it.
func (r *Repository) ReleaseLTIRegistration(ctx context.Context, issuer, clientID, registrationID string) error {
	err := r.do(ctx, func(ctx context.Context) error {
		_, err := r.lti.DeleteOne(ctx, bson.D{{Key: "_id", Value: ltiPairID(issuer, clientID)}, {Key: "registrationId", Value: registrationID}})
		return err
	})
	if err != nil {
		return mongoconn.Error("release an LTI reservation", err)
	}
	return nil
}

// WorkspacesWithLTIIssuer finds active workspaces listing a registration
// of issuer that holds deploymentID, by the digest of the two in
// ltiDeployments (one registration must hold both, which an equality on
// each of two fields of the registrations' array would not ensure), or,
// without deploymentID, any registration of issuer.
func (r *Repository) WorkspacesWithLTIIssuer(ctx context.Context, issuer, deploymentID string, limit int) ([]*domain.Workspace, error) {
	filter := bson.D{{Key: "ltiRegistrations.issuer", Value: issuer}, {Key: "deletedAt", Value: nil}}
	if deploymentID != "" {
		filter = bson.D{{Key: "ltiDeployments", Value: ltiPairID(issuer, deploymentID)}, {Key: "deletedAt", Value: nil}}
	}
	var docs []workspaceDoc
	err := r.do(ctx, func(ctx context.Context) error {
		cur, err := r.workspaces.Find(ctx, filter, options.Find().SetLimit(int64(max(limit, 1))))
		if err != nil {
			return err
		}
		return cur.All(ctx, &docs)
	})
	if err != nil {
		return nil, mongoconn.Error("find the workspaces of an LTI issuer", err)
	}
	out := make([]*domain.Workspace, len(docs))
	for i := range docs {
		out[i] = docs[i].toWorkspace()
	}
	return out, nil
}
