package mongoconn

import (
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/liveproctor/workspaces/pkg/fault"
)

// A server that refuses an operation for now (a replica set between
// primaries, a write concern not met) is an outage of the store to the
// caller, as one that cannot be reached is; a write concern error also
// means the write may be stored. Other server errors stay Internal.
func TestErrorOfServerRefusals(t *testing.T) {
	for _, tt := range []struct {
		name       string
		err        error
		kind       fault.Kind
		mayApplied bool
	}{
		{"not writable primary", mongo.CommandError{Code: 10107, Name: "NotWritablePrimary"}, fault.Unavailable, false},
		{"stepped down, in a write", mongo.WriteException{WriteErrors: mongo.WriteErrors{{Code: 189}}}, fault.Unavailable, false},
		{"labelled retryable", mongo.CommandError{Code: 1, Labels: []string{"RetryableWriteError"}}, fault.Unavailable, false},
		{"write concern timeout", mongo.WriteException{WriteConcernError: &mongo.WriteConcernError{Code: 64, Name: "WriteConcernFailed"}}, fault.Unavailable, true},
		{"write concern, bulk", mongo.BulkWriteException{WriteConcernError: &mongo.WriteConcernError{Code: 100}}, fault.Unavailable, true},
		// Each write tells a duplicate key (a conflict) before Error.
		{"duplicate key", mongo.WriteException{WriteErrors: mongo.WriteErrors{{Code: 11000}}}, fault.Internal, false},
		{"a bad query", mongo.CommandError{Code: 2, Name: "BadValue"}, fault.Internal, false},
		{"not a server's", errors.New("boom"), fault.Internal, false},
	} {
		if got := fault.KindOf(Error("op", tt.err)); got != tt.kind {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.kind)
		}
		if got := MayHaveApplied(tt.err); got != tt.mayApplied {
			t.Errorf("%s: MayHaveApplied = %v, want %v", tt.name, got, tt.mayApplied)
		}
	}
}
