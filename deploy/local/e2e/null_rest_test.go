package e2e

import (
	"bytes"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// nullCase is a JSON body holding null at one field the document does not
// mark nullable, and that field's path as the error names it.
type nullCase struct {
	field string
	body  any
}

// nullCases walks schema and returns a case for every field below it, at
// every depth (an array's first element standing for all), whose schema is
// not nullable; path is where schema sits, wrap builds the body around a
// value put there.
func nullCases(schema *openapi3.Schema, path string, wrap func(any) any, depth int) []nullCase {
	if schema == nil || depth > 8 {
		return nil
	}
	var out []nullCase
	if path != "" && !schema.Nullable {
		out = append(out, nullCase{field: path, body: wrap(nil)})
	}
	switch {
	case schema.Type.Is(openapi3.TypeArray) && schema.Items != nil:
		out = append(out, nullCases(schema.Items.Value, path+"[0]", func(v any) any { return wrap([]any{v}) }, depth+1)...)
	case schema.Type.Is(openapi3.TypeObject):
		for _, name := range slices.Sorted(maps.Keys(schema.Properties)) {
			field := name
			if path != "" {
				field = path + "." + name
			}
			out = append(out, nullCases(schema.Properties[name].Value, field,
				func(v any) any { return wrap(map[string]any{name: v}) }, depth+1)...)
		}
	}
	return out
}

// Every request body the document describes refuses null, at every depth,
// wherever the document does not mark the field nullable: 400 naming the
// field. The cases are generated from the served document, so a field
// added to it is covered without a change here. An update refused so leaves
// the workspace as it was.
func TestNullIsRefusedWhereTheDocumentDoesNotAllowIt(t *testing.T) {
	root := asRoot(t)
	id := unique(t, "nulls")
	created := root.create(id, map[string]any{"address": map[string]any{"city": "Austin", "state": "US-TX", "country": "US"}})
	appKey := created.AppKeys.Server.ConsumerKey
	reg := root.register(id, canvasRegistration(clientID(t, "nulls")))
	hook := root.addWebhook(id, map[string]any{"url": "https://hooks.example.com/nulls"})
	link := root.newPortalLink(id, nil)
	params := map[string]string{"id": id, "appKey": appKey, "registrationId": reg.ID, "webhookId": hook.ID, "launchId": unknownLaunchID,
		"linkId": link.ID}

	ran := 0
	for path, item := range apiDoc.doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.RequestBody == nil || op.RequestBody.Value.Content.Get("application/json") == nil {
				continue
			}
			target := path
			for name, value := range params {
				target = strings.ReplaceAll(target, "{"+name+"}", value)
			}
			if strings.Contains(target, "{") {
				t.Fatalf("%s %s: no value for its path parameters", method, path)
			}
			schema := op.RequestBody.Value.Content.Get("application/json").Schema.Value
			for _, c := range nullCases(schema, "", func(v any) any { return v }, 0) {
				before := root.get("/api/workspace/" + id).body
				name := fmt.Sprintf("%s %s with %s null", method, path, c.field)
				t.Run(name, func(t *testing.T) {
					resp := root.withT(t).do(method, target, c.body)
					e := resp.wantError(http.StatusBadRequest, "INVALID_ARGUMENT", c.field)
					if d := e.GetError().GetDetails(); len(d) != 1 || d[0].GetField() != c.field {
						t.Fatalf("details %v, want one naming %s", d, c.field)
					}
					if after := root.withT(t).get("/api/workspace/" + id).body; !bytes.Equal(after, before) {
						t.Fatalf("the workspace changed:\n%s\nbecame\n%s", before, after)
					}
				})
				ran++
			}
		}
	}
	if ran < 20 {
		t.Fatalf("only %d null cases came from the document", ran)
	}
	// The nulls the document allows do what it says.
	var w workspace
	root.put("/api/workspace/"+id, `{"parentWorkspaceId":null,"rateLimit":null}`).ok(&w)
	if w.ParentWorkspaceID != nil {
		t.Fatalf("parentWorkspaceId after null: %v", *w.ParentWorkspaceID)
	}
}
