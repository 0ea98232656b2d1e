package e2e

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/deploy/local/stack"
	"github.com/liveproctor/workspaces/pkg/testenv"
)

const (
	agsClaim          = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
	resourceLinkClaim = "https://purl.imsglobal.org/spec/lti/claim/resource_link"
	scoresExam        = "3f2a6c1e-8d4b-4e2a-9c1f-5b7d2e8a4c6f"
)

// ltiScore is GET …/lti/scores/{scoreId}.
type ltiScore struct {
	ID        string `json:"id"`
	LaunchID  string `json:"launchId"`
	Status    string `json:"status"`
	Reason    string `json:"reason"`
	Attempts  int    `json:"attempts"`
	UpdatedAt string `json:"updatedAt"`
}

// scoresFixture is a stack of two workspace replicas, which share the
// delivery of scores, a test platform registered in a workspace, and
// launches made through it.
type scoresFixture struct {
	t        *testing.T
	p        *platform
	s        *stack.Stack
	w        createResult
	launches lti13Launches
}

func newScoresFixture(t *testing.T) *scoresFixture {
	t.Helper()
	p := startPlatform(t, platformOptions{})
	addr, err := testenv.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(p.URL)
	s := startOwnStackWith(t, stack.Options{GatewayAddr: addr, Replicas: stack.Replicas{Workspace: 2}},
		"PUBLIC_BASE_URL=http://"+addr, "LTI_ALLOW_INSECURE_HOSTS="+u.Host,
		"LTI_SCORE_LEASE=3s", "LTI_SCORE_RETRY_SCHEDULE=1s,1s,1s,1s")
	c := platformClient{ClientID: clientID(t, "a"), DeploymentIDs: []string{"dep-1"}, JWKSURL: s.GatewayURL + "/lti/v1p3/jwks.json"}
	p.SetClients(s.GatewayURL, []platformClient{c})
	w := asRoot(t).on(s).create(unique(t, "school"), nil)
	w.server(t).on(s).post("/api/workspace/"+w.WorkspaceID+"/lti/registrations", map[string]any{
		"issuer": p.Issuer, "clientId": c.ClientID, "deploymentIds": []string{"dep-1"},
		"authLoginUrl": p.URL + "/auth", "jwksUrl": p.URL + "/jwks", "authTokenUrl": p.TokenURL(),
	}).ok(nil)
	return &scoresFixture{t: t, p: p, s: s, w: w, launches: lti13Launches{t: t, platform: p, clientID: c.ClientID}}
}

// launch makes a learner's launch of the exam as user, with the claims
// patched, and returns its launch id.
func (f *scoresFixture) launch(user string, lineItem bool, claims map[string]any) string {
	f.t.Helper()
	if claims == nil {
		claims = map[string]any{}
	}
	claims["sub"] = user
	claims[customClaim] = map[string]any{"exam_config_id": scoresExam}
	browser := newLaunchBrowser(f.t)
	action, form := f.launches.start(browser, launchOverrides{Claims: claims, LineItem: lineItem})
	status, page := browser.post(action, form)
	if status != http.StatusOK {
		f.t.Fatalf("the launch: %d\n%s", status, page)
	}
	var session struct {
		LTI struct {
			LaunchID string `json:"launchId"`
		} `json:"lti"`
	}
	token := html.UnescapeString(between(page, `data-auth="`, `"`))
	anonymous(f.t).on(f.s).do(http.MethodGet, "/api/sdk/session", nil, "Authorization", "Bearer "+token).ok(&session)
	return session.LTI.LaunchID
}

func (f *scoresFixture) submit(launchID string, given float64) *response {
	f.t.Helper()
	return f.w.server(f.t).on(f.s).post("/api/workspace/"+f.w.WorkspaceID+"/lti/launches/"+launchID+"/score", map[string]any{
		"scoreGiven": given, "scoreMaximum": 100, "activityProgress": "Completed", "gradingProgress": "FullyGraded",
	})
}

