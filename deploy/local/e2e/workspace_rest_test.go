package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var (
	uuidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	timePattern = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)
)

func TestCreateGetAndKeysHaveTheDocumentedShape(t *testing.T) {
	root := asRoot(t)
	id := unique(t, "d")
	res := root.create(id, map[string]any{
		"name":     "  Springfield District ",
		"address":  map[string]any{"city": "Springfield", "state": "US-IL", "country": "US"},
		"products": []any{map[string]any{"bank": map[string]any{"id": "pub/math"}}},
	})
	if res.Type != "DISTRICT" || res.Name != "Springfield District" || len(res.RegistrationCodes) == 0 {
		t.Fatalf("create result: %+v", res)
	}
	for _, k := range []string{res.AppKeys.Server.ConsumerKey, res.AppKeys.Server.SharedSecret, res.AppKeys.LTI.ConsumerKey, res.AppKeys.LTI.SharedSecret} {
		if !uuidPattern.MatchString(k) {
			t.Fatalf("key %q is not a UUID", k)
		}
	}
	if !strings.HasPrefix(res.AppKeys.LTI.ConfigurationURL, "http") || !strings.HasPrefix(res.AppKeys.LTI.LaunchURL, "http") {
		t.Fatalf("LTI URLs: %+v", res.AppKeys.LTI)
	}

	got := root.get("/api/workspace/" + id).ok(nil)
	fields := got.object()
	for _, name := range []string{"__typename", "id", "workspaceId", "name", "type", "parentWorkspaceId", "address",
		"products", "objectiveDocuments", "tags", "sk", "schemaVersion", "supportToolId", "createdAt", "updatedAt"} {
		if _, ok := fields[name]; !ok {
			t.Errorf("workspace JSON lacks %q: %s", name, got.body)
		}
	}
	if _, ok := fields["deletedAt"]; ok {
		t.Errorf("an active workspace has deletedAt: %s", got.body)
	}
	if fields["parentWorkspaceId"] != nil || fields["__typename"] != "Workspace" || fields["sk"] != "workspace" {
		t.Errorf("workspace JSON: %s", got.body)
	}
	var w workspace
	got.decode(&w)
	if w.ID != id || w.WorkspaceID != id || w.Name != "Springfield District" || w.Address.State != "US-IL" ||
		!slices.Equal(w.productIDs(), []string{"pub/math"}) || !timePattern.MatchString(w.CreatedAt) || !timePattern.MatchString(w.UpdatedAt) {
		t.Errorf("workspace: %+v", w)
	}
	if etag := got.header.Get("ETag"); etag == "" || etag != w.Etag {
		t.Errorf("ETag header %q, etag field %q", etag, w.Etag)
	}

	keysResp := root.get("/api/workspace/" + id + "/keys").ok(nil)
	var keys []struct {
		AppKey    string `json:"appKey"`
		AppSecret string `json:"appSecret"`
		CreatedAt string `json:"createdAt"`
		UpdatedAt string `json:"updatedAt"`
		Tags      []struct{ Key, Type, Value string }
	}
	keysResp.decode(&keys) // a top-level array, or this fails
	secrets := map[string]string{}
	restTagged := map[string]bool{}
	for _, k := range keys {
		secrets[k.AppKey] = k.AppSecret
		for _, tag := range k.Tags {
			restTagged[k.AppKey] = restTagged[k.AppKey] || tag.Key == "allow-rest-api-access" && tag.Type == "string" && tag.Value == "TRUE"
		}
		if !timePattern.MatchString(k.CreatedAt) || !timePattern.MatchString(k.UpdatedAt) {
			t.Errorf("key times: %+v", k)
		}
	}
	if len(keys) != 2 || secrets[res.AppKeys.Server.ConsumerKey] != res.AppKeys.Server.SharedSecret ||
		secrets[res.AppKeys.LTI.ConsumerKey] != res.AppKeys.LTI.SharedSecret {
		t.Fatalf("keys route does not list the created pairs: %s", keysResp.body)
	}
	if !restTagged[res.AppKeys.Server.ConsumerKey] || restTagged[res.AppKeys.LTI.ConsumerKey] {
		t.Fatalf("REST tag should be on the server pair only: %s", keysResp.body)
	}

	// The new workspace's own server pair sees itself.
	res.server(t).get("/api/workspace/" + id).ok(nil)
}

