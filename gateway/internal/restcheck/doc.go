// Package restcheck holds every request to the REST contract that the
// served OpenAPI document publishes, before anything reaches a service: the
// JSON body (bodycheck.go, marshaler.go), the query string (query.go,
// queryrules.go), the update mask a body implies (updatemask.go) and the
// body's media type (mediatype.go). A refusal names the field to blame, for
// the error answer (package httperr).
//
// It exists beside protojson and grpc-gateway because they accept more than
// the document does. protojson takes proto names as well as JSON names,
// fields the document hides (updateMask, etag) and null for any field;
// what it refuses (an unknown or repeated key, a malformed duration) it
// refuses in its own words, with line and column, which an answer cannot
// pass on. grpc-gateway overwrites a body's id with the path's without a
// word; its query parser also takes proto names, cannot reach a JSON name
// with a dot in it (filter.address.state.include) and ignores parameters it
// does not know, as do the routes whose handlers never read the query; and
// it fills update masks for PATCH only, where PUT /api/workspace/{id} needs
// one.
package restcheck
