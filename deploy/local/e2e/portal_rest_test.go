package e2e

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/liveproctor/workspaces/deploy/local/stack"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
)

// portalLink is the answer of POST …/portal-links.
type portalLink struct {
	ID        string `json:"id"`
	URL       string `json:"url"`
	ExpiresAt string `json:"expiresAt"`
}

// portalRevocation is the answer of DELETE …/portal-links/{linkId}.
type portalRevocation struct {
	ID        string `json:"id"`
	Opened    bool   `json:"opened"`
	RevokedAt string `json:"revokedAt"`
}

func portalLinksPath(id string) string { return "/api/workspace/" + id + "/portal-links" }

// newPortalLink makes a link to the portal of id as c (201), with body's
// fields (none when nil).
func (c client) newPortalLink(id string, body map[string]any) portalLink {
	c.t.Helper()
	if body == nil {
		body = map[string]any{}
	}
	var l portalLink
	c.post(portalLinksPath(id), body).wantStatus(http.StatusCreated).decode(&l)
	return l
}

// revokePortalLink revokes the link linkID of id as c (200).
func (c client) revokePortalLink(id, linkID string) portalRevocation {
	c.t.Helper()
	var r portalRevocation
	c.delete(portalLinksPath(id) + "/" + linkID).ok(&r)
	return r
}

// portalURL is a link's URL: the gateway's opening page, with the
// link's secret (32 bytes, base64url) as its last segment.
var portalURL = regexp.MustCompile(`^https?://[^/]+/portal/open/([A-Za-z0-9_-]{43})$`)

// secret is the link's secret, from its URL.
func (l portalLink) secret(t *testing.T) string {
	t.Helper()
	m := portalURL.FindStringSubmatch(l.URL)
	if m == nil {
		t.Fatalf("link URL %q is not {PUBLIC_BASE_URL}/portal/open/{secret}", l.URL)
	}
	return m[1]
}

