package e2e

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/jose"
	"github.com/liveproctor/workspaces/pkg/testenv"
)

// ltiPlatformDir is the LTI 1.3 test platform's folder: platform.mjs on npm
// jose (panva), pinned, so that it shares no JOSE code with the tool's
// pkg/jose. `make test-deps` installs it.
var ltiPlatformDir = filepath.Join("..", "..", "..", "tools", "lti-platform")

// platformOptions configure a test platform.
type platformOptions struct {
	// Issuer is the iss of its tokens; empty: the platform's own URL.
	Issuer string
	// Tool is the tool's base URL; the login, launch (the redirect URI and
	// target_link_uri) and JWKS URLs are under it as the contract places
	// them. A client may name its own.
	Tool    string
	Clients []platformClient
}

// platformClient is one registration of the tool with the platform. The
// URLs left empty follow from Tool.
type platformClient struct {
	ClientID      string   `json:"client_id"`
	DeploymentIDs []string `json:"deployment_ids"`
	Tool          string   `json:"tool,omitempty"`
	LoginURL      string   `json:"login_url,omitempty"`
	RedirectURIs  []string `json:"redirect_uris,omitempty"`
	TargetLinkURI string   `json:"target_link_uri,omitempty"`
	JWKSURL       string   `json:"jwks_url,omitempty"`
}

// launchOverrides shape the next launch the platform answers (POST
// /control/next); the launch after it is ordinary again.
type launchOverrides struct {
	// Claims is an RFC 7386 merge patch over the id_token's claims: a nil
	// value removes the claim.
	Claims map[string]any `json:"claims,omitempty"`
	// Header patches the JOSE header the same way: {"kid": nil} leaves the
	// kid out, {"kid": "unknown"} names a key nobody published.
	Header map[string]any `json:"header,omitempty"`
	// ClockOffset moves iat and exp by this many seconds.
	ClockOffset int `json:"clock_offset,omitempty"`
	// SignWith is "none", "HS256" (keyed with the public key's PEM) or
	// "other-key" (an unpublished key under the published kid); empty: the
	// published key.
	SignWith     string `json:"sign_with,omitempty"`
	ClientID     string `json:"client_id,omitempty"`
	DeploymentID string `json:"deployment_id,omitempty"`
	// MessageType LtiDeepLinkingRequest adds deep_linking_settings with
	// DeepLinkData as data.
	MessageType  string `json:"message_type,omitempty"`
	DeepLinkData string `json:"deep_link_data,omitempty"`
	// LineItem puts the resource link's own line item (made on first use,
	// as an LMS makes a gradebook column) in the AGS claim's lineitem.
	LineItem bool `json:"lineitem,omitempty"`
}

// loginInitiation is a third-party login initiation the platform issued.
type loginInitiation struct {
	URL          string `json:"url"` // the tool's login URL with iss, login_hint, …
	LoginHint    string `json:"login_hint"`
	ClientID     string `json:"client_id"`
	DeploymentID string `json:"deployment_id"`
}

// authAnswer is the platform's answer to an authentication request: the
// form it posts to the tool, or why it refused.
type authAnswer struct {
	Status  int
	Action  string `json:"action"`
	IDToken string `json:"id_token"`
	State   string `json:"state"`
	Error   string `json:"error"`
}

type platformStats struct {
	JWKSFetches  int           `json:"jwksFetches"`
	AuthRequests []authRequest `json:"authRequests"`
	Errors       []string      `json:"errors"`
	// TokenFetches counts the token requests naming each client, refused
	// ones too; TokensIssued the access tokens each was given.
	TokenFetches  map[string]int `json:"tokenFetches"`
	TokensIssued  map[string]int `json:"tokensIssued"`
	TokenRequests []tokenRequest `json:"tokenRequests"`
	// Calls counts the calls to each service (token, lineitems, scores,
	// memberships), the faulted ones too.
	Calls map[string]int `json:"calls"`
	// Scores are every score received, in order, refused ones too.
	Scores []receivedScore `json:"scores"`
}

// tokenRequest is a request to the token endpoint, and why it was refused.
type tokenRequest struct {
	ClientID string `json:"client_id"`
	Scope    string `json:"scope"`
	Error    string `json:"error"`
}

