package restrules

import "google.golang.org/protobuf/encoding/protojson"

// JSON is how the REST interface renders a message: every field, unset ones
// too (a missing parent reads as null), under its JSON name; proto3
// optional fields, such as deletedAt, are left out while unset. The gateway
// renders its answers with it and the workspace service a webhook's body
// (an event, as GET …/events shows it), so the two cannot drift apart.
var JSON = protojson.MarshalOptions{EmitUnpopulated: true}
