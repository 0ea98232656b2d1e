package e2e

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/liveproctor/workspaces/pkg/basicauth"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/pkg/testenv"
)

// keyPair is a pair as the keys routes answer it.
type keyPair struct {
	AppKey     string  `json:"appKey"`
	AppSecret  string  `json:"appSecret"`
	Name       string  `json:"name"`
	CreatedAt  string  `json:"createdAt"`
	UpdatedAt  string  `json:"updatedAt"`
	ExpiresAt  *string `json:"expiresAt"`
	LastUsedAt *string `json:"lastUsedAt"`
	Tags       []struct {
		Key   string `json:"key"`
		Type  string `json:"type"`
		Value string `json:"value"`
	} `json:"tags"`
}

func (k keyPair) client(t *testing.T) client { return as(t, k.AppKey, k.AppSecret) }

// rotation is the rotate route's answer.
type rotation struct {
	Previous  keyPair `json:"previous"`
	Successor keyPair `json:"successor"`
}

var restTag = map[string]string{"key": "allow-rest-api-access", "type": "string", "value": "TRUE"}

func keysPath(id string) string { return "/api/workspace/" + id + "/keys" }

// listKeys returns a workspace's pairs by app key.
func (c client) listKeys(id string) map[string]keyPair {
	c.t.Helper()
	var keys []keyPair
	c.get(keysPath(id)).ok(&keys)
	out := map[string]keyPair{}
	for _, k := range keys {
		out[k.AppKey] = k
	}
	return out
}

func (c client) createKey(id, name string, tags ...map[string]string) keyPair {
	c.t.Helper()
	if tags == nil {
		tags = []map[string]string{}
	}
	var k keyPair
	c.post(keysPath(id), map[string]any{"name": name, "tags": tags}).ok(&k)
	return k
}

func (c client) rotateKey(id, appKey string, body map[string]any) rotation {
	c.t.Helper()
	var r rotation
	c.post(keysPath(id)+"/"+appKey+":rotate", body).ok(&r)
	return r
}

// waitUnauthenticated waits until the pair is refused on the workspace
// route, as a wrong secret is.
func waitUnauthenticated(t *testing.T, c client, path string) {
	t.Helper()
	testenv.Eventually(t, 15*time.Second, func() error {
		if r := c.withT(t).do(http.MethodGet, path, nil); r.status != http.StatusUnauthorized {
			return fmt.Errorf("status %d", r.status)
		}
		return nil
	}, "the pair is refused on %s", path)
	c.get(path).wantError(http.StatusUnauthorized, "UNAUTHENTICATED", "")
}