// receivedScore is a score posted to a line item: 204 when applied, or
// the status and reason of its refusal.
type receivedScore struct {
	ClientID string         `json:"client_id"`
	LineItem string         `json:"lineitem"`
	Score    map[string]any `json:"score"`
	Status   int            `json:"status"`
	Error    string         `json:"error"`
}

// The LTI Advantage scopes (AGS 2.0 §3.1, NRPS 2.0 §2.1) the platform's
// token endpoint grants.
const (
	scopeLineItem         = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem"
	scopeLineItemReadOnly = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem.readonly"
	scopeResultReadOnly   = "https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly"
	scopeScore            = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
	scopeMemberships      = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"
)

// platformFault makes the next Count calls to Service ("token",
// "lineitems", "scores", "memberships") answer Status: 429 with
// Retry-After: RetryAfter (0: none), 401 as for an expired token, 500.
type platformFault struct {
	Service    string `json:"service"`
	Status     int    `json:"status"`
	Count      int    `json:"count"`
	RetryAfter int    `json:"retry_after,omitempty"`
}

// platformLineItem is an AGS 2.0 line item (§3.2); ID is its URL, with the
// platform's query string.
type platformLineItem struct {
	ID             string  `json:"id,omitempty"`
	Label          string  `json:"label"`
	ScoreMaximum   float64 `json:"scoreMaximum"`
	ResourceID     string  `json:"resourceId,omitempty"`
	ResourceLinkID string  `json:"resourceLinkId,omitempty"`
	Tag            string  `json:"tag,omitempty"`
}

// platformMember is a member of a context as NRPS 2.0 answers it.
type platformMember struct {
	UserID string   `json:"user_id"`
	Name   string   `json:"name,omitempty"`
	Email  string   `json:"email,omitempty"`
	Roles  []string `json:"roles"`
	Status string   `json:"status,omitempty"`
}

// authRequest is an authentication request the platform received, and the
// token it answered or why it refused.
type authRequest struct {
	Method string            `json:"method"`
	Params map[string]string `json:"params"`
	Error  string            `json:"error"`
	Header map[string]any    `json:"header"`
	Claims map[string]any    `json:"claims"`
}

// deepLinkResult is what the platform made of a Deep Linking response: its
// verdict, and the line items made for links that offered one.
type deepLinkResult struct {
	Verified  bool               `json:"verified"`
	Error     string             `json:"error"`
	Header    map[string]any     `json:"header"`
	Payload   map[string]any     `json:"payload"`
	LineItems []platformLineItem `json:"lineItems"`
}

// platform is a running test platform and its control API.
type platform struct {
	t      *testing.T
	URL    string // where it listens: /jwks, /auth, /course, /deep-link-return
	Issuer string
	http   *http.Client
}

