package restdoc_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/liveproctor/workspaces/pkg/gen/openapi"
	"github.com/liveproctor/workspaces/pkg/grpcfault"
)

// load parses the committed document with an independent OpenAPI library
// and checks it is a valid OpenAPI 3 document.
func load(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData(openapi.JSON)
	if err != nil {
		t.Fatal(err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("the document is not valid OpenAPI: %v", err)
	}
	return doc
}

func TestDocumentIsValidOpenAPI3(t *testing.T) {
	doc := load(t)
	if !strings.HasPrefix(doc.OpenAPI, "3.") || doc.Info.Title == "" || doc.Info.Version == "" || len(doc.Servers) == 0 {
		t.Errorf("openapi %q, info %+v, servers %d", doc.OpenAPI, doc.Info, len(doc.Servers))
	}
}

// Every route of the contract is in the document, with the credentials it
// takes.
func TestEveryRouteWithItsSecurity(t *testing.T) {
	doc := load(t)
	routes := []struct{ method, path, security string }{
		{"GET", "/api/workspaces", "basic"},
		{"POST", "/api/workspaces", "basic"},
		{"GET", "/api/workspace/{id}", "basic"},
		{"GET", "/api/workspace/{id}/keys", "basic"},
		{"POST", "/api/workspace/{id}/keys", "basic"},
		{"POST", "/api/workspace/{id}/keys/{appKey}:rotate", "basic"},
		{"DELETE", "/api/workspace/{id}/keys/{appKey}", "basic"},
		{"GET", "/api/workspace/{id}/events", "basic"},
		{"GET", "/api/workspace/{id}/lti/registrations", "basic"},
		{"POST", "/api/workspace/{id}/lti/registrations", "basic"},
		{"GET", "/api/workspace/{id}/lti/registrations/{registrationId}", "basic"},
		{"DELETE", "/api/workspace/{id}/lti/registrations/{registrationId}", "basic"},
		{"POST", "/api/workspace/{id}/lti/registrations/{registrationId}/deployments", "basic"},
		{"DELETE", "/api/workspace/{id}/lti/registrations/{registrationId}/deployments/{deploymentId}", "basic"},
		{"POST", "/api/workspace/{id}/lti/registration-links", "basic"},
		{"GET", "/api/workspace/{id}/lti/launches/{launchId}", "basic"},
		{"GET", "/api/workspace/{id}/lti/launches/{launchId}/members", "basic"},
		{"POST", "/api/workspace/{id}/lti/launches/{launchId}/score", "basic"},
		{"GET", "/api/workspace/{id}/lti/scores/{scoreId}", "basic"},
		{"GET", "/api/workspace/{id}/webhooks", "basic"},
		{"POST", "/api/workspace/{id}/webhooks", "basic"},
		{"GET", "/api/workspace/{id}/webhooks/{webhookId}", "basic"},
		{"PATCH", "/api/workspace/{id}/webhooks/{webhookId}", "basic"},
		{"DELETE", "/api/workspace/{id}/webhooks/{webhookId}", "basic"},
		{"POST", "/api/workspace/{id}/webhooks/{webhookId}:rotateSecret", "basic"},
		{"GET", "/api/workspace/{id}/webhooks/{webhookId}/attempts", "basic"},
		{"POST", "/api/workspace/{id}/webhooks/{webhookId}:resend", "basic"},
		{"POST", "/api/workspace/{id}/webhooks/{webhookId}:recover", "basic"},
		{"POST", "/api/workspace/{id}/webhooks/{webhookId}:test", "basic"},
		{"POST", "/api/workspace/{id}/portal-links", "basic"},
		{"DELETE", "/api/workspace/{id}/portal-links/{linkId}", "basic"},
		{"POST", "/api/workspace", "basic"},
		{"PUT", "/api/workspace/{id}", "basic"},
		{"DELETE", "/api/workspace/{id}", "basic"},
		{"POST", "/api/workspace/{id}:undelete", "basic"},
		{"POST", "/api/login/sdk", "basic"},
		{"POST", "/api/logout/sdk", "basic"},
		{"GET", "/api/sdk/session", "bearer"},
		{"DELETE", "/api/sdk/session", "bearer"},
		{"GET", "/openapi.json", ""},
		{"POST", "/lti/v1/launch", ""},
		{"GET", "/lti/v1/workspaces/{id}/config.xml", ""},
		{"HEAD", "/lti/v1/workspaces/{id}/config.xml", ""},
		{"GET", "/lti/v1p3/login", ""},
		{"POST", "/lti/v1p3/login", ""},
		{"POST", "/lti/v1p3/launch", ""},
		{"POST", "/lti/v1p3/deep-linking", ""},
		{"GET", "/lti/v1p3/jwks.json", ""},
		{"GET", "/lti/v1p3/workspaces/{id}/canvas.json", ""},
		{"GET", "/lti/v1p3/register/{link}", ""},
	}
	count := 0
	for _, item := range doc.Paths.Map() {
		count += len(item.Operations())
	}
	if count != len(routes) {
		t.Errorf("%d operations, want %d", count, len(routes))
	}
	for _, r := range routes {
		item := doc.Paths.Find(r.path)
		if item == nil || item.GetOperation(r.method) == nil {
			t.Errorf("%s %s is missing", r.method, r.path)
			continue
		}
		op := item.GetOperation(r.method)
		var got []string
		for _, req := range *op.Security {
			for name := range req {
				got = append(got, name)
			}
		}
		if strings.Join(got, ",") != r.security {
			t.Errorf("%s %s: security %v, want %q", r.method, r.path, got, r.security)
		}
		if op.Summary == "" || op.OperationID == "" {
			t.Errorf("%s %s: no summary or operationId", r.method, r.path)
		}
	}
}

// ltiPages starts the paths of the LTI routes, whose refusals may be pages.
const ltiPages = "/lti/"

// Error answers are declared with the error body, their statuses drawn from
// the one error table.
func TestErrorResponsesComeFromTheTable(t *testing.T) {
	doc := load(t)
	known := map[int]bool{}
	for _, s := range grpcfault.Specs() {
		known[s.HTTPStatus] = true
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			for code, ref := range op.Responses.Map() {
				status, err := strconv.Atoi(code)
				if err != nil {
					t.Errorf("%s %s: response %q is not a status", method, path, code)
					continue
				}
				if status < 400 {
					continue
				}
				if !known[status] {
					t.Errorf("%s %s: %d is in no row of the error table", method, path, status)
				}
				if method == http.MethodHead {
					if len(ref.Value.Content) != 0 {
						t.Errorf("%s %s %d: a HEAD answer with a body", method, path, status)
					}
					continue
				}
				json := ref.Value.Content.Get("application/json")
				switch {
				case json != nil && json.Schema.Ref != "#/components/schemas/ErrorBody":
					t.Errorf("%s %s %d: schema %q", method, path, status, json.Schema.Ref)
				case json == nil && (!strings.HasPrefix(path, ltiPages) || ref.Value.Content.Get("text/html") == nil):
					// Only the LTI routes answer an LMS's browser
					// with pages.
					t.Errorf("%s %s %d: not the error body", method, path, status)
				}
			}
			// Public operations take no credentials, so they are never
			// 401; /openapi.json takes nothing that could be malformed.
			public := op.Security != nil && len(*op.Security) == 0
			if path != "/openapi.json" && op.Responses.Status(http.StatusBadRequest) == nil {
				t.Errorf("%s %s does not declare 400", method, path)
			}
			if !public && op.Responses.Status(http.StatusUnauthorized) == nil {
				t.Errorf("%s %s does not declare 401", method, path)
			}
		}
	}
	body := doc.Components.Schemas["Error"].Value
	for _, f := range []string{"code", "status", "message", "requestId", "details"} {
		if body.Properties[f] == nil {
			t.Errorf("the error schema lacks %s", f)
		}
	}
}

