package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/oapi-codegen/nullable"
	openapitypes "github.com/oapi-codegen/runtime/types"

	"github.com/liveproctor/workspaces/deploy/local/e2e/apiclient"
)

// The client oapi-codegen generates from the document, used as a vendor
// would use it: typed bodies, an explicit null, typed error bodies.

// vendorClient is the generated client with credentials on every request;
// its exchanges are held to the served document like the e2e client's.
func vendorClient(t *testing.T, credentials apiclient.RequestEditorFn) *apiclient.ClientWithResponses {
	t.Helper()
	c, err := apiclient.NewClientWithResponses(env.GatewayURL,
		apiclient.WithHTTPClient(checkedDoer{t: t, client: &http.Client{Timeout: 30 * time.Second}}),
		apiclient.WithRequestEditorFn(credentials))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func basicAuth(key, secret string) apiclient.RequestEditorFn {
	return func(_ context.Context, req *http.Request) error {
		req.SetBasicAuth(key, secret)
		return nil
	}
}

func bearerAuth(token string) apiclient.RequestEditorFn {
	return func(_ context.Context, req *http.Request) error {
		req.Header.Set("Authorization", "Bearer "+token)
		return nil
	}
}

// checkedDoer sends a request and checks the exchange against the served
// document.
type checkedDoer struct {
	t      *testing.T
	client *http.Client
}

func (d checkedDoer) Do(req *http.Request) (*http.Response, error) {
	resp, err := d.client.Do(req)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	apiDoc.check(d.t, req, resp.StatusCode, resp.Header, data)
	resp.Body = io.NopCloser(bytes.NewReader(data))
	return resp, nil
}

func ptr[T any](v T) *T { return &v }

func TestGeneratedClientCreatesListsAndClearsParents(t *testing.T) {
	ctx := t.Context()
	vendor := vendorClient(t, basicAuth(rootKey, rootSecret))
	tag := unique(t, "tag")

	// A create with an explicit null parent: the field is sent, as null.
	parentID := unique(t, "parent")
	create := apiclient.CreateWorkspaceJSONRequestBody{
		Id: parentID, Name: "Client parent " + tag, Type: apiclient.CreateWorkspaceRequestTypeDISTRICT,
		ParentWorkspaceId: nullable.NewNullNullable[string](),
		Address:           &apiclient.AddressInput{State: ptr("US-CA"), Country: ptr(apiclient.AddressInputCountryUS)},
	}
	if data, err := json.Marshal(create); err != nil || !bytes.Contains(data, []byte(`"parentWorkspaceId":null`)) {
		t.Fatalf("the create body does not hold an explicit null: %s %v", data, err)
	}
	created, err := vendor.CreateWorkspaceWithResponse(ctx, nil, create)
	if err != nil {
		t.Fatal(err)
	}
	if created.JSON200 == nil {
		t.Fatalf("create: %d %s", created.StatusCode(), created.Body)
	}
	if c := created.JSON200; c.WorkspaceId != parentID || c.Type != apiclient.CreateWorkspaceResponseTypeDISTRICT ||
		c.AppKeys.Server.ConsumerKey.String() == "" || len(c.RegistrationCodes) == 0 {
		t.Fatalf("create: %+v", c)
	}

	got, err := vendor.GetWorkspaceWithResponse(ctx, parentID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.JSON200 == nil {
		t.Fatalf("get: %d %s", got.StatusCode(), got.Body)
	}
	if w := got.JSON200; w.Id != parentID || !w.ParentWorkspaceId.IsNull() || w.Address.State != "US-CA" ||
		got.HTTPResponse.Header.Get("ETag") != w.Etag {
		t.Fatalf("get: %s (ETag %q)", got.Body, got.HTTPResponse.Header.Get("ETag"))
	}

	// A child with a parent, in another state.
	childID := unique(t, "child")
	child, err := vendor.CreateWorkspaceWithResponse(ctx, nil, apiclient.CreateWorkspaceJSONRequestBody{
		Id: childID, Name: "Client child " + tag, Type: apiclient.CreateWorkspaceRequestTypeCAMPUS,
		ParentWorkspaceId: nullable.NewNullableWithValue(parentID),
		Address:           &apiclient.AddressInput{State: ptr("US-NY"), Country: ptr(apiclient.AddressInputCountryUS)},
	})
	if err != nil {
		t.Fatal(err)
	}
	if child.JSON200 == nil {
		t.Fatalf("create the child: %d %s", child.StatusCode(), child.Body)
	}

	// The state filter, as a body and as query parameters: of the two, only
	// the parent is in US-CA.
	include := []string{"US-CA"}
	posted, err := vendor.ListWorkspacesWithResponse(ctx, nil, apiclient.ListWorkspacesJSONRequestBody{
		Filter: &apiclient.ListWorkspacesFilter{Search: &tag, AddressState: &apiclient.StateFilter{Include: &include}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if posted.JSON200 == nil {
		t.Fatalf("POST list: %d %s", posted.StatusCode(), posted.Body)
	}
	if ids := workspaceIDs(posted.JSON200.Workspaces); !slices.Equal(ids, []string{parentID}) {
		t.Errorf("POST list with the state filter: %v, want only %s", ids, parentID)
	}
	queried, err := vendor.ListWorkspacesGetWithResponse(ctx, &apiclient.ListWorkspacesGetParams{
		FilterSearch: &tag, FilterAddressStateInclude: &include,
	})
	if err != nil {
		t.Fatal(err)
	}
	if queried.JSON200 == nil {
		t.Fatalf("GET list: %d %s", queried.StatusCode(), queried.Body)
	}
	if ids := workspaceIDs(queried.JSON200.Workspaces); !slices.Equal(ids, []string{parentID}) {
		t.Errorf("GET list with filter.address.state.include: %v, want only %s", ids, parentID)
	}

	// An explicit null clears the parent.
	before, err := vendor.GetWorkspaceWithResponse(ctx, childID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if before.JSON200 == nil {
		t.Fatalf("get the child: %d %s", before.StatusCode(), before.Body)
	}
	if p, err := before.JSON200.ParentWorkspaceId.Get(); err != nil || p != parentID {
		t.Fatalf("the child's parent: %q %v, want %s", p, err, parentID)
	}
	updated, err := vendor.UpdateWorkspaceWithResponse(ctx, childID, nil, apiclient.UpdateWorkspaceJSONRequestBody{
		ParentWorkspaceId: nullable.NewNullNullable[string](),
	})
	if err != nil {
		t.Fatal(err)
	}
	if updated.JSON200 == nil || !updated.JSON200.ParentWorkspaceId.IsNull() {
		t.Fatalf("update with parentWorkspaceId null: %d %s", updated.StatusCode(), updated.Body)
	}
	after, err := vendor.GetWorkspaceWithResponse(ctx, childID, nil)
	if err != nil {
		t.Fatal(err)
	}
	if after.JSON200 == nil || !after.JSON200.ParentWorkspaceId.IsNull() || after.JSON200.Name != "Client child "+tag {
		t.Fatalf("the child after clearing its parent: %d %s", after.StatusCode(), after.Body)
	}
}

func workspaceIDs(ws []apiclient.Workspace) []string {
	ids := []string{}
	for _, w := range ws {
		ids = append(ids, w.Id)
	}
	return ids
}

func TestGeneratedClientReadsErrorBodies(t *testing.T) {
	ctx := t.Context()
	vendor := vendorClient(t, basicAuth(rootKey, rootSecret))

	bad, err := vendor.CreateWorkspaceWithResponse(ctx, nil, apiclient.CreateWorkspaceJSONRequestBody{
		Id: unique(t, "bad"), Name: "Bad type", Type: apiclient.CreateWorkspaceRequestType("SCHOOL"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if bad.JSON400 == nil {
		t.Fatalf("create with type SCHOOL: %d %s, want a 400 error body", bad.StatusCode(), bad.Body)
	}
	if e := bad.JSON400.Error; e.Message == "" || !slices.Contains(detailFields(e.Details), "type") {
		t.Errorf("400: message %q, details naming %v; want a message and a detail naming type", e.Message, detailFields(e.Details))
	}

	missing := unique(t, "missing")
	notFound, err := vendor.GetWorkspaceWithResponse(ctx, missing, nil)
	if err != nil {
		t.Fatal(err)
	}
	if notFound.JSON404 == nil {
		t.Fatalf("get %s: %d %s, want a 404 error body", missing, notFound.StatusCode(), notFound.Body)
	}
	// The id is in the path, not in a body: a detail, if any, can only
	// name it.
	if e := notFound.JSON404.Error; e.Message == "" || slices.ContainsFunc(detailFields(e.Details), func(f string) bool { return f != "id" }) {
		t.Errorf("404: message %q, details naming %v", e.Message, detailFields(e.Details))
	}
}

func detailFields(details []apiclient.FieldViolation) []string {
	fields := []string{}
	for _, d := range details {
		fields = append(fields, d.Field)
	}
	return fields
}

func TestGeneratedClientLogsInAndReadsTheSession(t *testing.T) {
	ctx := t.Context()
	vendor := vendorClient(t, basicAuth(rootKey, rootSecret))
	id := unique(t, "d")
	created, err := vendor.CreateWorkspaceWithResponse(ctx, nil, apiclient.CreateWorkspaceJSONRequestBody{
		Id: id, Name: "Client login", Type: apiclient.CreateWorkspaceRequestTypeDISTRICT,
	})
	if err != nil {
		t.Fatal(err)
	}
	if created.JSON200 == nil {
		t.Fatalf("create: %d %s", created.StatusCode(), created.Body)
	}

	login, err := vendor.CreateSdkTokenWithResponse(ctx, nil, apiclient.CreateSdkTokenJSONRequestBody{
		Email: openapitypes.Email("ada@example.com"), WorkspaceId: id,
	})
	if err != nil {
		t.Fatal(err)
	}
	if login.JSON200 == nil {
		t.Fatalf("login: %d %s", login.StatusCode(), login.Body)
	}
	// The auth value is format: byte, so the client hands over the 32 bytes
	// themselves; the Bearer token is their standard Base64.
	token := login.JSON200
	if len(token.Auth) != 32 || time.Until(token.ExpiresAt) < 8*time.Hour-time.Minute {
		t.Fatalf("login: %d bytes, expires %s", len(token.Auth), token.ExpiresAt)
	}

	browser := vendorClient(t, bearerAuth(base64.StdEncoding.EncodeToString(token.Auth)))
	session, err := browser.GetSdkSessionWithResponse(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if session.JSON200 == nil {
		t.Fatalf("session: %d %s", session.StatusCode(), session.Body)
	}
	if s := session.JSON200; s.Email != "ada@example.com" || s.WorkspaceId != id || !s.ExpiresAt.Equal(token.ExpiresAt) {
		t.Errorf("session %+v, want ada@example.com in %s until %s", s, id, token.ExpiresAt)
	}
}