// startPlatform starts node platform.mjs for the test's duration. It skips
// the test when node or the platform's npm packages are missing.
func startPlatform(t *testing.T, opts platformOptions) *platform {
	t.Helper()
	if _, err := os.Stat(filepath.Join(ltiPlatformDir, "node_modules", "jose")); err != nil {
		t.Skipf("the LTI test platform is not installed: run \"make test-deps\" (%v)", err)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("no node for the LTI test platform: run \"make test-deps\" (%v)", err)
	}
	script, err := filepath.Abs(filepath.Join(ltiPlatformDir, "platform.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	clients, err := json.Marshal(append([]platformClient{}, opts.Clients...))
	if err != nil {
		t.Fatal(err)
	}
	ready := &readyLine{found: make(chan string, 1)}
	proc, err := testenv.StartProcess(testenv.Command{
		Name:        "platform",
		Path:        node,
		Args:        []string{script, "--port", "0", "--issuer", opts.Issuer, "--tool", opts.Tool, "--clients", string(clients)},
		Output:      ready,
		StopTimeout: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := proc.Stop(); err != nil {
			t.Errorf("stop the LTI test platform: %v", err)
		}
		if t.Failed() {
			t.Logf("LTI test platform output:\n%s", proc.Output())
		}
	})
	var line string
	select {
	case line = <-ready.found:
	case <-proc.Done():
		t.Fatalf("the LTI test platform exited: %v\n%s", proc.Err(), proc.Output())
	case <-time.After(30 * time.Second):
		t.Fatalf("the LTI test platform did not say where it listens within 30s:\n%s", proc.Output())
	}
	var started struct{ URL, Issuer string }
	if err := json.Unmarshal([]byte(line), &started); err != nil || started.URL == "" {
		t.Fatalf("the LTI test platform's first line %q: %v", line, err)
	}
	return &platform{t: t, URL: started.URL, Issuer: started.Issuer, http: &http.Client{Timeout: 10 * time.Second}}
}

// readyLine is the platform's output as testenv passes it on ("name | line"):
// it hands on the first line that is the {"url": …} announcement.
type readyLine struct {
	once  sync.Once
	found chan string
}

func (r *readyLine) Write(b []byte) (int, error) {
	_, line, _ := strings.Cut(strings.TrimSpace(string(b)), " | ")
	if strings.HasPrefix(line, `{"url"`) {
		r.once.Do(func() { r.found <- line })
	}
	return len(b), nil
}

// withT returns p failing t, for a subtest.
func (p *platform) withT(t *testing.T) *platform {
	c := *p
	c.t = t
	return &c
}

// Next shapes the next launch.
func (p *platform) Next(o launchOverrides) { p.control(http.MethodPost, "/control/next", o, nil) }

// Login issues a login_hint for clientID and deploymentID (empty: the first
// client, its first deployment) and returns the tool's login initiation URL.
func (p *platform) Login(clientID, deploymentID string) loginInitiation {
	var l loginInitiation
	p.control(http.MethodPost, "/control/login", map[string]string{"client_id": clientID, "deployment_id": deploymentID}, &l)
	return l
}

// Authorize sends the authentication request authURL (where the tool's
// login redirected) and returns the platform's answer as JSON instead of
// the auto-posting form a browser gets.
func (p *platform) Authorize(authURL string) authAnswer {
	p.t.Helper()
	req, err := http.NewRequest(http.MethodGet, authURL, nil)
	if err != nil {
		p.t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := p.http.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	a := authAnswer{Status: resp.StatusCode}
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
		p.t.Fatalf("GET %s: %d, not JSON: %v", authURL, resp.StatusCode, err)
	}
	return a
}

// Rotate publishes a new signing key, keeping the old one published or not,
// and returns the new kid.
func (p *platform) Rotate(keepOld bool) string {
	var out struct{ KID string }
	p.control(http.MethodPost, "/control/rotate", map[string]bool{"keep_old": keepOld}, &out)
	return out.KID
}

// SetJWKS makes /jwks answer status, with Cache-Control cacheControl (empty:
// none).
func (p *platform) SetJWKS(status int, cacheControl string) {
	p.control(http.MethodPost, "/control/jwks", map[string]any{"status": status, "cacheControl": cacheControl}, nil)
}

// SetClients replaces the registrations; tool, when not empty, replaces
// the tool's base URL.
func (p *platform) SetClients(tool string, clients []platformClient) {
	body := map[string]any{"clients": append([]platformClient{}, clients...)}
	if tool != "" {
		body["tool"] = tool
	}
	p.control(http.MethodPost, "/control/clients", body, nil)
}

func (p *platform) Stats() platformStats {
	var s platformStats
	p.control(http.MethodGet, "/control/stats", nil, &s)
	return s
}

// Sign signs claims, as they are, with the published key under header
// merged over {"alg":"RS256","typ":"JWT","kid":<current>}.
func (p *platform) Sign(claims, header map[string]any) string { return p.SignWith("", claims, header) }

// SignWith signs as Sign does, or as how says: "none", "HS256", "other-key".
func (p *platform) SignWith(how string, claims, header map[string]any) string {
	body := map[string]any{"claims": claims, "header": header}
	if how != "" {
		body["sign_with"] = how
	}
	var out struct{ Token string }
	p.control(http.MethodPost, "/control/sign", body, &out)
	return out.Token
}

// DeepLinkResult is the last Deep Linking response the platform received.
func (p *platform) DeepLinkResult() (deepLinkResult, bool) {
	p.t.Helper()
	resp, err := p.http.Get(p.URL + "/control/deep-link-result")
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return deepLinkResult{}, false
	}
	var r deepLinkResult
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		p.t.Fatal(err)
	}
	return r, true
}

// TokenURL is the platform's token endpoint, a registration's authTokenUrl.
func (p *platform) TokenURL() string { return p.URL + "/token" }

