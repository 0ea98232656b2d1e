package e2e

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/jose"
)

// The test platform's LTI Advantage side, driven directly as a tool would:
// access tokens for RS256 client assertions checked against the tool's
// JWKS, line items whose URLs carry a query, scores, NRPS in three pages
// behind mixed-case Link URLs, the launch's service claims, and the faults
// the control API injects. The tests of the service's Advantage features
// stand on this behaviour.
func TestLTIPlatformAdvantage(t *testing.T) {
	toolKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	// The tool's key set, which a subtest rotates; the platform's fetches
	// of it are counted.
	var (
		mu         sync.Mutex
		toolKeys   = []jose.PublicKey{{KID: "tool-1", Key: &toolKey.PublicKey}}
		jwksServed int
	)
	tool := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		jwksServed++
		set, err := jose.MarshalKeySet(toolKeys)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(set)
	}))
	defer tool.Close()
	p := startPlatform(t, platformOptions{
		Tool:    "http://tool.test",
		Clients: []platformClient{{ClientID: "client-a", DeploymentIDs: []string{"dep-1"}, JWKSURL: tool.URL + "/jwks.json"}},
	})
	s := &advantageSession{t: t, p: p, key: toolKey}

	t.Run("the token endpoint checks the client assertion", func(t *testing.T) {
		s := s.withT(t)
		p.Reset()
		p.SetTokenLifetime(120)
		claims := s.assertionClaims()
		status, answer := s.fetchToken(s.sign(claims, toolKey), scopeScore)
		if status != http.StatusOK || answer["token_type"] != "Bearer" || answer["expires_in"] != 120.0 ||
			answer["scope"] != scopeScore || answer["access_token"] == "" {
			t.Fatalf("a good assertion: %d %v", status, answer)
		}
		later := func(c map[string]any) map[string]any { c["exp"] = c["iat"].(int64) + 600; return c }
		for _, tc := range []struct {
			name  string
			token string
		}{
			{"its jti used again", s.sign(claims, toolKey)},
			{"aud the issuer", s.sign(with(s.assertionClaims(), "aud", p.Issuer), toolKey)},
			{"sub not the client", s.sign(with(s.assertionClaims(), "sub", "someone"), toolKey)},
			{"no jti", s.sign(with(s.assertionClaims(), "jti", nil), toolKey)},
			{"10 minutes long", s.sign(later(s.assertionClaims()), toolKey)},
			{"a key the tool did not publish", s.sign(s.assertionClaims(), otherKey(t))},
		} {
			if status, answer := s.fetchToken(tc.token, scopeScore); status != http.StatusUnauthorized || answer["error"] != "invalid_client" {
				t.Errorf("%s: %d %v", tc.name, status, answer)
			}
		}
		if status, answer := s.fetchToken(s.sign(s.assertionClaims(), toolKey), "https://example.test/scope/all"); status != http.StatusBadRequest || answer["error"] != "invalid_scope" {
			t.Errorf("an unknown scope: %d %v", status, answer)
		}
		st := p.Stats()
		if st.TokenFetches["client-a"] != 8 || st.TokensIssued["client-a"] != 1 || st.Calls["token"] != 8 {
			t.Fatalf("token fetches %v, issued %v, calls %v; want 8, 1, 8", st.TokenFetches, st.TokensIssued, st.Calls)
		}
		mu.Lock()
		served := jwksServed
		mu.Unlock()
		if served != 1 {
			t.Fatalf("the tool's JWKS was fetched %d times for 8 assertions, want once", served)
		}
	})

	t.Run("a rotated tool key is heard at once", func(t *testing.T) {
		s := s.withT(t)
		p.Reset()
		s.token(scopeScore)
		newKey := otherKey(t)
		mu.Lock()
		toolKeys = append(toolKeys, jose.PublicKey{KID: "tool-2", Key: &newKey.PublicKey})
		mu.Unlock()
		token, err := jose.Sign(s.assertionClaims(), "tool-2", newKey)
		if err != nil {
			t.Fatal(err)
		}
		if status, answer := s.fetchToken(token, scopeScore); status != http.StatusOK {
			t.Fatalf("an assertion under the tool's new kid: %d %v", status, answer)
		}
	})

	t.Run("a resource link launch carries the AGS and NRPS claims", func(t *testing.T) {
		p := p.withT(t)
		p.Reset()
		login := p.Login("client-a", "")
		p.Next(launchOverrides{LineItem: true})
		a := p.Authorize(p.URL + "/auth?" + url.Values{
			"scope": {"openid"}, "response_type": {"id_token"}, "response_mode": {"form_post"}, "prompt": {"none"},
			"client_id": {"client-a"}, "redirect_uri": {"http://tool.test/lti/v1p3/launch"},
			"login_hint": {login.LoginHint}, "nonce": {"nonce-1"}, "state": {"state-1"},
		}.Encode())
		c, err := verifyWithOurJOSE(p.keySet(), a.IDToken)
		if err != nil {
			t.Fatal(err)
		}
		var ags struct {
			Scope     []string `json:"scope"`
			LineItems string   `json:"lineitems"`
			LineItem  string   `json:"lineitem"`
		}
		var nrps struct {
			URL      string   `json:"context_memberships_url"`
			Versions []string `json:"service_versions"`
		}
		if err := json.Unmarshal(c.Raw["https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"], &ags); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(c.Raw["https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"], &nrps); err != nil {
			t.Fatal(err)
		}
		items := p.LineItems()
		if len(items) != 1 || items[0].ID != ags.LineItem || items[0].ResourceLinkID != "course-7-exam-1" ||
			!strings.Contains(ags.LineItems, "/lineitems?type_id=") || !strings.Contains(ags.LineItem, "/lineitem?type_id=") ||
			len(ags.Scope) != 4 {
			t.Fatalf("AGS claim %+v, line items %+v", ags, items)
		}
		if nrps.URL != p.URL+"/nrps/contexts/course-7/memberships" || len(nrps.Versions) != 1 || nrps.Versions[0] != "2.0" {
			t.Fatalf("NRPS claim %+v", nrps)
		}
	})

	t.Run("line items and scores", func(t *testing.T) {
		s := s.withT(t)
		p.Reset()
		token := s.token(scopeLineItem + " " + scopeScore)
		container := p.URL + "/ags/contexts/course-7/lineitems?type_id=7"
		resp, body := s.call(http.MethodPost, container, token, "application/vnd.ims.lis.v2.lineitem+json",
			map[string]any{"label": "Unit 3 exam", "scoreMaximum": 50, "resourceId": "exam-config-1", "resourceLinkId": "link-9"})
		var item platformLineItem
		if resp.StatusCode != http.StatusCreated || json.Unmarshal(body, &item) != nil || !strings.HasSuffix(item.ID, "/lineitem?type_id=7") {
			t.Fatalf("POST the container: %s %s", resp.Status, body)
		}
		resp, body = s.call(http.MethodGet, container+"&resource_link_id=link-9", token, "", nil)
		var listed []platformLineItem
		if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &listed) != nil || len(listed) != 1 || listed[0] != item {
			t.Fatalf("GET the container by resource link: %s %s", resp.Status, body)
		}
		if resp, body := s.call(http.MethodGet, item.ID, token, "", nil); resp.StatusCode != http.StatusOK ||
			resp.Header.Get("Content-Type") != "application/vnd.ims.lis.v2.lineitem+json" {
			t.Fatalf("GET the line item: %s %s", resp.Status, body)
		}

		path, query, _ := strings.Cut(item.ID, "?")
		scores := path + "/scores?" + query
		score := func(user string, at time.Time) map[string]any {
			return map[string]any{"userId": user, "scoreGiven": 42, "scoreMaximum": 50, "activityProgress": "Completed",
				"gradingProgress": "FullyGraded", "timestamp": at.UTC().Format("2006-01-02T15:04:05.000Z07:00")}
		}
		now := time.Now()
		const scoreType = "application/vnd.ims.lis.v1.score+json"
		for _, tc := range []struct {
			name, url, token, contentType string
			score                         map[string]any
			want                          int
		}{
			{"a score", scores, token, scoreType, score("u-1", now), http.StatusNoContent},
			{"the next one", scores, token, scoreType, score("u-1", now.Add(time.Second)), http.StatusNoContent},
			{"an older one", scores, token, scoreType, score("u-1", now), http.StatusConflict},
			{"/scores after the query", item.ID + "/scores", token, scoreType, score("u-2", now), http.StatusMethodNotAllowed},
			{"plain JSON", scores, token, "application/json", score("u-2", now), http.StatusUnsupportedMediaType},
			{"a token without the score scope", scores, s.token(scopeLineItemReadOnly), scoreType, score("u-2", now), http.StatusForbidden},
			{"no token", scores, "", scoreType, score("u-2", now), http.StatusUnauthorized},
			{"no timestamp", scores, token, scoreType, with(score("u-2", now), "timestamp", nil), http.StatusBadRequest},
		} {
			if resp, body := s.call(http.MethodPost, tc.url, tc.token, tc.contentType, tc.score); resp.StatusCode != tc.want {
				t.Errorf("%s: %s %s, want %d", tc.name, resp.Status, body, tc.want)
			}
		}
		got := p.Stats().Scores
		if len(got) != 4 || got[0].Status != http.StatusNoContent || got[1].Status != http.StatusNoContent ||
			got[2].Status != http.StatusConflict || got[3].Status != http.StatusBadRequest || got[0].LineItem != item.ID ||
			got[0].Score["timestamp"] == got[1].Score["timestamp"] {
			t.Fatalf("scores recorded %+v", got)
		}
	})

	t.Run("memberships come in three pages, linked exactly", func(t *testing.T) {
		s := s.withT(t)
		p.Reset()
		token := s.token(scopeMemberships)
		first := p.URL + "/nrps/contexts/course-7/memberships"
		all, pages := s.members(first, token)
		if len(all) != 10 || len(pages) != 3 || all[0].UserID != "platform-user-42" {
			t.Fatalf("%d members in %d pages %v", len(all), len(pages), pages)
		}
		for _, page := range pages[1:] {
			if page == strings.ToLower(page) {
				t.Fatalf("the next page's URL %s is all lower case", page)
			}
			if resp, body := s.call(http.MethodGet, strings.ToLower(page), token, "", nil); resp.StatusCode != http.StatusNotFound {
				t.Fatalf("the next page lower-cased: %s %s", resp.Status, body)
			}
		}
		for role, want := range map[string]int{
			"Learner": 8,
			"http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor": 1,
		} {
			if members, _ := s.members(first+"?"+url.Values{"role": {role}}.Encode(), token); len(members) != want {
				t.Errorf("role %s: %d members, want %d", role, len(members), want)
			}
		}
		p.SetMembers("", []platformMember{{UserID: "solo", Roles: []string{"http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"}}})
		if members, _ := s.members(first, token); len(members) != 1 || members[0].UserID != "solo" || members[0].Status != "Active" {
			t.Fatalf("a roster of one: %+v", members)
		}
		if resp, _ := s.call(http.MethodGet, first, s.token(scopeScore), "", nil); resp.StatusCode != http.StatusForbidden {
			t.Fatalf("a token without the NRPS scope: %s", resp.Status)
		}
	})

	t.Run("faults as the control says", func(t *testing.T) {
		s := s.withT(t)
		p.Reset()
		token := s.token(scopeMemberships + " " + scopeResultReadOnly)
		first := p.URL + "/nrps/contexts/course-7/memberships"
		p.Fail(platformFault{Service: "memberships", Status: http.StatusTooManyRequests, Count: 2, RetryAfter: 7})
		p.Fail(platformFault{Service: "memberships", Status: http.StatusUnauthorized, Count: 1})
		p.Fail(platformFault{Service: "token", Status: http.StatusInternalServerError, Count: 1})
		for i, want := range []int{http.StatusTooManyRequests, http.StatusTooManyRequests, http.StatusUnauthorized, http.StatusOK} {
			resp, body := s.call(http.MethodGet, first, token, "", nil)
			if resp.StatusCode != want || (want == http.StatusTooManyRequests) != (resp.Header.Get("Retry-After") == "7") ||
				(want == http.StatusUnauthorized) != strings.Contains(resp.Header.Get("WWW-Authenticate"), "invalid_token") {
				t.Fatalf("call %d: %s %v %s, want %d", i+1, resp.Status, resp.Header, body, want)
			}
		}
		if status, answer := s.fetchToken(s.sign(s.assertionClaims(), s.key), scopeScore); status != http.StatusInternalServerError {
			t.Fatalf("the token endpoint told to fail: %d %v", status, answer)
		}
		if n := p.ExpireTokens(); n != 1 {
			t.Fatalf("%d tokens expired, want 1", n)
		}
		if resp, _ := s.call(http.MethodGet, first, token, "", nil); resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("an expired token: %s", resp.Status)
		}
		if resp, _ := s.call(http.MethodGet, first, s.token(scopeMemberships), "", nil); resp.StatusCode != http.StatusOK {
			t.Fatalf("a new token: %s", resp.Status)
		}
		if c := p.Stats().Calls; c["memberships"] != 6 || c["token"] != 3 {
			t.Fatalf("calls %v, want 6 to memberships and 3 to the token endpoint", c)
		}
	})
}