func TestCreateRetryReturnsTheOriginalAndADifferentBodyConflicts(t *testing.T) {
	root := asRoot(t)
	id := unique(t, "d")
	body := map[string]any{"id": id, "name": "Retry District", "type": "DISTRICT"}
	var first, second createResult
	root.post("/api/workspace", body).ok(&first)
	root.post("/api/workspace", body).ok(&second)
	if fmt.Sprint(first) != fmt.Sprint(second) {
		t.Fatalf("retry returned a different result:\n%+v\n%+v", first, second)
	}
	body["name"] = "Another Name"
	root.post("/api/workspace", body).wantError(http.StatusConflict, "ALREADY_EXISTS", "")
}

func TestBadInputIsRefusedWithTheFieldNamed(t *testing.T) {
	root := asRoot(t)
	target := unique(t, "target")
	root.create(target, nil)
	long := strings.Repeat("x", 201)
	manyProducts := make([]any, 1001)
	for i := range manyProducts {
		manyProducts[i] = map[string]any{"bank": map[string]any{"id": fmt.Sprintf("pub/b%d", i)}}
	}
	cases := []struct {
		name, method, path string
		body               any
		field              string
	}{
		{"missing id", "POST", "/api/workspace", `{"name":"N","type":"DISTRICT"}`, "id"},
		{"id with colon", "POST", "/api/workspace", `{"id":"a:b","name":"N","type":"DISTRICT"}`, "id"},
		{"id too long", "POST", "/api/workspace", map[string]any{"id": strings.Repeat("a", 129), "name": "N", "type": "DISTRICT"}, "id"},
		{"blank name", "POST", "/api/workspace", `{"id":"x1","name":"   ","type":"DISTRICT"}`, "name"},
		{"long name", "POST", "/api/workspace", map[string]any{"id": "x1", "name": long, "type": "DISTRICT"}, "name"},
		{"bad type", "POST", "/api/workspace", `{"id":"x1","name":"N","type":"SCHOOL"}`, "type"},
		{"bad country", "POST", "/api/workspace", `{"id":"x1","name":"N","type":"CAMPUS","address":{"country":"XX"}}`, "address.country"},
		{"state not in country", "POST", "/api/workspace", `{"id":"x1","name":"N","type":"CAMPUS","address":{"country":"US","state":"FR-ARA"}}`, "address.state"},
		{"long city", "POST", "/api/workspace", map[string]any{"id": "x1", "name": "N", "type": "CAMPUS", "address": map[string]any{"city": long}}, "address.city"},
		{"bad bank id", "POST", "/api/workspace", `{"id":"x1","name":"N","type":"CAMPUS","products":[{"bank":{"id":"nopublisher"}}]}`, "products"},
		{"too many products", "POST", "/api/workspace", map[string]any{"id": "x1", "name": "N", "type": "CAMPUS", "products": manyProducts}, "products"},
		{"unknown field", "POST", "/api/workspace", `{"id":"x1","name":"N","type":"CAMPUS","colour":"red"}`, "colour"},
		{"wrong type", "POST", "/api/workspace", `{"id":"x1","name":5,"type":"CAMPUS"}`, ""},
		{"malformed JSON", "POST", "/api/workspace", `{"id":"x1",`, ""},
		{"bad objective document", "PUT", "/api/workspace/" + target, `{"objectiveDocuments":["TEKS#2017#MATH:17"]}`, "objectiveDocuments"},
		{"id changed", "PUT", "/api/workspace/" + target, `{"id":"other"}`, "id"},
		{"update unknown field", "PUT", "/api/workspace/" + target, `{"createdAt":"2020-01-01T00:00:00.000Z"}`, "createdAt"},
		{"page size too big", "POST", "/api/workspaces", `{"pageSize":1001}`, "pageSize"},
		{"bad page token", "POST", "/api/workspaces", `{"pageToken":"not-a-token"}`, "pageToken"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root.withT(t).do(c.method, c.path, c.body).wantError(http.StatusBadRequest, "INVALID_ARGUMENT", c.field)
		})
	}
}