// SetTokenLifetime makes the access tokens issued from now on last seconds
// (expires_in); the platform's default is 3600.
func (p *platform) SetTokenLifetime(seconds int) {
	p.control(http.MethodPost, "/control/tokens", map[string]int{"expires_in": seconds}, nil)
}

// ExpireTokens makes every access token issued so far expired, and returns
// how many were still valid.
func (p *platform) ExpireTokens() int {
	var out struct{ Expired int }
	p.control(http.MethodPost, "/control/tokens", map[string]bool{"expire": true}, &out)
	return out.Expired
}

// Fail makes the platform's services fail as f says; faults given one after
// another for a service are answered in turn.
func (p *platform) Fail(f platformFault) { p.control(http.MethodPost, "/control/faults", f, nil) }

// CreateLineItem makes a line item in contextID (empty: the launches'
// course-7), as a teacher would in the gradebook.
func (p *platform) CreateLineItem(contextID string, item platformLineItem) platformLineItem {
	body := map[string]any{"label": item.Label, "scoreMaximum": item.ScoreMaximum}
	for k, v := range map[string]string{"context_id": contextID, "resourceId": item.ResourceID, "resourceLinkId": item.ResourceLinkID, "tag": item.Tag} {
		if v != "" {
			body[k] = v
		}
	}
	var made platformLineItem
	p.control(http.MethodPost, "/control/lineitems", body, &made)
	return made
}

// LineItems are every context's line items.
func (p *platform) LineItems() []platformLineItem {
	var out struct{ LineItems []platformLineItem }
	p.control(http.MethodGet, "/control/lineitems", nil, &out)
	return out.LineItems
}

// SetMembers replaces contextID's roster (empty: course-7); until then a
// context has ten members: platform-user-42 (Instructor), a teaching
// assistant and eight learners.
func (p *platform) SetMembers(contextID string, members []platformMember) {
	body := map[string]any{"members": append([]platformMember{}, members...)}
	if contextID != "" {
		body["context_id"] = contextID
	}
	p.control(http.MethodPost, "/control/members", body, nil)
}

// Reset forgets overrides, issued login hints, JWKS settings, results and
// counts, and the Advantage side's tokens, faults, line items, scores and
// rosters; keys and clients stay.
func (p *platform) Reset() { p.control(http.MethodPost, "/control/reset", nil, nil) }

// control calls the control API and fails the test unless it answers 200.
func (p *platform) control(method, path string, in, out any) {
	p.t.Helper()
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			p.t.Fatal(err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, p.URL+path, body)
	if err != nil {
		p.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := p.http.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		p.t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		p.t.Fatalf("%s %s: %s %s", method, path, resp.Status, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			p.t.Fatalf("%s %s: %v", method, path, err)
		}
	}
}

// keySet fetches the platform's JWKS with pkg/jose, as the tool does.
func (p *platform) keySet() jose.KeySet {
	p.t.Helper()
	resp, err := p.http.Get(p.URL + "/jwks")
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, jose.MaxKeySetSize+1))
	if err != nil || resp.StatusCode != http.StatusOK {
		p.t.Fatalf("GET /jwks: %s %v", resp.Status, err)
	}
	set, err := jose.ParseKeySet(data)
	if err != nil {
		p.t.Fatal(err)
	}
	return set
}

// verifyWithOurJOSE checks token as the tool does, with pkg/jose and the
// platform's published keys.
func verifyWithOurJOSE(set jose.KeySet, token string) (jose.Claims, error) {
	h, err := jose.ParseHeader(token)
	if err != nil {
		return jose.Claims{}, err
	}
	key, ok := set.Key(h.KID)
	if !ok {
		return jose.Claims{}, fmt.Errorf("kid %q is not published", h.KID)
	}
	payload, err := jose.Verify(token, key)
	if err != nil {
		return jose.Claims{}, err
	}
	c, err := jose.ParseClaims(payload)
	if err != nil {
		return jose.Claims{}, err
	}
	return c, c.CheckTime(time.Now(), time.Minute)
}