// send submits a score and returns its id.
func (f *scoresFixture) send(launchID string, given float64) string {
	f.t.Helper()
	var receipt struct{ ID, Status string }
	f.submit(launchID, given).wantStatus(http.StatusAccepted).decode(&receipt)
	if receipt.ID == "" || receipt.Status != "pending" {
		f.t.Fatalf("the receipt: %+v", receipt)
	}
	return receipt.ID
}

func (f *scoresFixture) score(id string) ltiScore {
	f.t.Helper()
	var out ltiScore
	f.w.server(f.t).on(f.s).get("/api/workspace/" + f.w.WorkspaceID + "/lti/scores/" + id).ok(&out)
	return out
}

// waitScores waits until the platform has applied n scores more than
// before, then until every score in ids reads delivered.
func (f *scoresFixture) waitDelivered(before int, ids []string) {
	f.t.Helper()
	testenv.Eventually(f.t, time.Minute, func() error {
		if n := applied(f.p.withT(f.t).Stats().Scores) - before; n < len(ids) {
			return fmt.Errorf("%d of %d scores applied", n, len(ids))
		}
		return nil
	}, "the platform applies the scores")
	for _, id := range ids {
		testenv.Eventually(f.t, 10*time.Second, func() error {
			if got := f.score(id); got.Status != "delivered" {
				return fmt.Errorf("%+v", got)
			}
			return nil
		}, "score %s delivered", id)
	}
}

// applied counts the scores the platform applied.
func applied(scores []receivedScore) int {
	n := 0
	for _, s := range scores {
		if s.Status == http.StatusNoContent {
			n++
		}
	}
	return n
}

// wantInOrder checks the platform applied each user's scores once each,
// in the order sent (scoreGiven 0, 1, 2, …), stamped strictly later each
// time, to line items whose URL kept the platform's query.
func wantInOrder(t *testing.T, received []receivedScore, users map[string]int) {
	t.Helper()
	next := map[string]int{}
	last := map[string]time.Time{}
	for _, r := range received {
		user, _ := r.Score["userId"].(string)
		if _, ok := users[user]; !ok || r.Status != http.StatusNoContent {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, r.Score["timestamp"].(string))
		given, _ := r.Score["scoreGiven"].(float64)
		if err != nil || !at.After(last[user]) || int(given) != next[user] || !strings.Contains(r.LineItem, "?type_id=") {
			t.Fatalf("%s's score %v (%s) after %d at %s", user, r.Score, r.LineItem, next[user], last[user])
		}
		next[user]++
		last[user] = at
	}
	for user, n := range users {
		if next[user] != n {
			t.Fatalf("%s: %d scores applied, want %d", user, next[user], n)
		}
	}
}