func TestBodiesOverOneMebibyteAre413(t *testing.T) {
	big := `{"id":"big","name":"` + strings.Repeat("x", 2<<20) + `","type":"DISTRICT"}`
	asRoot(t).post("/api/workspace", big).wantError(http.StatusRequestEntityTooLarge, "RESOURCE_EXHAUSTED", "")
	// Nothing was created.
	asRoot(t).get("/api/workspace/big").wantError(http.StatusNotFound, "NOT_FOUND", "")
}

func TestCredentials(t *testing.T) {
	res := asRoot(t).create(unique(t, "d"), nil)

	r := anonymous(t).get("/api/workspaces")
	r.wantError(http.StatusUnauthorized, "UNAUTHENTICATED", "")
	if got := r.header.Get("WWW-Authenticate"); got != `Basic realm="workspaces"` {
		t.Errorf("WWW-Authenticate = %q", got)
	}
	as(t, rootKey, "not-the-secret").get("/api/workspaces").wantError(http.StatusUnauthorized, "UNAUTHENTICATED", "")
	as(t, "unknown-key", rootSecret).get("/api/workspaces").wantError(http.StatusUnauthorized, "UNAUTHENTICATED", "")

	lti := as(t, res.AppKeys.LTI.ConsumerKey, res.AppKeys.LTI.SharedSecret)
	lti.get("/api/workspace/"+res.WorkspaceID).wantError(http.StatusForbidden, "PERMISSION_DENIED", "")
	lti.get("/api/workspaces").wantError(http.StatusForbidden, "PERMISSION_DENIED", "")
}

func TestTenantsSeeOnlyWhatTheyManage(t *testing.T) {
	root := asRoot(t)
	a := root.create(unique(t, "a"), map[string]any{"products": []any{map[string]any{"bank": map[string]any{"id": "pub/math"}}}})
	b := root.create(unique(t, "b"), nil)
	asA, asB := a.server(t), b.server(t)
	child := asA.create(unique(t, "a-child"), map[string]any{"type": "CAMPUS", "parentWorkspaceId": a.WorkspaceID})
	grandchild := child.server(t).create(unique(t, "a-grandchild"), map[string]any{"type": "CAMPUS"})

	// Another tenant's key: 404 on every route, never 403.
	for _, id := range []string{a.WorkspaceID, child.WorkspaceID} {
		asB.get("/api/workspace/"+id).wantError(http.StatusNotFound, "NOT_FOUND", "")
		asB.get("/api/workspace/"+id+"/keys").wantError(http.StatusNotFound, "NOT_FOUND", "")
		asB.put("/api/workspace/"+id, `{"name":"Taken"}`).wantError(http.StatusNotFound, "NOT_FOUND", "")
		asB.delete("/api/workspace/"+id).wantError(http.StatusNotFound, "NOT_FOUND", "")
		asB.post("/api/workspace/"+id+":undelete", nil).wantError(http.StatusNotFound, "NOT_FOUND", "")
	}
	asB.post("/api/workspace", map[string]any{"id": unique(t, "b-child"), "name": "B child", "type": "CAMPUS",
		"parentWorkspaceId": a.WorkspaceID}).wantError(http.StatusNotFound, "NOT_FOUND", "")

	var list struct{ Workspaces []workspace }
	asB.get("/api/workspaces").ok(&list)
	for _, w := range list.Workspaces {
		if w.ID == a.WorkspaceID || w.ID == child.WorkspaceID {
			t.Fatalf("b lists a's workspace %s", w.ID)
		}
	}

	// Managed-by is transitive: a manages its grandchild.
	asA.get("/api/workspace/" + grandchild.WorkspaceID).ok(nil)
	asA.get("/api/workspace/" + grandchild.WorkspaceID + "/keys").ok(nil)
	asA.put("/api/workspace/"+grandchild.WorkspaceID, `{"name":"Renamed by a"}`).ok(nil)
	// ... but not upwards.
	child.server(t).get("/api/workspace/"+a.WorkspaceID).wantError(http.StatusNotFound, "NOT_FOUND", "")

	// A workspace may read itself but not change or delete itself.
	asA.get("/api/workspace/" + a.WorkspaceID).ok(nil)
	asA.put("/api/workspace/"+a.WorkspaceID, `{"name":"Self"}`).wantError(http.StatusForbidden, "PERMISSION_DENIED", "")
	asA.delete("/api/workspace/"+a.WorkspaceID).wantError(http.StatusForbidden, "PERMISSION_DENIED", "")

	// Products: only what the caller holds.
	asA.put("/api/workspace/"+child.WorkspaceID, `{"products":[{"bank":{"id":"pub/math"}}]}`).ok(nil)
	e := asA.put("/api/workspace/"+child.WorkspaceID, `{"products":[{"bank":{"id":"pub/ela"}}]}`).wantError(http.StatusForbidden, "PERMISSION_DENIED", "")
	if !strings.Contains(e.Error.Message, "pub/ela") {
		t.Errorf("403 does not name the bank: %q", e.Error.Message)
	}
	asA.post("/api/workspace", map[string]any{"id": unique(t, "x"), "name": "X", "type": "CAMPUS",
		"products": []any{map[string]any{"bank": map[string]any{"id": "other/bank"}}}}).wantError(http.StatusForbidden, "PERMISSION_DENIED", "")
}

