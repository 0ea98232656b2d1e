package e2e

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// lti13LoginPath is the tool's OIDC login initiation URL, on the gateway.
const lti13LoginPath = "/lti/v1p3/login"

// lti13Launch is the tool's launch URL as PUBLIC_BASE_URL makes it (the
// stack keeps the local run's base URL), which target_link_uri must be.
func lti13Launch(t *testing.T, w createResult) string {
	t.Helper()
	base, ok := strings.CutSuffix(w.AppKeys.LTI.LaunchURL, "/lti/v1/launch")
	if !ok {
		t.Fatalf("the LTI 1.1 launch URL %q", w.AppKeys.LTI.LaunchURL)
	}
	return base + "/lti/v1p3/launch"
}

// startLTI13Login sends a login initiation as a platform's page makes the
// browser send it, following no redirect: a GET with params as the query,
// or a POST of them as a form. The exchange is checked against the served
// OpenAPI document.
func startLTI13Login(t *testing.T, method string, params url.Values) (int, http.Header, string) {
	t.Helper()
	target, body := env.GatewayURL+lti13LoginPath, io.Reader(nil)
	if method == http.MethodGet {
		target += "?" + params.Encode()
	} else {
		body = strings.NewReader(params.Encode())
	}
	req, err := http.NewRequest(method, target, body)
	if err != nil {
		t.Fatal(err)
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	return browse(t, req)
}

// noRedirects is a browser that stops at each redirect, to look at it.
var noRedirects = &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// browse sends req as a browser would but follows no redirect, and returns
// the answer's status, header and page; the exchange is checked against the
// served OpenAPI document.
func browse(t *testing.T, req *http.Request) (int, http.Header, string) {
	t.Helper()
	resp, err := noRedirects.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	page, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	apiDoc.check(t, req, resp.StatusCode, resp.Header, page)
	return resp.StatusCode, resp.Header, string(page)
}

// A platform registered with a workspace starts a launch: the browser is
// sent to the registered authorization endpoint with exactly the OIDC
// authentication request, keeps the state in a partitioned cookie, and the
// login waits in Redis under a digest of the state for ten minutes.
func TestLTI13LoginRedirectsToThePlatform(t *testing.T) {
	w := asRoot(t).create(unique(t, "w"), nil)
	issuer := "https://" + unique(t, "lms") + ".example.edu"
	reg := w.server(t).register(w.WorkspaceID, map[string]any{
		"issuer": issuer, "clientId": "client-1", "deploymentIds": []string{"1:abc"},
		"authLoginUrl": issuer + "/api/lti/authorize_redirect?tenant=district+7", "jwksUrl": issuer + "/api/lti/security/jwks",
	})
	launch := lti13Launch(t, w)
	login := url.Values{
		"iss": {issuer}, "login_hint": {"535fa085"}, "target_link_uri": {launch}, "lti_message_hint": {"eyJ0.e30.s+g/="},
		"client_id": {"client-1"}, "lti_deployment_id": {"1:abc"}, "canvas_region": {"us-east-1"},
	}
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		status, header, page := startLTI13Login(t, method, login)
		if status != http.StatusFound || header.Get("Cache-Control") != "no-store" {
			t.Fatalf("%s: %d %v\n%s", method, status, header, page)
		}
		to, err := url.Parse(header.Get("Location"))
		if err != nil || to.Scheme+"://"+to.Host+to.Path != issuer+"/api/lti/authorize_redirect" {
			t.Fatalf("%s: Location %q", method, header.Get("Location"))
		}
		q := to.Query()
		state, nonce := q.Get("state"), q.Get("nonce")
		want := url.Values{
			"tenant": {"district 7"}, "scope": {"openid"}, "response_type": {"id_token"}, "response_mode": {"form_post"},
			"prompt": {"none"}, "client_id": {"client-1"}, "redirect_uri": {launch}, "login_hint": {"535fa085"},
			"lti_message_hint": {"eyJ0.e30.s+g/="}, "state": {state}, "nonce": {nonce},
		}
		if q.Encode() != want.Encode() || len(state) != 43 || len(nonce) != 43 || state == nonce {
			t.Fatalf("%s: the authentication request\n got %s\nwant %s", method, q.Encode(), want.Encode())
		}
		sum := sha256.Sum256([]byte(state))
		cookieName := "lti1p3_state_" + base64.RawURLEncoding.EncodeToString(sum[:])[:16]
		wantCookie := cookieName + "=" + state + "; Path=/lti/v1p3/launch; Max-Age=600; HttpOnly; Secure; SameSite=None; Partitioned"
		if got := header.Values("Set-Cookie"); len(got) != 1 || got[0] != wantCookie {
			t.Fatalf("%s: Set-Cookie %q, want %q", method, got, wantCookie)
		}
		storedLogin(t, state, nonce, w.WorkspaceID, reg.ID)
	}
}

// storedLogin checks that Redis holds the login under a digest of state,
// and the state nowhere.
func storedLogin(t *testing.T, state, nonce, workspaceID, registrationID string) {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: env.RedisAddr})
	defer rdb.Close()
	ctx := context.Background()
	sum := sha256.Sum256([]byte(state))
	key := "lti13:login:" + hex.EncodeToString(sum[:])
	raw, err := rdb.Get(ctx, key).Bytes()
	var login map[string]any
	if err != nil || json.Unmarshal(raw, &login) != nil || login["nonce"] != nonce ||
		login["workspaceId"] != workspaceID || login["registrationId"] != registrationID || strings.Contains(string(raw), state) {
		t.Fatalf("Redis %s: %s, %v", key, raw, err)
	}
	if ttl, err := rdb.PTTL(ctx, key).Result(); err != nil || ttl < 9*time.Minute || ttl > 10*time.Minute {
		t.Fatalf("the login's expiry: %v, %v", ttl, err)
	}
	if keys, err := rdb.Keys(ctx, "*"+state+"*").Result(); err != nil || len(keys) != 0 {
		t.Fatalf("keys naming the state: %q, %v", keys, err)
	}
}

