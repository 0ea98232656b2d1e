package docvalidation

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// A login's body alone held to its schema, compiled once from the document
// by santhosh-tekuri/jsonschema (decoding the body included, which the
// validator needs as Go values).
func BenchmarkJSONSchemaLogin(b *testing.B) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(document(b)))
	if err != nil {
		b.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft4) // OpenAPI 3.0's schemas are draft 4's, extended
	if err := c.AddResource("openapi.json", doc); err != nil {
		b.Fatal(err)
	}
	schema, err := c.Compile("openapi.json#/components/schemas/CreateSdkTokenRequest")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		var v any
		if err := json.Unmarshal(loginBody, &v); err != nil {
			b.Fatal(err)
		}
		if err := schema.Validate(v); err != nil {
			b.Fatal(err)
		}
	}
}