func TestParentMustBeVisible(t *testing.T) {
	root := asRoot(t)
	a := root.create(unique(t, "a"), nil)
	b := root.create(unique(t, "b"), nil)
	a.server(t).post("/api/workspace", map[string]any{"id": unique(t, "c"), "name": "C", "type": "CAMPUS",
		"parentWorkspaceId": b.WorkspaceID}).wantError(http.StatusNotFound, "NOT_FOUND", "")
}

func TestUpdate(t *testing.T) {
	root := asRoot(t)
	parent := root.create(unique(t, "p"), nil)
	id := unique(t, "w")
	root.create(id, map[string]any{
		"type": "CAMPUS", "parentWorkspaceId": parent.WorkspaceID,
		"address":  map[string]any{"city": "Austin", "state": "US-TX", "country": "US"},
		"products": []any{map[string]any{"bank": map[string]any{"id": "pub/math"}}},
	})
	path := "/api/workspace/" + id

	// Absent fields are kept.
	var w workspace
	r := root.put(path, `{"name":"New Name","objectiveDocuments":["TEKS#2017#MATH:2024"]}`).ok(&w)
	if w.Name != "New Name" || w.Type != "CAMPUS" || w.Address.City != "Austin" || w.ParentWorkspaceID == nil ||
		*w.ParentWorkspaceID != parent.WorkspaceID || !slices.Equal(w.productIDs(), []string{"pub/math"}) ||
		!slices.Equal(w.ObjectiveDocuments, []string{"TEKS#2017#MATH:2024"}) {
		t.Fatalf("after a partial update: %s", r.body)
	}
	etag := r.header.Get("ETag")
	if etag == "" || etag != w.Etag {
		t.Fatalf("ETag %q, etag field %q", etag, w.Etag)
	}

	// The id may be repeated but not changed.
	root.put(path, map[string]any{"id": id, "type": "DISTRICT"}).ok(&w)
	if w.Type != "DISTRICT" {
		t.Fatalf("type not changed: %+v", w)
	}

	// If-Match: a stale etag is 412, the current one applies.
	root.do(http.MethodPut, path, `{"name":"Stale"}`, "If-Match", etag).wantError(http.StatusPreconditionFailed, "FAILED_PRECONDITION", "")
	current := root.get(path).header.Get("ETag")
	root.do(http.MethodPut, path, `{"name":"Fresh"}`, "If-Match", current).ok(&w)
	if w.Name != "Fresh" {
		t.Fatalf("conditional update not applied: %+v", w)
	}

	// A cycle is refused: parent's parent may not be its own child.
	root.put("/api/workspace/"+parent.WorkspaceID, map[string]any{"parentWorkspaceId": id}).wantError(http.StatusBadRequest, "INVALID_ARGUMENT", "parentWorkspaceId")
	root.put(path, map[string]any{"parentWorkspaceId": id}).wantError(http.StatusBadRequest, "INVALID_ARGUMENT", "parentWorkspaceId")

	// null clears the parent.
	r = root.put(path, `{"parentWorkspaceId":null}`).ok(nil)
	if fields := r.object(); fields["parentWorkspaceId"] != nil {
		t.Fatalf("parent not cleared: %s", r.body)
	}
	root.put(path, `{}`).ok(&w)
	if w.Name != "Fresh" || w.ParentWorkspaceID != nil {
		t.Fatalf("an empty update changed something: %+v", w)
	}

	root.put("/api/workspace/no-such-workspace", `{"name":"X"}`).wantError(http.StatusNotFound, "NOT_FOUND", "")
}