// A workspace creates a pair for itself (listed with its name, no expiry
// and no use yet), uses it (lastUsedAt appears), and revokes it: 401 at
// once on the workspace routes and on logins, even right after a login
// the auth service remembers.
func TestKeyPairCreateUseAndRevoke(t *testing.T) {
	w := asRoot(t).create(unique(t, "w"), nil)
	self := w.server(t)
	path := "/api/workspace/" + w.WorkspaceID

	keys := self.listKeys(w.WorkspaceID)
	if len(keys) != 2 || keys[w.AppKeys.Server.ConsumerKey].Name != "server" || keys[w.AppKeys.LTI.ConsumerKey].Name != "lti" {
		t.Fatalf("a new workspace's pairs: %+v", keys)
	}
	for _, k := range keys {
		if k.ExpiresAt != nil || !timePattern.MatchString(k.CreatedAt) {
			t.Fatalf("pair %+v: want no expiry", k)
		}
	}

	ci := self.createKey(w.WorkspaceID, "  ci deploys ", restTag)
	if ci.Name != "ci deploys" || ci.ExpiresAt != nil || ci.LastUsedAt != nil || ci.AppSecret == "" || len(ci.Tags) != 1 {
		t.Fatalf("created pair: %+v", ci)
	}
	listed, ok := self.listKeys(w.WorkspaceID)[ci.AppKey]
	if !ok || listed.AppSecret != ci.AppSecret || listed.Name != "ci deploys" || listed.ExpiresAt != nil {
		t.Fatalf("the created pair as listed: %+v (listed %v)", listed, ok)
	}

	ci.client(t).get(path).ok(nil)
	testenv.Eventually(t, 10*time.Second, func() error {
		if k := self.withT(t).listKeys(w.WorkspaceID)[ci.AppKey]; k.LastUsedAt == nil || !timePattern.MatchString(*k.LastUsedAt) {
			return errors.New("no lastUsedAt yet")
		}
		return nil
	}, "the use of the new pair is recorded")

	// The auth service now remembers that this pair may log users in.
	ci.client(t).login("ada@example.com", w.WorkspaceID)
	var revoked keyPair
	self.delete(keysPath(w.WorkspaceID) + "/" + ci.AppKey).ok(&revoked)
	if revoked.AppKey != ci.AppKey {
		t.Fatalf("revoke answered %+v", revoked)
	}
	ci.client(t).get(path).wantError(http.StatusUnauthorized, "UNAUTHENTICATED", "")
	ci.client(t).post("/api/login/sdk", map[string]any{"email": "ada@example.com", "workspaceId": w.WorkspaceID}).
		wantError(http.StatusUnauthorized, "UNAUTHENTICATED", "")
	if _, ok := self.listKeys(w.WorkspaceID)[ci.AppKey]; ok {
		t.Fatal("a revoked pair is still listed")
	}
	self.delete(keysPath(w.WorkspaceID)+"/"+ci.AppKey).wantError(http.StatusNotFound, "NOT_FOUND", "")

	// A pair without the REST tag is an LTI pair: 403 on the API.
	lti := self.createKey(w.WorkspaceID, "second LMS")
	lti.client(t).get(path).wantError(http.StatusForbidden, "PERMISSION_DENIED", "")
}

// Rotation with overlap: both pairs work until the old one's expiresAt,
// then only the successor, on the workspace routes and on logins.
func TestKeyRotationOverlapsThenTheOldPairExpires(t *testing.T) {
	w := asRoot(t).create(unique(t, "w"), nil)
	old := w.server(t)
	path := "/api/workspace/" + w.WorkspaceID
	old.login("ada@example.com", w.WorkspaceID) // cached by the auth service

	r := old.rotateKey(w.WorkspaceID, w.AppKeys.Server.ConsumerKey, map[string]any{"expireAfter": "3s"})
	if r.Previous.AppKey != w.AppKeys.Server.ConsumerKey || r.Previous.ExpiresAt == nil || !timePattern.MatchString(*r.Previous.ExpiresAt) {
		t.Fatalf("the rotated pair: %+v", r.Previous)
	}
	if r.Successor.Name != "server" || r.Successor.ExpiresAt != nil || len(r.Successor.Tags) != 1 || r.Successor.AppKey == r.Previous.AppKey {
		t.Fatalf("the successor: %+v", r.Successor)
	}
	listed := old.listKeys(w.WorkspaceID)
	if k := listed[r.Previous.AppKey]; k.ExpiresAt == nil || *k.ExpiresAt != *r.Previous.ExpiresAt {
		t.Fatalf("the rotated pair as listed: %+v", k)
	}
	// A rotated pair is not rotated again.
	old.post(keysPath(w.WorkspaceID)+"/"+r.Previous.AppKey+":rotate", map[string]any{}).
		wantError(http.StatusConflict, "FAILED_PRECONDITION", "")

	next := r.Successor.client(t)
	next.get(path).ok(nil)
	next.login("bob@example.com", w.WorkspaceID)

	waitUnauthenticated(t, old, path)
	old.post("/api/login/sdk", map[string]any{"email": "ada@example.com", "workspaceId": w.WorkspaceID}).
		wantError(http.StatusUnauthorized, "UNAUTHENTICATED", "")
	next.get(path).ok(nil)
	next.login("ada@example.com", w.WorkspaceID)
	next.post(keysPath(w.WorkspaceID)+"/"+r.Previous.AppKey+":rotate", nil).wantError(http.StatusNotFound, "NOT_FOUND", "")
}