// Scores reach the test platform's gradebook (tools/lti-platform, which
// refuses a /scores put after the line item's query, a score without the
// score scope, and one older than the last): a hundred from four users
// through two workspace replicas, each applied once, in order per user,
// with one access token; a 429 waits for the platform's Retry-After and an
// expired token is fetched again; a refusal fails the score with the
// platform's words; a launch without a line item gets one made for its
// resource link, once; the queue survives its replicas' deaths. Every call
// is held to the OpenAPI document.
func TestLTI13Scores(t *testing.T) {
	f := newScoresFixture(t)
	p := f.p
	clientID := f.launches.clientID
	users := map[string]string{}
	for i := range 4 {
		user := fmt.Sprintf("learner-%d", i)
		users[user] = f.launch(user, true, nil)
	}

	t.Run("a hundred scores, in order per user, one token", func(t *testing.T) {
		before := p.withT(t).Stats()
		var ids []string
		for i := range 25 {
			for user := range users {
				ids = append(ids, f.send(users[user], float64(i)))
			}
		}
		f.waitDelivered(applied(before.Scores), ids)
		after := p.withT(t).Stats()
		counts := map[string]int{}
		for user := range users {
			counts[user] = 25
		}
		wantInOrder(t, after.Scores[len(before.Scores):], counts)
		if n := after.TokensIssued[clientID] - before.TokensIssued[clientID]; n != 1 {
			t.Fatalf("%d access tokens issued for the scores, want 1", n)
		}
		if got := f.score(ids[0]); got.Attempts != 1 || got.LaunchID == "" || got.Reason != "" || got.UpdatedAt == "" {
			t.Fatalf("a delivered score: %+v", got)
		}
		var events struct {
			Events []struct {
				Type   string `json:"type"`
				Target struct{ Type, ID string }
			} `json:"events"`
		}
		testenv.Eventually(t, 10*time.Second, func() error {
			f.w.server(t).on(f.s).get("/api/workspace/" + f.w.WorkspaceID + "/events?type=ltiScore.delivered&pageSize=100").ok(&events)
			if len(events.Events) != 100 {
				return fmt.Errorf("%d events", len(events.Events))
			}
			return nil
		}, "an event per score")
		if events.Events[0].Target.Type != "ltiScore" || !slices.Contains(ids, events.Events[0].Target.ID) {
			t.Fatalf("an event: %+v", events.Events[0])
		}
	})

	t.Run("a 429 and an expired token", func(t *testing.T) {
		p := p.withT(t)
		before := p.Stats()
		p.Fail(platformFault{Service: "scores", Status: http.StatusTooManyRequests, Count: 1, RetryAfter: 2})
		p.Fail(platformFault{Service: "scores", Status: http.StatusUnauthorized, Count: 1})
		id := f.send(users["learner-0"], 25)
		f.waitDelivered(applied(before.Scores), []string{id})
		after := p.Stats()
		if got := f.score(id); got.Attempts != 2 {
			t.Fatalf("after a 429 and a 401: %+v", got)
		}
		if n := after.TokensIssued[clientID] - before.TokensIssued[clientID]; n != 1 {
			t.Fatalf("%d tokens issued, want the one after the 401", n)
		}
		if n := after.Calls["scores"] - before.Calls["scores"]; n != 3 {
			t.Fatalf("%d calls to the scores service, want 3 (429, 401, 204)", n)
		}
	})

	t.Run("a refusal fails the score with the platform's words", func(t *testing.T) {
		p := p.withT(t)
		p.Fail(platformFault{Service: "scores", Status: http.StatusBadRequest, Count: 1})
		failed := f.send(users["learner-1"], 25)
		next := f.send(users["learner-1"], 26)
		testenv.Eventually(t, 30*time.Second, func() error {
			if got := f.score(failed); got.Status != "failed" || !strings.Contains(got.Reason, "HTTP 400") || got.Attempts != 1 {
				return fmt.Errorf("%+v", got)
			}
			if got := f.score(next); got.Status != "delivered" {
				return fmt.Errorf("the next score: %+v", got)
			}
			return nil
		}, "the refused score failed, the next delivered")
	})

	t.Run("a resource link's line item is made once", func(t *testing.T) {
		p := p.withT(t)
		link := map[string]any{resourceLinkClaim: map[string]any{"id": "link-scores", "title": "Unit 3"}}
		a, b := f.launch("learner-7", false, link), f.launch("learner-8", false, link)
		before := p.Stats()
		var ids []string
		for i := range 3 {
			ids = append(ids, f.send(a, float64(i)), f.send(b, float64(i)))
		}
		f.waitDelivered(applied(before.Scores), ids)
		var made []platformLineItem
		for _, item := range p.LineItems() {
			if item.ResourceLinkID == "link-scores" {
				made = append(made, item)
			}
		}
		if len(made) != 1 || made[0].ResourceID != scoresExam || made[0].ScoreMaximum != 100 {
			t.Fatalf("line items of the link: %+v", made)
		}
		wantInOrder(t, p.Stats().Scores[len(before.Scores):], map[string]int{"learner-7": 3, "learner-8": 3})
	})

	t.Run("the queue survives its replicas", func(t *testing.T) {
		p := p.withT(t)
		before := p.Stats()
		p.Fail(platformFault{Service: "scores", Status: http.StatusServiceUnavailable, Count: 4, RetryAfter: 1})
		var ids []string
		for i := range 5 {
			ids = append(ids, f.send(users["learner-2"], float64(100+i)), f.send(users["learner-3"], float64(100+i)))
		}
		testenv.Eventually(t, 30*time.Second, func() error {
			if n := p.Stats().Calls["scores"] - before.Calls["scores"]; n < 2 {
				return fmt.Errorf("%d attempts", n)
			}
			return nil
		}, "the first attempts")
		for _, r := range f.s.Replicas("workspace") {
			if err := f.s.KillReplica(r); err != nil {
				t.Fatal(err)
			}
		}
		for range 2 {
			if _, err := f.s.AddReplica(context.Background(), "workspace"); err != nil {
				t.Fatal(err)
			}
		}
		f.waitDelivered(applied(before.Scores), ids)
		var mine []receivedScore
		for _, r := range p.Stats().Scores[len(before.Scores):] {
			if given, _ := r.Score["scoreGiven"].(float64); given >= 100 {
				r.Score["scoreGiven"] = given - 100
				mine = append(mine, r)
			}
		}
		wantInOrder(t, mine, map[string]int{"learner-2": 5, "learner-3": 5})
	})

	t.Run("what is refused", func(t *testing.T) {
		path := "/api/workspace/" + f.w.WorkspaceID + "/lti/launches/" + users["learner-0"] + "/score"
		server := f.w.server(t).on(f.s)
		server.post(path, map[string]any{"scoreGiven": 1, "scoreMaximum": 0, "activityProgress": "Completed", "gradingProgress": "FullyGraded"}).
			wantError(http.StatusBadRequest, "INVALID_ARGUMENT", "scoreMaximum")
		server.post(path, map[string]any{"scoreGiven": -1, "scoreMaximum": 10, "activityProgress": "Completed", "gradingProgress": "FullyGraded"}).
			wantError(http.StatusBadRequest, "INVALID_ARGUMENT", "scoreGiven")
		server.post(path, map[string]any{"scoreGiven": 1, "scoreMaximum": 10, "activityProgress": "Done", "gradingProgress": "FullyGraded"}).
			wantError(http.StatusBadRequest, "INVALID_ARGUMENT", "activityProgress")
		server.post(path, map[string]any{"scoreMaximum": 10, "activityProgress": "Completed", "gradingProgress": "FullyGraded"}).
			wantError(http.StatusBadRequest, "INVALID_ARGUMENT", "scoreGiven")
		server.post(path, map[string]any{"scoreGiven": 1, "scoreMaximum": 10, "activityProgress": "Completed", "gradingProgress": "FullyGraded",
			"submittedAt": "yesterday"}).wantError(http.StatusBadRequest, "INVALID_ARGUMENT", "submittedAt")
		noGradebook := f.launch("learner-9", false, map[string]any{agsClaim: nil})
		f.submit(noGradebook, 1).wantError(http.StatusConflict, "FAILED_PRECONDITION", "")
		f.submit("unknown", 1).wantError(http.StatusNotFound, "NOT_FOUND", "")
		server.get("/api/workspace/"+f.w.WorkspaceID+"/lti/scores/unknown").wantError(http.StatusNotFound, "NOT_FOUND", "")
		other := asRoot(t).on(f.s).create(unique(t, "other"), nil)
		other.server(t).on(f.s).post("/api/workspace/"+other.WorkspaceID+"/lti/launches/"+users["learner-0"]+"/score", map[string]any{
			"scoreGiven": 1, "scoreMaximum": 10, "activityProgress": "Completed", "gradingProgress": "FullyGraded",
		}).wantError(http.StatusNotFound, "NOT_FOUND", "")
	})
}