func TestListPagesWalkEveryWorkspaceOnce(t *testing.T) {
	root := asRoot(t)
	tenant := root.create(unique(t, "tenant"), nil)
	asTenant := tenant.server(t)
	want := []string{tenant.WorkspaceID}
	states := []string{"US-CA", "US-NY", "US-TX"}
	for i := range 23 {
		id := fmt.Sprintf("%s-%02d", tenant.WorkspaceID, i)
		name := []string{"Lincoln High", "lincoln high", "Adams Campus", "Zephyr School"}[i%4]
		asTenant.create(id, map[string]any{"name": name, "type": "CAMPUS",
			"address": map[string]any{"state": states[i%3], "country": "US"}})
		want = append(want, id)
	}

	var all struct {
		Workspaces    []workspace
		NextPageToken string
	}
	asTenant.get("/api/workspaces").ok(&all)
	if len(all.Workspaces) != len(want) || all.NextPageToken != "" {
		t.Fatalf("unpaged list: %d workspaces, token %q; want %d and none", len(all.Workspaces), all.NextPageToken, len(want))
	}
	for i := 1; i < len(all.Workspaces); i++ {
		prev, cur := all.Workspaces[i-1], all.Workspaces[i]
		if k1, k2 := strings.ToLower(prev.Name), strings.ToLower(cur.Name); k1 > k2 || k1 == k2 && prev.ID >= cur.ID {
			t.Fatalf("out of order: %s/%s before %s/%s", prev.Name, prev.ID, cur.Name, cur.ID)
		}
	}

	for _, method := range []string{"POST", "GET"} {
		t.Run(method, func(t *testing.T) {
			seen := map[string]int{}
			token := ""
			for pages := 0; ; pages++ {
				if pages > 10 {
					t.Fatal("more pages than workspaces")
				}
				var page struct {
					Workspaces    []workspace
					NextPageToken string
				}
				if method == "POST" {
					asTenant.withT(t).post("/api/workspaces", map[string]any{"pageSize": 7, "pageToken": token}).ok(&page)
				} else {
					asTenant.withT(t).get("/api/workspaces?pageSize=7&pageToken=" + url.QueryEscape(token)).ok(&page)
				}
				for _, w := range page.Workspaces {
					seen[w.ID]++
				}
				if page.NextPageToken == "" {
					break
				}
				token = page.NextPageToken
			}
			for _, id := range want {
				if seen[id] != 1 {
					t.Errorf("%s seen %d times", id, seen[id])
				}
			}
			if len(seen) != len(want) {
				t.Errorf("saw %d workspaces, want %d", len(seen), len(want))
			}
		})
	}

	var filtered struct{ Workspaces []workspace }
	asTenant.post("/api/workspaces", map[string]any{"filter": map[string]any{"search": "LINCOLN", "address.state": map[string]any{"include": []string{"US-CA"}}}}).ok(&filtered)
	if len(filtered.Workspaces) == 0 {
		t.Fatal("filter matched nothing")
	}
	for _, w := range filtered.Workspaces {
		if !strings.Contains(strings.ToLower(w.Name), "lincoln") || w.Address.State != "US-CA" {
			t.Fatalf("filter let through %+v", w)
		}
	}
	var searched struct{ Workspaces []workspace }
	asTenant.get("/api/workspaces?filter.search=zephyr").ok(&searched)
	if len(searched.Workspaces) != 5 {
		t.Fatalf("GET search for zephyr: %d workspaces, want 5", len(searched.Workspaces))
	}
}

