package mongostore

import "go.mongodb.org/mongo-driver/v2/bson"

// DeclaredIndexes are the key patterns of the indexes Prepare creates, by
// collection (the _id indexes aside).
func DeclaredIndexes() map[string][]bson.D {
	out := map[string][]bson.D{}
	for _, ix := range indexes {
		out[ix.collection] = append(out[ix.collection], ix.model(0).Keys.(bson.D))
	}
	return out
}