// advantageSession is the tool's side of the platform's services: its key,
// its assertions, its calls.
type advantageSession struct {
	t   *testing.T
	p   *platform
	key *rsa.PrivateKey
}

func (s *advantageSession) withT(t *testing.T) *advantageSession {
	return &advantageSession{t: t, p: s.p.withT(t), key: s.key}
}

// assertionClaims are a client assertion's claims as RFC 7523 §3 and the
// 1EdTech Security Framework want them, with a fresh jti.
func (s *advantageSession) assertionClaims() map[string]any {
	now := time.Now().Unix()
	return map[string]any{"iss": "client-a", "sub": "client-a", "aud": s.p.TokenURL(), "iat": now, "exp": now + 300, "jti": rand.Text()}
}

func (s *advantageSession) sign(claims map[string]any, key *rsa.PrivateKey) string {
	s.t.Helper()
	token, err := jose.Sign(claims, "tool-1", key)
	if err != nil {
		s.t.Fatal(err)
	}
	return token
}

// fetchToken asks the token endpoint for scope with assertion.
func (s *advantageSession) fetchToken(assertion, scope string) (int, map[string]any) {
	s.t.Helper()
	resp, err := http.PostForm(s.p.TokenURL(), url.Values{
		"grant_type":            {"client_credentials"},
		"client_assertion_type": {"urn:ietf:params:oauth:client-assertion-type:jwt-bearer"},
		"client_assertion":      {assertion},
		"scope":                 {scope},
	})
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	var answer map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
		s.t.Fatalf("POST /token: %s, not JSON: %v", resp.Status, err)
	}
	return resp.StatusCode, answer
}