// No call leaves a workspace without a REST pair that does not expire, and
// a workspace holds at most 10 pairs that have not expired.
func TestKeyRulesNoLockoutAndAtMostTenPairs(t *testing.T) {
	w := asRoot(t).create(unique(t, "w"), nil)
	self := w.server(t)
	server := w.AppKeys.Server.ConsumerKey

	e := self.delete(keysPath(w.WorkspaceID)+"/"+server).wantError(http.StatusConflict, "FAILED_PRECONDITION", "")
	if msg := e.GetError().GetMessage(); msg == "" {
		t.Fatal("no message")
	}
	// Rotating with no overlap keeps the workspace reachable: the successor.
	r := self.rotateKey(w.WorkspaceID, server, map[string]any{"expireAfter": "0s"})
	self.get("/api/workspace/"+w.WorkspaceID).wantError(http.StatusUnauthorized, "UNAUTHENTICATED", "")
	next := r.Successor.client(t)
	next.delete(keysPath(w.WorkspaceID)+"/"+r.Successor.AppKey).wantError(http.StatusConflict, "FAILED_PRECONDITION", "")
	// With a second lasting REST pair, the first may go.
	spare := next.createKey(w.WorkspaceID, "spare", restTag)
	next.delete(keysPath(w.WorkspaceID) + "/" + r.Successor.AppKey).ok(nil)
	self = spare.client(t)

	// spare and the LTI pair (the expired pair counts no more): 8 more.
	for i := range 8 {
		self.createKey(w.WorkspaceID, fmt.Sprintf("extra %d", i), restTag)
	}
	self.post(keysPath(w.WorkspaceID), map[string]any{"name": "eleventh", "tags": []any{restTag}}).
		wantError(http.StatusConflict, "FAILED_PRECONDITION", "")
	self.post(keysPath(w.WorkspaceID)+"/"+spare.AppKey+":rotate", map[string]any{"expireAfter": "60s"}).
		wantError(http.StatusConflict, "FAILED_PRECONDITION", "")
	self.delete(keysPath(w.WorkspaceID) + "/" + w.AppKeys.LTI.ConsumerKey).ok(nil)
	self.createKey(w.WorkspaceID, "tenth again", restTag)

	// Bad input names the field.
	self.post(keysPath(w.WorkspaceID), map[string]any{"name": " ", "tags": []any{}}).wantError(http.StatusBadRequest, "INVALID_ARGUMENT", "name")
	self.post(keysPath(w.WorkspaceID)+"/"+spare.AppKey+":rotate", map[string]any{"expireAfter": "604801s"}).
		wantError(http.StatusBadRequest, "INVALID_ARGUMENT", "expireAfter")
	self.post(keysPath(w.WorkspaceID)+"/"+spare.AppKey+":rotate", map[string]any{"expireAfter": "tomorrow"}).
		wantStatus(http.StatusBadRequest)
}

