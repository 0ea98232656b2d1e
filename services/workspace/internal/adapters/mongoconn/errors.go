// Package mongoconn is what the workspace service's MongoDB adapters share
// (mongostore, the workspace store; deliverystore, the webhooks' delivery
// state): what a driver error means to their callers (Error, Unreachable,
// MayHaveApplied), and how each one's declared indexes are made and kept at
// start (Index, EnsureIndexes).
package mongoconn

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/x/mongo/driver/topology"

	"github.com/liveproctor/workspaces/pkg/breaker"
	"github.com/liveproctor/workspaces/pkg/fault"
)

// Unreachable reports whether a driver error may mean the store cannot be
// reached (the breaker then probes it): a timeout, a network error, no
// server selected, a disconnected client.
func Unreachable(err error) bool {
	var selection topology.ServerSelectionError
	return mongo.IsTimeout(err) || mongo.IsNetworkError(err) || errors.As(err, &selection) ||
		errors.Is(err, mongo.ErrClientDisconnected)
}

// MayHaveApplied reports whether a write that failed with err may have
// been applied all the same: the store became unreachable, or the call was
// ended, after the write was sent, or the primary applied it but could not
// confirm it as the write concern asks. breaker.ErrOpen is among them: it
// also ends calls in flight when the breaker opens.
func MayHaveApplied(err error) bool {
	return Unreachable(err) || errors.Is(err, breaker.ErrOpen) || writeConcernFailed(err) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// notNow are the codes of a server that refuses an operation for now, which
// it or another member takes later: it is not (or no longer) the primary,
// is stepping down or shutting down, or timed out reaching another member.
// They are the retryable errors of MongoDB's retryable-writes
// specification, and WriteConcernFailed (a write concern's wtimeout).
var notNow = []int{
	6,     // HostUnreachable
	7,     // HostNotFound
	64,    // WriteConcernFailed
	89,    // NetworkTimeout
	91,    // ShutdownInProgress
	189,   // PrimarySteppedDown
	262,   // ExceededTimeLimit
	9001,  // SocketException
	10107, // NotWritablePrimary
	11600, // InterruptedAtShutdown
	11602, // InterruptedDueToReplStateChange
	13435, // NotPrimaryNoSecondaryOk
	13436, // NotPrimaryOrSecondary
}

// refusedForNow reports whether the server answered err to refuse the
// operation for now: a code of notNow, the label the server or driver puts
// on retryable write errors, or a write concern the deployment could not
// meet.
func refusedForNow(err error) bool {
	var se mongo.ServerError
	if !errors.As(err, &se) {
		return false
	}
	return se.HasErrorLabel("RetryableWriteError") || slices.ContainsFunc(notNow, se.HasErrorCode) || writeConcernFailed(err)
}

// writeConcernFailed reports whether a write's error says the primary
// applied it but could not confirm it as the write concern asks.
func writeConcernFailed(err error) bool {
	var one mongo.WriteException
	var bulk mongo.BulkWriteException
	return errors.As(err, &one) && one.WriteConcernError != nil ||
		errors.As(err, &bulk) && bulk.WriteConcernError != nil
}

// Error turns a driver error into a fault: unreachable or slow
// stores, a server that refuses the operation for now (not the primary, a
// write concern not met: refusedForNow), an open breaker and an ended
// context are Unavailable (the caller may retry), anything else Internal.
// A duplicate key never reaches it: each write tells what it means first.
func Error(op string, err error) error {
	if Unreachable(err) || refusedForNow(err) || errors.Is(err, breaker.ErrOpen) || errors.Is(err, context.Canceled) {
		return fault.Wrap(fault.Unavailable, fmt.Errorf("%s: %w", op, err), "the workspace store is unavailable; retry shortly")
	}
	return fault.Wrap(fault.Internal, fmt.Errorf("%s: %w", op, err), "internal error")
}