// Refused logins get a page and no cookie: 400 for a missing login_hint
// and for an issuer with two registrations that sends no client_id (the
// page says what to set in the LMS); 401 for an issuer no workspace
// registered and for a deployment the registration does not list.
func TestLTI13LoginRefusals(t *testing.T) {
	w := asRoot(t).create(unique(t, "w"), nil)
	self := w.server(t)
	issuer := "https://" + unique(t, "lms") + ".example.edu"
	for _, clientID := range []string{"client-1", "client-2"} {
		self.register(w.WorkspaceID, map[string]any{
			"issuer": issuer, "clientId": clientID, "deploymentIds": []string{"1:abc"},
			"authLoginUrl": issuer + "/auth", "jwksUrl": issuer + "/jwks",
		})
	}
	login := func(edit func(url.Values)) url.Values {
		v := url.Values{"iss": {issuer}, "login_hint": {"h"}, "target_link_uri": {lti13Launch(t, w)}, "client_id": {"client-2"}}
		edit(v)
		return v
	}
	refused := func(name string, status, want int, header http.Header, page, words string) {
		t.Helper()
		if status != want || !strings.Contains(page, words) || header.Get("Location") != "" || len(header.Values("Set-Cookie")) != 0 ||
			!strings.HasPrefix(header.Get("Content-Type"), "text/html") {
			t.Errorf("%s: %d, want %d with %q: %v\n%s", name, status, want, words, header, page)
		}
	}
	status, header, page := startLTI13Login(t, http.MethodGet, login(func(v url.Values) { v.Del("login_hint") }))
	refused("no login_hint", status, http.StatusBadRequest, header, page, "lacks login_hint")
	status, header, page = startLTI13Login(t, http.MethodPost, login(func(v url.Values) { v.Del("login_hint") }))
	refused("no login_hint, posted", status, http.StatusBadRequest, header, page, "lacks login_hint")
	status, header, page = startLTI13Login(t, http.MethodGet, login(func(v url.Values) { v.Del("client_id") }))
	refused("two registrations, no client_id", status, http.StatusBadRequest, header, page, "sends client_id")
	status, header, page = startLTI13Login(t, http.MethodGet, login(func(v url.Values) { v.Set("iss", issuer+"/") }))
	refused("an unknown issuer", status, http.StatusUnauthorized, header, page, "no registration of this tool")
	status, header, page = startLTI13Login(t, http.MethodGet, login(func(v url.Values) { v.Set("lti_deployment_id", "2:x") }))
	refused("an unknown deployment", status, http.StatusUnauthorized, header, page, "lti_deployment_id")

	// With client_id, either registration logs in.
	if status, header, page = startLTI13Login(t, http.MethodGet, login(func(url.Values) {})); status != http.StatusFound {
		t.Fatalf("with client_id: %d %v\n%s", status, header, page)
	}
}

// A login without client_id but naming its deployment is the victim's
// whatever another workspace registers: a second workspace registering
// the victim's issuer, with a client id and deployment of its own, leaves
// the victim's login going to the victim's registration. Only a login
// naming neither client_id nor deployment is then ambiguous (400).
func TestLTI13LoginWithoutClientIDIgnoresOtherWorkspaces(t *testing.T) {
	victim := asRoot(t).create(unique(t, "victim"), nil)
	issuer := "https://" + unique(t, "lms") + ".example.edu"
	reg := victim.server(t).register(victim.WorkspaceID, map[string]any{
		"issuer": issuer, "clientId": "client-1", "deploymentIds": []string{"1:abc"},
		"authLoginUrl": issuer + "/auth", "jwksUrl": issuer + "/jwks",
	})
	login := url.Values{"iss": {issuer}, "login_hint": {"h"}, "target_link_uri": {lti13Launch(t, victim)}, "lti_deployment_id": {"1:abc"}}
	wantVictims := func(what string) {
		t.Helper()
		status, header, page := startLTI13Login(t, http.MethodGet, login)
		if status != http.StatusFound {
			t.Fatalf("%s: %d %v\n%s", what, status, header, page)
		}
		to, err := url.Parse(header.Get("Location"))
		if err != nil || to.Query().Get("client_id") != "client-1" {
			t.Fatalf("%s: Location %q", what, header.Get("Location"))
		}
		storedLogin(t, to.Query().Get("state"), to.Query().Get("nonce"), victim.WorkspaceID, reg.ID)
	}
	wantVictims("alone")

	other := asRoot(t).create(unique(t, "other"), nil)
	other.server(t).register(other.WorkspaceID, map[string]any{
		"issuer": issuer, "clientId": "made-up", "deploymentIds": []string{"9:zzz"},
		"authLoginUrl": "https://elsewhere.example.org/auth", "jwksUrl": issuer + "/jwks",
	})
	wantVictims("with another workspace registering the issuer")

	login.Del("lti_deployment_id")
	status, header, page := startLTI13Login(t, http.MethodGet, login)
	if status != http.StatusBadRequest || !strings.Contains(page, "sends client_id") || header.Get("Location") != "" {
		t.Fatalf("neither client_id nor deployment: %d %v\n%s", status, header, page)
	}
}