// The document describes what clients send and get, not the proto
// plumbing: no field masks or etags in requests, nullable parents, closed
// request bodies.
func TestRequestSchemas(t *testing.T) {
	doc := load(t)
	update := doc.Components.Schemas["UpdateWorkspaceRequest"].Value
	for _, hidden := range []string{"updateMask", "etag", "workspaceId"} {
		if update.Properties[hidden] != nil {
			t.Errorf("the update body documents %s", hidden)
		}
	}
	if p := update.Properties["parentWorkspaceId"]; p == nil || !p.Value.Nullable {
		t.Errorf("parentWorkspaceId is not nullable in updates")
	}
	create := doc.Components.Schemas["CreateWorkspaceRequest"].Value
	if strings.Join(create.Required, ",") != "id,name,type" {
		t.Errorf("create requires %v", create.Required)
	}
	if create.AdditionalProperties.Has == nil || *create.AdditionalProperties.Has {
		t.Errorf("create accepts unknown fields")
	}
	if got := create.Properties["type"].Value.Enum; len(got) != 2 {
		t.Errorf("type enum %v", got)
	}
	ws := doc.Components.Schemas["Workspace"].Value
	if p := ws.Properties["parentWorkspaceId"]; p == nil || !p.Value.Nullable || !slices.Contains(ws.Required, "parentWorkspaceId") {
		t.Errorf("a workspace's parentWorkspaceId must be present and nullable")
	}
	if slices.Contains(ws.Required, "deletedAt") || ws.Properties["createdAt"].Value.Format != "date-time" {
		t.Errorf("workspace times: %v", ws.Required)
	}
	del := doc.Paths.Find("/api/workspace/{id}").Delete
	for _, p := range del.Parameters {
		if p.Value.In == "query" {
			t.Errorf("delete takes query parameter %s", p.Value.Name)
		}
	}
	var names []string
	for _, p := range doc.Paths.Find("/api/workspaces").Get.Parameters {
		if p.Value.In == "query" {
			names = append(names, p.Value.Name)
		}
	}
	if got := strings.Join(names, ","); got != "filter.search,filter.address.state.include,pageSize,pageToken" {
		t.Errorf("list query parameters: %s", got)
	}
}

