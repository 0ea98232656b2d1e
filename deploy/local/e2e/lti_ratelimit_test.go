package e2e

import (
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// ltiFrom sends an LTI request as a browser at addr does through a proxy
// the gateway trusts (X-Forwarded-For), following no redirect: a GET with
// form as the query, or a POST of it. The exchange is checked against the
// served OpenAPI document.
func ltiFrom(t *testing.T, gateway, addr, method, path string, form url.Values) (int, http.Header, string) {
	t.Helper()
	target, body := gateway+path, io.Reader(nil)
	if method == http.MethodGet {
		target += "?" + form.Encode()
	} else {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, target, body)
	if err != nil {
		t.Fatal(err)
	}
	if method == http.MethodPost {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("X-Forwarded-For", addr)
	return browse(t, req)
}

// wantRetryLater checks a refusal page's status and its Retry-After.
func wantRetryLater(t *testing.T, what string, status, want int, header http.Header, page string) {
	t.Helper()
	if status != want {
		t.Fatalf("%s: %d, want %d: %s", what, status, want, page)
	}
	if s, err := strconv.Atoi(header.Get("Retry-After")); err != nil || s < 1 {
		t.Fatalf("%s: Retry-After %q", what, header.Get("Retry-After"))
	}
}

// Anonymous LTI requests count against their client address's limit and
// then the total of every address: past a school's burst its address gets
// 429 pages with Retry-After, on the login and on an LTI 1.1 launch (the
// auth service forwards the browser's address to the workspace service),
// while another address still logs in; past the total every address gets
// 503 with Retry-After.
func TestLTIAnonymousRequestsAreLimitedPerAddressAndInTotal(t *testing.T) {
	// One request a second refills far slower than this test sends.
	s := startOwnStack(t, "TRUSTED_PROXIES=127.0.0.1/32",
		"LTI_RATE_LIMIT_PER_ADDRESS=1", "LTI_RATE_LIMIT_PER_ADDRESS_BURST=3",
		"LTI_RATE_LIMIT_TOTAL=1", "LTI_RATE_LIMIT_TOTAL_BURST=10")
	root := asRoot(t).on(s)
	w := root.create("school", nil)
	const issuer = "https://lms.example.edu" // the stack is this test's
	w.server(t).on(s).register(w.WorkspaceID, map[string]any{
		"issuer": issuer, "clientId": "client-1", "deploymentIds": []string{"1"},
		"authLoginUrl": issuer + "/authorize", "jwksUrl": issuer + "/jwks",
	})
	login := url.Values{"iss": {issuer}, "login_hint": {"u"}, "target_link_uri": {lti13Launch(t, w)}, "client_id": {"client-1"}}

	const school = "203.0.113.7"
	passed, status, header, page := 0, 0, http.Header(nil), ""
	for i := 0; i < 20; i++ {
		if status, header, page = ltiFrom(t, s.GatewayURL, school, http.MethodGet, lti13LoginPath, login); status != http.StatusFound {
			break
		}
		passed++
	}
	if passed < 3 {
		t.Fatalf("%d logins passed before %d; want the burst of 3", passed, status)
	}
	wantRetryLater(t, "a login over the address's limit", status, http.StatusTooManyRequests, header, page)
	if !strings.Contains(page, "too many LTI requests from your address") {
		t.Fatalf("the refusal page: %s", page)
	}
	if status, _, page := ltiFrom(t, s.GatewayURL, "198.51.100.20", http.MethodGet, lti13LoginPath, login); status != http.StatusFound {
		t.Fatalf("a login from another address: %d %s", status, page)
	}

	// A launch from the school's address is verified by the auth service
	// on the browser's behalf, and refused as the browser's. The address
	// may have a request back by now: send until refused.
	lti := w.AppKeys.LTI
	for i := 0; ; i++ {
		form := signLaunch(t, lti.LaunchURL, lti.ConsumerKey, lti.SharedSecret, launchParams("7c9e6679-7425-40de-944b-e07fc1f90ae7"))
		status, header, page = ltiFrom(t, s.GatewayURL, school, http.MethodPost, "/lti/v1/launch", form)
		if status != http.StatusOK || i == 5 {
			break
		}
	}
	wantRetryLater(t, "a launch over the address's limit", status, http.StatusTooManyRequests, header, page)

	// Every other anonymous route counts against the same limit and says
	// so as its document does: the pages with a page, the others in the
	// API's error shape. The address may have a request back between
	// two: each is sent until refused, three times at most.
	pages := []struct {
		what, method, path string
		form               url.Values
	}{
		{"the deep-linking form", http.MethodPost, "/lti/v1p3/deep-linking",
			url.Values{"deep_link_id": {"unknown"}, "exam_config_id": {"7c9e6679-7425-40de-944b-e07fc1f90ae7"}}},
		{"a registration link", http.MethodGet, "/lti/v1p3/register/unknown",
			url.Values{"openid_configuration": {issuer + "/openid-configuration"}, "registration_token": {"t"}}},
	}
	for _, p := range pages {
		for i := 0; i < 3; i++ {
			if status, header, page = ltiFrom(t, s.GatewayURL, school, p.method, p.path, p.form); status == http.StatusTooManyRequests {
				break
			}
		}
		wantRetryLater(t, p.what+" over the address's limit", status, http.StatusTooManyRequests, header, page)
	}
	for _, path := range []string{"/lti/v1p3/jwks.json", "/lti/v1/workspaces/" + w.WorkspaceID + "/config.xml",
		"/lti/v1p3/workspaces/" + w.WorkspaceID + "/canvas.json"} {
		var r *response
		for i := 0; i < 3; i++ {
			if r = anonymous(t).on(s).do(http.MethodGet, path, nil, "X-Forwarded-For", school); r.status == http.StatusTooManyRequests {
				break
			}
		}
		r.wantError(http.StatusTooManyRequests, "RESOURCE_EXHAUSTED", "")
		if r.header.Get("Retry-After") == "" {
			t.Fatalf("%s's 429 without Retry-After: %v", path, r.header)
		}
	}

	// New addresses, each under its own limit, spend the total.
	for i := 1; i <= 20; i++ {
		status, header, page = ltiFrom(t, s.GatewayURL, "192.0.2."+strconv.Itoa(i), http.MethodGet, lti13LoginPath, login)
		if status != http.StatusFound {
			break
		}
	}
	wantRetryLater(t, "a login over the total", status, http.StatusServiceUnavailable, header, page)

	// The tool's keys answer the API's error shape.
	r := anonymous(t).on(s).do(http.MethodGet, "/lti/v1p3/jwks.json", nil, "X-Forwarded-For", "192.0.2.200")
	r.wantError(http.StatusServiceUnavailable, "UNAVAILABLE", "")
	if r.header.Get("Retry-After") == "" {
		t.Fatalf("the keys' 503 without Retry-After: %v", r.header)
	}
}