// portalGRPC is the workspace service of s over gRPC, called as the
// gateway's portal pages call it.
func portalGRPC(t *testing.T, s *stack.Stack) workspacev1.WorkspaceServiceClient {
	t.Helper()
	conn, err := grpc.NewClient(s.WorkspaceAddr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return workspacev1.NewWorkspaceServiceClient(conn)
}

// inPortal is a context presenting a portal session's token as the
// gateway's pages do.
func inPortal(token string) context.Context {
	return metadata.AppendToOutgoingContext(context.Background(), "portal-session", token)
}

// openPortal opens l over gRPC, as the gateway does when the
// administrator's browser posts the opening page.
func openPortal(t *testing.T, ws workspacev1.WorkspaceServiceClient, l portalLink) *workspacev1.PortalSession {
	t.Helper()
	session, err := ws.OpenPortalLink(context.Background(), &workspacev1.OpenPortalLinkRequest{Secret: l.secret(t)})
	if err != nil {
		t.Fatalf("open the portal link %s: %v", l.ID, err)
	}
	return session
}

func wantCode(t *testing.T, what string, err error, code codes.Code) {
	t.Helper()
	if status.Code(err) != code {
		t.Fatalf("%s: %v, want %v", what, err, code)
	}
}

// A link is made by the workspace's own server key pair or a manager's:
// 201 with its id, its URL and its expiry 5 minutes on; another tenant's
// workspace and an unknown one are 404; a returnUrl is an absolute https
// URL (http on loopback only) without credentials, or 400 naming it.
func TestPortalLinksAreMadeForTheWorkspaceAndItsManagers(t *testing.T) {
	root := asRoot(t)
	d := root.create(unique(t, "district"), nil)
	other := root.create(unique(t, "other"), nil)

	l := root.newPortalLink(d.WorkspaceID, map[string]any{"returnUrl": "https://vendor.example/settings?tab=lti"})
	expires, err := time.Parse(time.RFC3339Nano, l.ExpiresAt)
	if err != nil || time.Until(expires) < 4*time.Minute || time.Until(expires) > 6*time.Minute || len(l.ID) != 36 {
		t.Fatalf("link %+v (%v): want an id and an expiry 5 minutes on", l, err)
	}
	l.secret(t)
	own := d.server(t).newPortalLink(d.WorkspaceID, nil)
	if own.ID == l.ID || own.URL == l.URL {
		t.Fatalf("two links alike: %+v, %+v", l, own)
	}
	d.server(t).newPortalLink(d.WorkspaceID, map[string]any{"id": d.WorkspaceID, "returnUrl": "http://localhost:3000/back"})

	other.server(t).post(portalLinksPath(d.WorkspaceID), nil).wantError(http.StatusNotFound, "NOT_FOUND", "")
	root.post(portalLinksPath(unique(t, "nowhere")), nil).wantError(http.StatusNotFound, "NOT_FOUND", "")
	root.post(portalLinksPath(d.WorkspaceID), map[string]any{"id": other.WorkspaceID}).wantError(http.StatusBadRequest, "INVALID_ARGUMENT", "id")
	for _, bad := range []string{
		"http://vendor.example/back",
		"https://user:password@vendor.example/",
		"/settings",
		"javascript:alert(1)",
		"https://vendor.example/" + strings.Repeat("a", 2000),
	} {
		root.post(portalLinksPath(d.WorkspaceID), map[string]any{"returnUrl": bad}).wantError(http.StatusBadRequest, "INVALID_ARGUMENT", "returnUrl")
	}
	// A deleted workspace is gone for links too.
	root.delete("/api/workspace/" + d.WorkspaceID).ok(nil)
	root.post(portalLinksPath(d.WorkspaceID), nil).wantError(http.StatusNotFound, "NOT_FOUND", "")
}

// A workspace makes at most 50 links in a 5-minute window, whoever asks:
// the next is 429 with Retry-After until the window ends, as the document
// says; another workspace's links are counted apart.
func TestPortalLinksAreBoundedPerWorkspace(t *testing.T) {
	root := asRoot(t)
	d := root.create(unique(t, "district"), nil)
	other := root.create(unique(t, "other"), nil)
	made := 0
	// At most two windows' worth: the test may start at a window's end.
	for made <= 100 {
		r := root.post(portalLinksPath(d.WorkspaceID), nil)
		if r.status == http.StatusCreated {
			made++
			continue
		}
		r.wantError(http.StatusTooManyRequests, "RESOURCE_EXHAUSTED", "")
		wait, err := strconv.Atoi(r.header.Get("Retry-After"))
		if err != nil || wait < 1 || wait > 300 {
			t.Fatalf("Retry-After %q: want the seconds left in the 5-minute window", r.header.Get("Retry-After"))
		}
		root.newPortalLink(other.WorkspaceID, nil)
		return
	}
	t.Fatalf("%d links made without a refusal", made)
}

// Revoking a link answers 200 with whether it had been opened, and the
// same again; an unknown link, another workspace's, or a revocation by a
// tenant that may not see the workspace is 404.
func TestPortalLinksAreRevoked(t *testing.T) {
	root := asRoot(t)
	d := root.create(unique(t, "district"), nil)
	other := root.create(unique(t, "other"), nil)
	ws := portalGRPC(t, env)

	unused := root.newPortalLink(d.WorkspaceID, nil)
	r := root.revokePortalLink(d.WorkspaceID, unused.ID)
	if r.ID != unused.ID || r.Opened || r.RevokedAt == "" {
		t.Fatalf("revocation %+v", r)
	}
	if again := d.server(t).revokePortalLink(d.WorkspaceID, unused.ID); again != r {
		t.Fatalf("revoking again: %+v, want %+v", again, r)
	}
	_, err := ws.OpenPortalLink(context.Background(), &workspacev1.OpenPortalLinkRequest{Secret: unused.secret(t)})
	wantCode(t, "opening a revoked link", err, codes.Unauthenticated)

	otherLink := root.newPortalLink(other.WorkspaceID, nil)
	root.delete(portalLinksPath(d.WorkspaceID)+"/"+otherLink.ID).wantError(http.StatusNotFound, "NOT_FOUND", "")
	root.delete(portalLinksPath(d.WorkspaceID)+"/0f8e2c1a-3b4d-4e5f-8a9b-0c1d2e3f4a5b").wantError(http.StatusNotFound, "NOT_FOUND", "")
	other.server(t).delete(portalLinksPath(d.WorkspaceID)+"/"+unused.ID).wantError(http.StatusNotFound, "NOT_FOUND", "")
	anonymous(t).delete(portalLinksPath(d.WorkspaceID)+"/"+unused.ID).wantError(http.StatusUnauthorized, "UNAUTHENTICATED", "")
}

// A link opens once, over gRPC (the gateway's pages call it), into a
// session for its workspace only, presented as portal-session metadata:
// the session reads and changes its workspace, never one it manages, and
// calls nothing the portal does not need; a revocation ends it at once.
// REST never takes a session as a credential.
func TestPortalSessionOverGRPC(t *testing.T) {
	root := asRoot(t)
	d := root.create(unique(t, "district"), nil)
	campus := d.server(t).create(unique(t, "campus"), map[string]any{"type": "CAMPUS"})
	ws := portalGRPC(t, env)

	l := root.newPortalLink(d.WorkspaceID, map[string]any{"returnUrl": "https://vendor.example/back"})
	session := openPortal(t, ws, l)
	if session.GetWorkspaceId() != d.WorkspaceID || session.GetLinkId() != l.ID || session.GetReturnUrl() != "https://vendor.example/back" {
		t.Fatalf("session %v", session)
	}
	end, err := time.Parse(time.RFC3339Nano, session.GetExpireTime())
	if err != nil || time.Until(end) < 59*time.Minute || time.Until(end) > 61*time.Minute {
		t.Fatalf("the session ends at %q (%v), want an hour on", session.GetExpireTime(), err)
	}
	_, err = ws.OpenPortalLink(context.Background(), &workspacev1.OpenPortalLinkRequest{Secret: l.secret(t)})
	wantCode(t, "opening a link a second time", err, codes.Unauthenticated)

	portal := inPortal(session.GetToken())
	read, err := ws.GetPortalSession(portal, &workspacev1.GetPortalSessionRequest{})
	if err != nil || read.GetToken() != "" || read.GetLinkId() != l.ID || read.GetWorkspaceId() != d.WorkspaceID {
		t.Fatalf("GetPortalSession = %v, %v", read, err)
	}
	keys, err := ws.ListWorkspaceKeys(portal, &workspacev1.ListWorkspaceKeysRequest{Id: d.WorkspaceID})
	if err != nil || len(keys.GetKeys()) == 0 {
		t.Fatalf("ListWorkspaceKeys in the portal = %v, %v", keys, err)
	}
	if _, err := ws.ListLtiRegistrations(portal, &workspacev1.ListLtiRegistrationsRequest{Id: d.WorkspaceID}); err != nil {
		t.Fatalf("ListLtiRegistrations in the portal: %v", err)
	}
	_, err = ws.GetWorkspace(portal, &workspacev1.GetWorkspaceRequest{Id: campus.WorkspaceID})
	wantCode(t, "a workspace the session's manages", err, codes.NotFound)
	_, err = ws.ListWorkspaceKeys(portal, &workspacev1.ListWorkspaceKeysRequest{Id: campus.WorkspaceID})
	wantCode(t, "the key pairs of a workspace it manages", err, codes.NotFound)
	_, err = ws.ListWorkspaces(portal, &workspacev1.ListWorkspacesRequest{})
	wantCode(t, "ListWorkspaces in the portal", err, codes.PermissionDenied)
	_, err = ws.CreatePortalLink(portal, &workspacev1.CreatePortalLinkRequest{Id: d.WorkspaceID})
	wantCode(t, "a portal link made in the portal", err, codes.PermissionDenied)
	_, err = ws.GetWorkspace(inPortal(strings.Repeat("A", 43)), &workspacev1.GetWorkspaceRequest{Id: d.WorkspaceID})
	wantCode(t, "an unknown session", err, codes.Unauthenticated)

	// The gateway forwards no portal-session header, nor grpc-gateway's
	// metadata prefix: REST does not know the session.
	for _, header := range []string{"Portal-Session", "Grpc-Metadata-Portal-Session"} {
		anonymous(t).do(http.MethodGet, "/api/workspace/"+d.WorkspaceID, nil, header, session.GetToken()).
			wantError(http.StatusUnauthorized, "UNAUTHENTICATED", "")
	}

	r := root.revokePortalLink(d.WorkspaceID, l.ID)
	if !r.Opened {
		t.Fatalf("revocation %+v, want opened", r)
	}
	_, err = ws.GetPortalSession(portal, &workspacev1.GetPortalSessionRequest{})
	wantCode(t, "the session after its revocation", err, codes.Unauthenticated)
	if again := root.revokePortalLink(d.WorkspaceID, l.ID); again != r {
		t.Fatalf("revoking again: %+v, want %+v", again, r)
	}
}

// Deleting the workspace ends its portal sessions at once; undeleting it
// revives none.
func TestPortalSessionEndsWithItsWorkspace(t *testing.T) {
	root := asRoot(t)
	d := root.create(unique(t, "district"), nil)
	ws := portalGRPC(t, env)
	portal := inPortal(openPortal(t, ws, root.newPortalLink(d.WorkspaceID, nil)).GetToken())
	get := &workspacev1.GetWorkspaceRequest{Id: d.WorkspaceID}
	if _, err := ws.GetWorkspace(portal, get); err != nil {
		t.Fatal(err)
	}
	root.delete("/api/workspace/" + d.WorkspaceID).ok(nil)
	_, err := ws.GetWorkspace(portal, get)
	wantCode(t, "a session of a deleted workspace", err, codes.Unauthenticated)
	root.post("/api/workspace/"+d.WorkspaceID+":undelete", nil).ok(nil)
	_, err = ws.GetPortalSession(portal, &workspacev1.GetPortalSessionRequest{})
	wantCode(t, "a session of an undeleted workspace", err, codes.Unauthenticated)
	openPortal(t, ws, root.newPortalLink(d.WorkspaceID, nil))
}

// The audit trail shows a link made by the key pair, opened, and what the
// administrator did in the portal, by the actor portal with the link's id,
// up to signing out.
func TestPortalEventsNameThePortal(t *testing.T) {
	root := asRoot(t)
	d := root.create(unique(t, "district"), nil)
	ws := portalGRPC(t, env)
	l := root.newPortalLink(d.WorkspaceID, nil)
	portal := inPortal(openPortal(t, ws, l).GetToken())
	if _, err := ws.RotateWorkspaceKey(portal, &workspacev1.RotateWorkspaceKeyRequest{Id: d.WorkspaceID, AppKey: d.AppKeys.LTI.ConsumerKey}); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.RevokePortalLink(portal, &workspacev1.RevokePortalLinkRequest{Id: d.WorkspaceID, LinkId: l.ID}); err != nil {
		t.Fatal(err)
	}
	_, err := ws.GetPortalSession(portal, &workspacev1.GetPortalSessionRequest{})
	wantCode(t, "the session after signing out", err, codes.Unauthenticated)

	page := root.waitEvents(d.WorkspaceID, url.Values{"type": {"portalLink.created", "portalLink.opened", "keyPair.rotated", "portalLink.revoked"}},
		"portalLink.created", "portalLink.opened", "keyPair.rotated", "portalLink.revoked")
	for i, e := range page.Events {
		wantActor := "portal"
		if i == 0 {
			wantActor = "keyPair"
		}
		if e.Actor.Type != wantActor || e.Actor.WorkspaceID != d.WorkspaceID && wantActor == "portal" {
			t.Errorf("%s: actor %+v, want %s", e.Type, e.Actor, wantActor)
		}
		if wantActor == "portal" && (e.Actor.LinkID != l.ID || e.Actor.AppKey != "") || wantActor == "keyPair" && e.Actor.LinkID != "" {
			t.Errorf("%s: actor %+v, want the link %s named for the portal only", e.Type, e.Actor, l.ID)
		}
		if e.Type != "keyPair.rotated" && (e.Target.Type != "portalLink" || e.Target.ID != l.ID) {
			t.Errorf("%s: target %+v, want the link", e.Type, e.Target)
		}
	}
}