// token is an access token for scope.
func (s *advantageSession) token(scope string) string {
	s.t.Helper()
	status, answer := s.fetchToken(s.sign(s.assertionClaims(), s.key), scope)
	token, _ := answer["access_token"].(string)
	if status != http.StatusOK || token == "" {
		s.t.Fatalf("POST /token: %d %v", status, answer)
	}
	return token
}

// call sends a service request with token (empty: none) and a JSON body of
// contentType, accepting whatever the service's media type is.
func (s *advantageSession) call(method, target, token, contentType string, body any) (*http.Response, []byte) {
	s.t.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			s.t.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, target, r)
	if err != nil {
		s.t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	return resp, data
}

var nextLink = regexp.MustCompile(`<([^>]+)>;\s*rel="next"`)

// members reads every page of an NRPS membership container from first,
// following the Link headers as given, and returns the members and the
// pages' URLs.
func (s *advantageSession) members(first, token string) ([]platformMember, []string) {
	s.t.Helper()
	var all []platformMember
	var pages []string
	for page := first; page != ""; {
		req, err := http.NewRequest(http.MethodGet, page, nil)
		if err != nil {
			s.t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Accept", "application/vnd.ims.lti-nrps.v2.membershipcontainer+json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			s.t.Fatal(err)
		}
		var container struct{ Members []platformMember }
		err = json.NewDecoder(resp.Body).Decode(&container)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || err != nil {
			s.t.Fatalf("GET %s: %s %v", page, resp.Status, err)
		}
		all = append(all, container.Members...)
		pages = append(pages, page)
		page = ""
		if m := nextLink.FindStringSubmatch(resp.Header.Get("Link")); m != nil {
			page = m[1]
		}
	}
	return all, pages
}

// with sets (or, given nil, removes) claim k of m and returns m.
func with(m map[string]any, k string, v any) map[string]any {
	if v == nil {
		delete(m, k)
	} else {
		m[k] = v
	}
	return m
}
