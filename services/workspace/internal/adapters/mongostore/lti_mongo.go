package mongostore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// The reservations of LTI 1.3 (issuer, clientId) pairs, in
// lti_registrations. Registrations live in their workspace's document; a
// pair is unique across workspaces because it has one reservation document
// whose _id is the pair's digest, so the insert is the claim (as for app
// keys): one write, no transaction across documents. Every query here is
// by _id but LTIClientIDs', which the issuer index serves.

// ltiPairID is the reservation's _id: a digest of the issuer, a NUL (which
// neither may hold) and the client id, so pairs of any length make ids of
// one length.
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
		return domain.ErrLTIRegistrationTaken
	default:
		return storeError("reserve an LTI registration", err)
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
		return domain.LTIReservation{}, storeError("read an LTI reservation", err)
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
		return storeError("release an LTI reservation", err)
	}
	return nil
}

// LTIClientIDs reads the issuer's reservations on the issuer index, in
// client id order, only the client ids: on MongoDB the index answers it
// alone.
func (r *Repository) LTIClientIDs(ctx context.Context, issuer string, limit int) ([]string, error) {
	var docs []struct {
		ClientID string `bson:"clientId"`
	}
	err := r.do(ctx, func(ctx context.Context) error {
		cur, err := r.lti.Find(ctx, bson.D{{Key: "issuer", Value: issuer}}, options.Find().
			SetSort(bson.D{{Key: "clientId", Value: 1}}).
			SetLimit(int64(limit)).
			SetProjection(bson.D{{Key: "_id", Value: 0}, {Key: "clientId", Value: 1}}))
		if err != nil {
			return err
		}
		return cur.All(ctx, &docs)
	})
	if err != nil {
		return nil, storeError("find an issuer's LTI reservations", err)
	}
	ids := make([]string, len(docs))
	for i, d := range docs {
		ids[i] = d.ClientID
	}
	return ids, nil
}
