package deliverystore

import "github.com/liveproctor/workspaces/services/workspace/internal/adapters/mongoconn"

// indexes are every index the store declares, besides each collection's
// _id index (a cursor's reads and conditional writes go by _id). A test
// checks every query the store sends against them (deliverystore_test.go).
var indexes = []mongoconn.Index{
	// Claim: the cursors due (range), the one due longest first (sort),
	// not leased (range). A leased cursor is due at its lease's end, so
	// the walk from the start of the index meets few that are held.
	{Collection: CursorsCollection, Name: "due", Keys: []string{"nextAttemptAt", "leaseUntil"}},
	// Wake: the live cursors not waiting on a retry (equalities; missing
	// is indexed as null) of the workspaces whose events were published.
	{Collection: CursorsCollection, Name: "wake", Keys: []string{"kind", "head.msgId", "workspaceId"}},
	// Forget: every cursor of an endpoint.
	{Collection: CursorsCollection, Name: "endpoint", Keys: []string{"endpointId"}},
	// Attempts: an endpoint's attempts, newest first (the index walked
	// backwards), in keyset pages on (attemptedAt, _id).
	{Collection: AttemptsCollection, Name: "endpoint_attempts", Keys: []string{"endpointId", "attemptedAt", "_id"}},
	// Retention: the store removes attempts older than it.
	{Collection: AttemptsCollection, Name: "expiry", Keys: []string{"attemptedAt"}, Expires: true},
}
