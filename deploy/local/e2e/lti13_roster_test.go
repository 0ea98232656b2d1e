package e2e

import (
	"html"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"testing"
)

// ltiMembersPage is a page of GET …/lti/launches/{launchId}/members.
type ltiMembersPage struct {
	Members []struct {
		UserID string   `json:"userId"`
		Name   string   `json:"name"`
		Email  string   `json:"email"`
		Roles  []string `json:"roles"`
		Status string   `json:"status"`
	} `json:"members"`
	NextPageToken string `json:"nextPageToken"`
}

// The roster of an instructor's launch comes from the platform's NRPS
// service (tools/lti-platform: three pages behind mixed-case Link URLs),
// whole, in pages of any size, filtered by role; a learner's launch and a
// launch without the NRPS claim are refused; a 429 is a 503 with the
// platform's Retry-After, and an access token the platform expired is
// fetched again once. Every call is held to the OpenAPI document.
func TestLTI13Roster(t *testing.T) {
	const (
		instructor = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"
		learner    = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"
		nrpsClaim  = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"
		rolesClaim = "https://purl.imsglobal.org/spec/lti/claim/roles"
	)
	p := startPlatform(t, platformOptions{})
	s := startLTI13Stack(t, p.URL)
	c := platformClient{ClientID: clientID(t, "a"), DeploymentIDs: []string{"dep-1"}, JWKSURL: s.GatewayURL + "/lti/v1p3/jwks.json"}
	p.SetClients(s.GatewayURL, []platformClient{c})
	w := asRoot(t).on(s).create(unique(t, "school"), nil)
	w.server(t).on(s).post("/api/workspace/"+w.WorkspaceID+"/lti/registrations", map[string]any{
		"issuer": p.Issuer, "clientId": c.ClientID, "deploymentIds": []string{"dep-1"},
		"authLoginUrl": p.URL + "/auth", "jwksUrl": p.URL + "/jwks", "authTokenUrl": p.TokenURL(),
	}).ok(nil)
	launches := lti13Launches{t: t, platform: p, clientID: c.ClientID}
	launch := func(claims map[string]any) string {
		t.Helper()
		browser := newLaunchBrowser(t)
		claims["https://purl.imsglobal.org/spec/lti/claim/custom"] = map[string]any{"exam_config_id": "7c9e6679-7425-40de-944b-e07fc1f90ae7"}
		action, form := launches.start(browser, launchOverrides{Claims: claims})
		status, page := browser.post(action, form)
		if status != http.StatusOK {
			t.Fatalf("the launch: %d\n%s", status, page)
		}
		var session struct {
			LTI struct {
				LaunchID string `json:"launchId"`
			} `json:"lti"`
		}
		token := html.UnescapeString(between(page, `data-auth="`, `"`))
		anonymous(t).on(s).do(http.MethodGet, "/api/sdk/session", nil, "Authorization", "Bearer "+token).ok(&session)
		return session.LTI.LaunchID
	}
	teacher := launch(map[string]any{rolesClaim: []string{instructor}})
	members := func(launchID string, q url.Values) *response {
		return w.server(t).on(s).get("/api/workspace/" + w.WorkspaceID + "/lti/launches/" + launchID + "/members?" + q.Encode())
	}
	all := func(role string, size int) ([]string, int) {
		t.Helper()
		var ids []string
		pages := 0
		q := url.Values{"pageSize": {strconv.Itoa(size)}}
		if role != "" {
			q.Set("role", role)
		}
		for {
			var page ltiMembersPage
			members(teacher, q).ok(&page)
			pages++
			if len(page.Members) > size || (page.NextPageToken != "" && len(page.Members) != size) {
				t.Fatalf("a page of %d: %d members, next %q", size, len(page.Members), page.NextPageToken)
			}
			for _, m := range page.Members {
				if m.Status != "Active" || len(m.Roles) == 0 {
					t.Fatalf("a member: %+v", m)
				}
				ids = append(ids, m.UserID)
			}
			if page.NextPageToken == "" {
				return ids, pages
			}
			q.Set("pageToken", page.NextPageToken)
		}
	}
	everyone := []string{"platform-user-42", "platform-user-43"}
	for i := range 8 {
		everyone = append(everyone, "platform-user-"+strconv.Itoa(100+i))
	}

	t.Run("every member, over the platform's three pages", func(t *testing.T) {
		before := p.withT(t).Stats().Calls["memberships"]
		var page ltiMembersPage
		members(teacher, nil).ok(&page)
		if len(page.Members) != 10 || page.NextPageToken != "" || page.Members[0].Name != "Ada Lovelace" || page.Members[0].Email != "ada@school.example" {
			t.Fatalf("the roster: %+v", page)
		}
		if n := p.withT(t).Stats().Calls["memberships"] - before; n != 3 {
			t.Fatalf("%d calls to the platform's memberships, want its 3 pages", n)
		}
		for _, size := range []int{1, 3, 4, 7} {
			if ids, pages := all("", size); !slices.Equal(ids, everyone) || pages != (10+size-1)/size {
				t.Fatalf("pages of %d: %d pages, %v", size, pages, ids)
			}
		}
	})

	t.Run("filtered by role", func(t *testing.T) {
		if ids, _ := all("Learner", 3); !slices.Equal(ids, everyone[2:]) {
			t.Fatalf("the learners: %v", ids)
		}
		if ids, _ := all(instructor, 100); !slices.Equal(ids, everyone[:1]) {
			t.Fatalf("the instructors: %v", ids)
		}
		var page ltiMembersPage
		members(teacher, url.Values{"role": {"Learner"}, "pageSize": {"2"}}).ok(&page)
		members(teacher, url.Values{"role": {"Instructor"}, "pageToken": {page.NextPageToken}}).wantError(http.StatusBadRequest, "INVALID_ARGUMENT", "pageToken")
		members(teacher, url.Values{"pageToken": {"x" + page.NextPageToken}}).wantError(http.StatusBadRequest, "INVALID_ARGUMENT", "pageToken")
		members(teacher, url.Values{"pageSize": {"501"}}).wantError(http.StatusBadRequest, "INVALID_ARGUMENT", "pageSize")
	})

	t.Run("only for an instructor with NRPS", func(t *testing.T) {
		pupil := launch(map[string]any{rolesClaim: []string{learner}})
		members(pupil, nil).wantError(http.StatusForbidden, "PERMISSION_DENIED", "")
		without := launch(map[string]any{rolesClaim: []string{instructor}, nrpsClaim: nil})
		members(without, nil).wantError(http.StatusConflict, "FAILED_PRECONDITION", "")
		members("unknown", nil).wantError(http.StatusNotFound, "NOT_FOUND", "")
		other := asRoot(t).on(s).create(unique(t, "other"), nil)
		other.server(t).on(s).get("/api/workspace/"+w.WorkspaceID+"/lti/launches/"+teacher+"/members").wantError(http.StatusNotFound, "NOT_FOUND", "")
	})

	t.Run("a 429 is a 503 with the platform's Retry-After", func(t *testing.T) {
		p.withT(t).Fail(platformFault{Service: "memberships", Status: http.StatusTooManyRequests, Count: 1, RetryAfter: 7})
		r := members(teacher, nil)
		r.wantError(http.StatusServiceUnavailable, "UNAVAILABLE", "")
		if got := r.header.Get("Retry-After"); got != "7" {
			t.Fatalf("Retry-After = %q, want the platform's 7", got)
		}
		members(teacher, nil).ok(nil)
	})

	t.Run("an expired access token is fetched again, once", func(t *testing.T) {
		p := p.withT(t)
		if p.ExpireTokens() == 0 {
			t.Fatal("no access token was held")
		}
		before := p.Stats().TokensIssued[c.ClientID]
		var page ltiMembersPage
		members(teacher, nil).ok(&page)
		if len(page.Members) != 10 || p.Stats().TokensIssued[c.ClientID] != before+1 {
			t.Fatalf("after the token expired: %d members, %d tokens issued (%d before)", len(page.Members), p.Stats().TokensIssued[c.ClientID], before)
		}
		members(teacher, nil).ok(nil)
		if n := p.Stats().TokensIssued[c.ClientID]; n != before+1 {
			t.Fatalf("%d tokens issued, want the one new token shared (%d before)", n, before)
		}
		// Refused again with the new token: one retry, no more.
		p.Fail(platformFault{Service: "memberships", Status: http.StatusUnauthorized, Count: 2})
		calls := p.Stats().Calls["memberships"]
		members(teacher, nil).wantError(http.StatusBadGateway, "UNAVAILABLE", "")
		if n := p.Stats().Calls["memberships"] - calls; n != 2 {
			t.Fatalf("%d calls for a page refused twice, want 2", n)
		}
	})
}