// Another tenant's key gets 404 on every key route, as on every route; a
// manager may manage the pairs; a deleted workspace's key routes are 404.
func TestKeyRoutesAreHiddenFromOtherTenants(t *testing.T) {
	root := asRoot(t)
	a := root.create(unique(t, "a"), nil)
	b := root.create(unique(t, "b"), nil)
	stranger := b.server(t)
	aKey := a.AppKeys.Server.ConsumerKey

	stranger.get(keysPath(a.WorkspaceID)).wantError(http.StatusNotFound, "NOT_FOUND", "")
	stranger.post(keysPath(a.WorkspaceID), map[string]any{"name": "mine now", "tags": []any{restTag}}).wantError(http.StatusNotFound, "NOT_FOUND", "")
	stranger.post(keysPath(a.WorkspaceID)+"/"+aKey+":rotate", map[string]any{}).wantError(http.StatusNotFound, "NOT_FOUND", "")
	stranger.delete(keysPath(a.WorkspaceID)+"/"+aKey).wantError(http.StatusNotFound, "NOT_FOUND", "")
	// Naming its own workspace does not reach another's pair either.
	stranger.post(keysPath(b.WorkspaceID)+"/"+aKey+":rotate", map[string]any{}).wantError(http.StatusNotFound, "NOT_FOUND", "")
	stranger.delete(keysPath(b.WorkspaceID)+"/"+aKey).wantError(http.StatusNotFound, "NOT_FOUND", "")
	a.server(t).get("/api/workspace/" + a.WorkspaceID).ok(nil)

	// The manager may.
	made := root.createKey(a.WorkspaceID, "made by the district", restTag)
	made.client(t).get("/api/workspace/" + a.WorkspaceID).ok(nil)

	root.delete("/api/workspace/" + a.WorkspaceID).ok(nil)
	root.get(keysPath(a.WorkspaceID)).wantError(http.StatusNotFound, "NOT_FOUND", "")
	root.post(keysPath(a.WorkspaceID), map[string]any{"name": "late", "tags": []any{restTag}}).wantError(http.StatusNotFound, "NOT_FOUND", "")
	root.post(keysPath(a.WorkspaceID)+"/"+aKey+":rotate", map[string]any{}).wantError(http.StatusNotFound, "NOT_FOUND", "")
	root.delete(keysPath(a.WorkspaceID)+"/"+aKey).wantError(http.StatusNotFound, "NOT_FOUND", "")
}

// Rotating the LTI pair: a launch signed with the old secret works until
// its expiresAt, then is refused like a wrong key; the successor signs
// launches from the start.
func TestLTIPairRotation(t *testing.T) {
	const exam = "7c9e6679-7425-40de-944b-e07fc1f90ae7"
	w := asRoot(t).create(unique(t, "school"), nil)
	lti := w.AppKeys.LTI
	r := w.server(t).rotateKey(w.WorkspaceID, lti.ConsumerKey, map[string]any{"expireAfter": "4s"})
	if r.Successor.Name != "lti" || len(r.Successor.Tags) != 0 {
		t.Fatalf("the LTI successor: %+v", r.Successor)
	}
	launch := func(key, secret string) int {
		status, _, _ := postLaunch(t, env.GatewayURL, signLaunch(t, lti.LaunchURL, key, secret, launchParams(exam)))
		return status
	}
	if s := launch(lti.ConsumerKey, lti.SharedSecret); s != http.StatusOK {
		t.Fatalf("a launch signed with the old secret during the overlap: %d", s)
	}
	if s := launch(r.Successor.AppKey, r.Successor.AppSecret); s != http.StatusOK {
		t.Fatalf("a launch signed with the successor: %d", s)
	}
	testenv.Eventually(t, 15*time.Second, func() error {
		if s := launch(lti.ConsumerKey, lti.SharedSecret); s != http.StatusUnauthorized {
			return fmt.Errorf("status %d", s)
		}
		return nil
	}, "a launch signed with the expired pair is refused")
	if s := launch(r.Successor.AppKey, r.Successor.AppSecret); s != http.StatusOK {
		t.Fatalf("a launch signed with the successor after the overlap: %d", s)
	}
}