// What the service sends to a webhook is described too, under the 3.0
// extension x-webhooks: a POST whose body is the feed's Event, with the
// Standard Webhooks headers.
func TestWebhookDeliveryIsDescribed(t *testing.T) {
	doc := load(t)
	raw, ok := doc.Extensions["x-webhooks"]
	if !ok {
		t.Fatal("no x-webhooks")
	}
	var hooks map[string]struct {
		Post struct {
			Parameters []struct {
				Name     string `json:"name"`
				In       string `json:"in"`
				Required bool   `json:"required"`
			} `json:"parameters"`
			RequestBody struct {
				Content map[string]struct {
					Schema struct {
						Ref string `json:"$ref"`
					} `json:"schema"`
				} `json:"content"`
			} `json:"requestBody"`
		} `json:"post"`
	}
	text, err := json.Marshal(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(text, &hooks); err != nil {
		t.Fatal(err)
	}
	post := hooks["event"].Post
	if ref := post.RequestBody.Content["application/json"].Schema.Ref; ref != "#/components/schemas/Event" || doc.Components.Schemas["Event"] == nil {
		t.Errorf("the delivery's body: %q", ref)
	}
	var headers []string
	for _, p := range post.Parameters {
		if p.In == "header" && p.Required {
			headers = append(headers, p.Name)
		}
	}
	if got := strings.Join(headers, ","); got != "webhook-id,webhook-timestamp,webhook-signature" {
		t.Errorf("the delivery's headers: %s", got)
	}
}
