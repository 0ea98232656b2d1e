package scorestore

import (
	"go.mongodb.org/mongo-driver/v2/bson"

	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/mongoconn"
)

// DeclaredIndexes are the key patterns of the indexes Prepare creates, by
// collection (the _id index aside).
func DeclaredIndexes() map[string][]bson.D { return mongoconn.Declared(indexes) }