// The test platform (npm jose) and the tool's pkg/jose agree on RS256 and
// JWKS both ways, pkg/jose refuses the platform's HS256 and unsigned
// tokens, and the platform's authorization endpoint and Deep Linking return
// behave as the tests built on them expect.
func TestLTIPlatformSelfCheck(t *testing.T) {
	// The tool's side of Deep Linking: our key set, served for the platform.
	toolKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	toolJWKS, err := jose.MarshalKeySet([]jose.PublicKey{{KID: "tool-1", Key: &toolKey.PublicKey}})
	if err != nil {
		t.Fatal(err)
	}
	tool := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(toolJWKS)
	}))
	defer tool.Close()

	p := startPlatform(t, platformOptions{
		Tool: "http://tool.test",
		Clients: []platformClient{
			{ClientID: "client-a", DeploymentIDs: []string{"dep-1", "dep-2"}, JWKSURL: tool.URL + "/jwks.json"},
			{ClientID: "client-b", DeploymentIDs: []string{"dep-3"}},
		},
	})
	now := time.Now().Unix()
	claims := map[string]any{"iss": p.Issuer, "aud": "client-a", "sub": "u-1", "iat": now, "exp": now + 300, "nonce": "n-1"}

	t.Run("RS256 tokens verify with pkg/jose", func(t *testing.T) {
		p := p.withT(t)
		c, err := verifyWithOurJOSE(p.keySet(), p.Sign(claims, nil))
		if err != nil {
			t.Fatal(err)
		}
		if c.Issuer != p.Issuer || !slices.Equal(c.Audience, []string{"client-a"}) || c.Nonce != "n-1" {
			t.Fatalf("claims %+v", c)
		}
		newKID := p.Rotate(false)
		set := p.keySet()
		if _, ok := set.Key(newKID); !ok {
			t.Fatalf("the rotated key %q is not published", newKID)
		}
		c, err = verifyWithOurJOSE(set, p.Sign(claims, nil))
		if err != nil || c.Subject != "u-1" {
			t.Fatalf("a token of the rotated key: %v %+v", err, c)
		}
	})

	t.Run("pkg/jose refuses the negative cases", func(t *testing.T) {
		p := p.withT(t)
		set := p.keySet()
		for _, tc := range []struct {
			how    string
			header map[string]any
			want   error
		}{
			{how: "HS256", want: jose.ErrAlgorithm},
			{how: "none", want: jose.ErrUnsecured},
			{how: "other-key", want: jose.ErrSignature},
			{header: map[string]any{"kid": nil}, want: jose.ErrNoKID},
			{header: map[string]any{"alg": "RS512"}, want: jose.ErrAlgorithm},
		} {
			if _, err := verifyWithOurJOSE(set, p.SignWith(tc.how, claims, tc.header)); !errors.Is(err, tc.want) {
				t.Errorf("sign_with %q header %v: %v, want %v", tc.how, tc.header, err, tc.want)
			}
		}
	})

	t.Run("the authorization endpoint", func(t *testing.T) {
		p := p.withT(t)
		p.Reset()
		login := p.Login("client-a", "dep-2")
		if !strings.HasPrefix(login.URL, "http://tool.test/lti/v1p3/login?") {
			t.Fatalf("login initiation %s", login.URL)
		}
		auth := url.Values{
			"scope": {"openid"}, "response_type": {"id_token"}, "response_mode": {"form_post"}, "prompt": {"none"},
			"client_id": {"client-a"}, "redirect_uri": {"http://tool.test/lti/v1p3/launch"},
			"login_hint": {login.LoginHint}, "nonce": {"nonce-1"}, "state": {"state-1"},
		}
		p.Next(launchOverrides{Claims: map[string]any{"email": nil}})
		a := p.Authorize(p.URL + "/auth?" + auth.Encode())
		if a.Status != http.StatusOK || a.Action != "http://tool.test/lti/v1p3/launch" || a.State != "state-1" {
			t.Fatalf("answer %+v", a)
		}
		c, err := verifyWithOurJOSE(p.keySet(), a.IDToken)
		if err != nil {
			t.Fatal(err)
		}
		var deployment, target string
		_ = json.Unmarshal(c.Raw["https://purl.imsglobal.org/spec/lti/claim/deployment_id"], &deployment)
		_ = json.Unmarshal(c.Raw["https://purl.imsglobal.org/spec/lti/claim/target_link_uri"], &target)
		if c.Nonce != "nonce-1" || deployment != "dep-2" || target != "http://tool.test/lti/v1p3/launch" || c.Raw["email"] != nil {
			t.Fatalf("id_token claims %s", c.Raw)
		}

		bad := url.Values{}
		for k, v := range auth {
			bad[k] = v
		}
		bad.Set("redirect_uri", "http://elsewhere.test/launch")
		if a := p.Authorize(p.URL + "/auth?" + bad.Encode()); a.Status != http.StatusBadRequest || !strings.Contains(a.Error, "redirect_uri") {
			t.Fatalf("a foreign redirect_uri: %+v", a)
		}
		s := p.Stats()
		if len(s.AuthRequests) != 2 || len(s.Errors) != 1 || !strings.Contains(s.Errors[0], "redirect_uri") {
			t.Fatalf("stats %+v", s)
		}
	})

	t.Run("JWKS answers as told", func(t *testing.T) {
		p := p.withT(t)
		p.Reset()
		p.SetJWKS(http.StatusInternalServerError, "max-age=600")
		resp, err := http.Get(p.URL + "/jwks")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusInternalServerError || resp.Header.Get("Cache-Control") != "max-age=600" {
			t.Fatalf("GET /jwks: %s, Cache-Control %q", resp.Status, resp.Header.Get("Cache-Control"))
		}
		if n := p.Stats().JWKSFetches; n != 1 {
			t.Fatalf("%d fetches counted, want 1", n)
		}
		p.SetJWKS(http.StatusOK, "")
	})

	t.Run("a Deep Linking response signed with pkg/jose verifies with npm jose", func(t *testing.T) {
		p := p.withT(t)
		p.Reset()
		login := p.Login("client-a", "")
		p.Next(launchOverrides{MessageType: "LtiDeepLinkingRequest", DeepLinkData: "opaque-7"})
		a := p.Authorize(p.URL + "/auth?" + url.Values{
			"scope": {"openid"}, "response_type": {"id_token"}, "response_mode": {"form_post"}, "prompt": {"none"},
			"client_id": {"client-a"}, "redirect_uri": {"http://tool.test/lti/v1p3/launch"},
			"login_hint": {login.LoginHint}, "nonce": {"nonce-2"}, "state": {"state-2"},
		}.Encode())
		c, err := verifyWithOurJOSE(p.keySet(), a.IDToken)
		if err != nil {
			t.Fatal(err)
		}
		var settings struct {
			ReturnURL string `json:"deep_link_return_url"`
			Data      string `json:"data"`
		}
		if err := json.Unmarshal(c.Raw["https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"], &settings); err != nil ||
			settings.ReturnURL != p.URL+"/deep-link-return" || settings.Data != "opaque-7" {
			t.Fatalf("deep_linking_settings %+v: %v", settings, err)
		}

		now := time.Now().Unix()
		response := map[string]any{
			"iss": "client-a", "aud": p.Issuer, "iat": now, "exp": now + 300, "nonce": "dl-nonce",
			"https://purl.imsglobal.org/spec/lti/claim/message_type":  "LtiDeepLinkingResponse",
			"https://purl.imsglobal.org/spec/lti/claim/version":       "1.3.0",
			"https://purl.imsglobal.org/spec/lti/claim/deployment_id": "dep-1",
			"https://purl.imsglobal.org/spec/lti-dl/claim/data":       "opaque-7",
			"https://purl.imsglobal.org/spec/lti-dl/claim/content_items": []map[string]any{
				{"type": "ltiResourceLink", "title": "Unit 3 exam", "custom": map[string]string{"exam_config_id": "exam-config-9"}},
			},
		}
		for _, tc := range []struct {
			name     string
			key      *rsa.PrivateKey
			verified bool
		}{
			{"the tool's key", toolKey, true},
			{"a key the tool did not publish", otherKey(t), false},
		} {
			jwt, err := jose.Sign(response, "tool-1", tc.key)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := http.PostForm(settings.ReturnURL, url.Values{"JWT": {jwt}})
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			r, ok := p.DeepLinkResult()
			if !ok || r.Verified != tc.verified || (resp.StatusCode == http.StatusOK) != tc.verified {
				t.Fatalf("%s: %s, result %+v", tc.name, resp.Status, r)
			}
		}
	})
}

func otherKey(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