// Over gRPC a revoked pair, and an expired one, are UNAUTHENTICATED; the
// key pair methods work there as over REST.
func TestRevokedAndExpiredPairsOverGRPC(t *testing.T) {
	conn, err := grpc.NewClient(env.WorkspaceAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ws := workspacev1.NewWorkspaceServiceClient(conn)
	with := func(key, secret string) context.Context {
		return metadata.AppendToOutgoingContext(context.Background(), "authorization", basicauth.Header(key, secret))
	}
	w := asRoot(t).create(unique(t, "w"), nil)
	self := with(w.AppKeys.Server.ConsumerKey, w.AppKeys.Server.SharedSecret)
	get := &workspacev1.GetWorkspaceRequest{Id: w.WorkspaceID}

	extra, err := ws.CreateWorkspaceKey(self, &workspacev1.CreateWorkspaceKeyRequest{
		Id: w.WorkspaceID, Name: "grpc", Tags: []*workspacev1.TagInput{{Key: "allow-rest-api-access", Type: "string", Value: "TRUE"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	asExtra := with(extra.GetAppKey(), extra.GetAppSecret())
	if _, err := ws.GetWorkspace(asExtra, get); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.RevokeWorkspaceKey(self, &workspacev1.RevokeWorkspaceKeyRequest{Id: w.WorkspaceID, AppKey: extra.GetAppKey()}); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.GetWorkspace(asExtra, get); status.Code(err) != codes.Unauthenticated {
		t.Fatalf("a revoked pair over gRPC: %v", err)
	}

	rot, err := ws.RotateWorkspaceKey(self, &workspacev1.RotateWorkspaceKeyRequest{Id: w.WorkspaceID, AppKey: w.AppKeys.Server.ConsumerKey})
	if err != nil {
		t.Fatal(err)
	}
	// The default overlap is 24 hours.
	exp, err := time.Parse(time.RFC3339, rot.GetPrevious().GetExpireTime().GetValue())
	if err != nil || exp.Sub(time.Now()) < 23*time.Hour || exp.Sub(time.Now()) > 25*time.Hour {
		t.Fatalf("default overlap: expires %v (%v)", exp, err)
	}
	next := with(rot.GetSuccessor().GetAppKey(), rot.GetSuccessor().GetAppSecret())
	again, err := ws.RotateWorkspaceKey(next, &workspacev1.RotateWorkspaceKeyRequest{
		Id: w.WorkspaceID, AppKey: rot.GetSuccessor().GetAppKey(), ExpireAfter: durationpb.New(time.Second),
	})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 15*time.Second, func() error {
		if _, err := ws.GetWorkspace(next, get); status.Code(err) != codes.Unauthenticated {
			return fmt.Errorf("got %v", err)
		}
		return nil
	}, "the expired pair is UNAUTHENTICATED over gRPC")
	if _, err := ws.GetWorkspace(with(again.GetSuccessor().GetAppKey(), again.GetSuccessor().GetAppSecret()), get); err != nil {
		t.Fatal(err)
	}
}

// Key-pair changes are in the audit trail, in order, naming the pair by its
// app key and the caller that made them.
func TestKeyChangesAreInTheAuditTrail(t *testing.T) {
	w := asRoot(t).create(unique(t, "w"), nil)
	self := w.server(t)
	ci := self.createKey(w.WorkspaceID, "ci", restTag)
	rot := self.rotateKey(w.WorkspaceID, w.AppKeys.LTI.ConsumerKey, map[string]any{"expireAfter": "3600s"})
	self.delete(keysPath(w.WorkspaceID) + "/" + ci.AppKey).ok(nil)

	query := url.Values{"type": {"keyPair.created", "keyPair.rotated", "keyPair.revoked", "keyPair.expired"}}
	page := self.waitEvents(w.WorkspaceID, query, "keyPair.created", "keyPair.rotated", "keyPair.created", "keyPair.revoked")
	targets := []string{ci.AppKey, w.AppKeys.LTI.ConsumerKey, rot.Successor.AppKey, ci.AppKey}
	for i, e := range page.Events {
		if e.Target.Type != "keyPair" || e.Target.ID != targets[i] || e.Actor.AppKey != w.AppKeys.Server.ConsumerKey ||
			e.Actor.WorkspaceID != w.WorkspaceID || e.RequestID == "" {
			t.Errorf("event %d = %+v, want target %s by the workspace's server pair", i, e, targets[i])
		}
	}
	if got := page.Events[1].ChangedFields; !slices.Equal(got, []string{"expiresAt"}) {
		t.Errorf("rotation's changedFields = %v", got)
	}
}