// GET /api/workspaces takes the POST body's fields as query parameters, by
// their documented names, and lists exactly what the POST lists.
func TestListQueryFiltersLikeBody(t *testing.T) {
	root := asRoot(t)
	tenant := root.create(unique(t, "tenant"), nil)
	asTenant := tenant.server(t)
	for i, state := range []string{"US-CA", "US-CA", "US-NY", "US-TX"} {
		asTenant.create(fmt.Sprintf("%s-%d", tenant.WorkspaceID, i), map[string]any{"name": fmt.Sprintf("Lincoln %d", i),
			"type": "CAMPUS", "address": map[string]any{"state": state, "country": "US"}})
	}
	ids := func(r *response) []string {
		var page struct{ Workspaces []workspace }
		r.ok(&page)
		out := []string{}
		for _, w := range page.Workspaces {
			out = append(out, w.ID)
		}
		return out
	}
	cases := []struct {
		query string
		body  map[string]any
		want  int
	}{
		{"filter.address.state.include=US-CA", map[string]any{"filter": map[string]any{"address.state": map[string]any{"include": []string{"US-CA"}}}}, 2},
		{"filter.address.state.include=US-CA&filter.address.state.include=US-TX", map[string]any{"filter": map[string]any{"address.state": map[string]any{"include": []string{"US-CA", "US-TX"}}}}, 3},
		{"filter.address.state.include=US-ZZ", map[string]any{"filter": map[string]any{"address.state": map[string]any{"include": []string{"US-ZZ"}}}}, 0},
		{"filter.search=lincoln&filter.address.state.include=US-NY", map[string]any{"filter": map[string]any{"search": "lincoln", "address.state": map[string]any{"include": []string{"US-NY"}}}}, 1},
		{"filter.search=lincoln&pageSize=2", map[string]any{"filter": map[string]any{"search": "lincoln"}, "pageSize": 2}, 2},
	}
	for _, c := range cases {
		got := ids(asTenant.get("/api/workspaces?" + c.query))
		want := ids(asTenant.post("/api/workspaces", c.body))
		if !slices.Equal(got, want) || len(got) != c.want {
			t.Errorf("GET ?%s lists %q, POST lists %q; want %d", c.query, got, want, c.want)
		}
	}

	// pageSize has presence: 0 is refused, not taken as "the default".
	asTenant.get("/api/workspaces?pageSize=0").wantError(http.StatusBadRequest, "INVALID_ARGUMENT", "pageSize")
	asTenant.post("/api/workspaces", map[string]any{"pageSize": 0}).wantError(http.StatusBadRequest, "INVALID_ARGUMENT", "pageSize")

	// Only the documented names: no proto names, nothing unknown.
	for _, query := range []string{"filter.address_state.include=US-CA", "page_size=1", "pagesize=1", "colour=red"} {
		name, _, _ := strings.Cut(query, "=")
		e := asTenant.get("/api/workspaces?"+query).wantError(http.StatusBadRequest, "INVALID_ARGUMENT", name)
		if e.Error.Details[0].Description != "unknown query parameter" {
			t.Errorf("?%s: %+v", query, e.Error.Details)
		}
	}
	asTenant.get("/api/workspaces?pageSize=x").wantError(http.StatusBadRequest, "INVALID_ARGUMENT", "pageSize")
	asTenant.get("/api/workspaces?pageSize=1&pageSize=2").wantError(http.StatusBadRequest, "INVALID_ARGUMENT", "pageSize")
}

func TestUnknownQueryParametersAreRefusedOnEveryRoute(t *testing.T) {
	root := asRoot(t)
	id := root.create(unique(t, "d"), nil).WorkspaceID
	root.get("/api/workspace/"+id+"?verbose=true").wantError(http.StatusBadRequest, "INVALID_ARGUMENT", "verbose")
	root.get("/api/workspace/"+id+"/keys?verbose=true").wantError(http.StatusBadRequest, "INVALID_ARGUMENT", "verbose")
	root.put("/api/workspace/"+id+"?name=x", `{}`).wantError(http.StatusBadRequest, "INVALID_ARGUMENT", "name")
	root.post("/api/workspace/"+id+":undelete?force=true", nil).wantError(http.StatusBadRequest, "INVALID_ARGUMENT", "force")
}

// A PUT body names only the documented fields, and may repeat the path's
// id but not change it.
func TestUpdateBodyIsWhatTheDocumentSays(t *testing.T) {
	root := asRoot(t)
	id := unique(t, "w")
	root.create(id, nil)
	path := "/api/workspace/" + id

	e := root.put(path, map[string]any{"id": "other", "name": "Renamed"}).wantError(http.StatusBadRequest, "INVALID_ARGUMENT", "id")
	if d := e.Error.Details[0]; d.Field != "id" || d.Description != "the identifier cannot be modified" {
		t.Errorf("details %+v", e.Error.Details)
	}
	var w workspace
	root.put(path, map[string]any{"id": id, "name": "Renamed"}).ok(&w)
	if w.ID != id || w.Name != "Renamed" {
		t.Fatalf("after an update repeating the id: %+v", w)
	}

	// gRPC-only fields and proto names are not part of the REST body.
	etag := root.get(path).header.Get("ETag")
	for field, body := range map[string]any{
		"etag":                map[string]any{"name": "X", "etag": etag},
		"updateMask":          map[string]any{"name": "X", "updateMask": "type"},
		"parent_workspace_id": map[string]any{"parent_workspace_id": nil},
	} {
		e := root.put(path, body).wantError(http.StatusBadRequest, "INVALID_ARGUMENT", field)
		if e.Error.Details[0].Description != "unknown field" {
			t.Errorf("%s: %+v", field, e.Error.Details)
		}
	}
	if root.get(path).ok(&w); w.Name != "Renamed" {
		t.Fatalf("a refused update changed the workspace: %+v", w)
	}
}

// A body declared as anything but JSON is 415, before it is read.
func TestBodiesMustBeJSON(t *testing.T) {
	root := asRoot(t)
	id := unique(t, "w")
	root.create(id, nil)
	root.do(http.MethodPut, "/api/workspace/"+id, `{"name":"Plain"}`, "Content-Type", "text/plain").
		wantError(http.StatusUnsupportedMediaType, "INVALID_ARGUMENT", "")
	root.do(http.MethodPost, "/api/workspace", `id=x&name=y&type=CAMPUS`, "Content-Type", "application/x-www-form-urlencoded").
		wantError(http.StatusUnsupportedMediaType, "INVALID_ARGUMENT", "")
	root.do(http.MethodPut, "/api/workspace/"+id, `{"name":"Charset"}`, "Content-Type", "application/json; charset=utf-8").ok(nil)
}

func TestDeleteHidesAndStopsKeysUndeleteRestores(t *testing.T) {
	root := asRoot(t)
	res := root.create(unique(t, "d"), nil)
	path := "/api/workspace/" + res.WorkspaceID
	self := res.server(t)
	self.get(path).ok(nil) // authenticates, and warms the credential cache

	r := root.delete(path).ok(nil)
	var w workspace
	r.decode(&w)
	if w.DeletedAt == nil || !timePattern.MatchString(*w.DeletedAt) {
		t.Fatalf("delete answer lacks deletedAt: %s", r.body)
	}
	root.get(path).wantError(http.StatusNotFound, "NOT_FOUND", "")
	root.get(path+"/keys").wantError(http.StatusNotFound, "NOT_FOUND", "")
	root.delete(path).wantError(http.StatusNotFound, "NOT_FOUND", "")
	var list struct{ Workspaces []workspace }
	root.post("/api/workspaces", map[string]any{"filter": map[string]any{"search": res.WorkspaceID}}).ok(&list)
	for _, lw := range list.Workspaces {
		if lw.ID == res.WorkspaceID {
			t.Fatal("a deleted workspace is listed")
		}
	}
	self.get(path).wantError(http.StatusUnauthorized, "UNAUTHENTICATED", "")

	r = root.post(path+":undelete", nil).ok(nil)
	if _, ok := r.object()["deletedAt"]; ok {
		t.Fatalf("undelete answer has deletedAt: %s", r.body)
	}
	root.get(path).ok(nil)
	self.get(path).ok(nil)
}

func TestRequestIDs(t *testing.T) {
	r := asRoot(t).do(http.MethodGet, "/api/workspaces", nil, "X-Request-Id", "trace-abc.123")
	if got := r.header.Get("X-Request-Id"); got != "trace-abc.123" {
		t.Errorf("a sane request id was not kept: %q", got)
	}
	r = asRoot(t).do(http.MethodGet, "/api/workspace/nope", nil, "X-Request-Id", "bad id with spaces <script>")
	e := r.wantError(http.StatusNotFound, "NOT_FOUND", "")
	if e.GetError().GetRequestId() == "bad id with spaces <script>" {
		t.Error("an insane request id was echoed")
	}
	r = anonymous(t).get("/no/such/route")
	r.wantError(http.StatusNotFound, "NOT_FOUND", "")
}
