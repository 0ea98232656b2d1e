package e2e

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/dghubble/oauth1"

	"github.com/liveproctor/workspaces/deploy/local/browser"
)

// captureAuthorization is an http.RoundTripper that keeps the Authorization
// header of the request it is given and sends nothing.
type captureAuthorization struct{ header string }

func (c *captureAuthorization) RoundTrip(req *http.Request) (*http.Response, error) {
	c.header = req.Header.Get("Authorization")
	return nil, errors.New("captured")
}

// signLaunch signs an LTI launch to launchURL with an OAuth 1.0a library we
// did not write (github.com/dghubble/oauth1), then moves its oauth_*
// parameters from the Authorization header into the form, where LTI 1.1
// carries them: the signature covers the same parameters either way (RFC
// 5849, section 3.4.1.3.1).
func signLaunch(t *testing.T, launchURL, key, secret string, params url.Values) url.Values {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, launchURL, strings.NewReader(params.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	capture := &captureAuthorization{}
	ctx := context.WithValue(context.Background(), oauth1.HTTPClient, &http.Client{Transport: capture})
	client := oauth1.NewClient(ctx, oauth1.NewConfig(key, secret), oauth1.NewToken("", ""))
	_, _ = client.Do(req) // captured, not sent
	if !strings.HasPrefix(capture.header, "OAuth ") {
		t.Fatalf("the signer set no OAuth header: %q", capture.header)
	}
	signed := url.Values{}
	for k, vs := range params {
		signed[k] = append([]string(nil), vs...)
	}
	for part := range strings.SplitSeq(strings.TrimPrefix(capture.header, "OAuth "), ", ") {
		k, v, _ := strings.Cut(part, "=")
		value, err := url.PathUnescape(strings.Trim(v, `"`))
		if err != nil {
			t.Fatal(err)
		}
		signed.Set(k, value)
	}
	return signed
}

// launchParams are what Canvas sends for a student opening the tool.
func launchParams(examConfigID string) url.Values {
	return url.Values{
		"lti_message_type":                 {"basic-lti-launch-request"},
		"lti_version":                      {"LTI-1p0"},
		"resource_link_id":                 {"course-7-exam-1"},
		"user_id":                          {"student-42"},
		"lis_person_contact_email_primary": {"ada@school.example"},
		"roles":                            {"Learner"},
		"context_title":                    {"Algebra I (period 3)"},
		"custom_exam_config_id":            {examConfigID},
	}
}

// postLaunch posts a signed launch form to the gateway, as the LMS's page
// in the user's browser does.
// The exchange is checked against the served OpenAPI document.
func postLaunch(t *testing.T, gateway string, form url.Values) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, gateway+"/lti/v1/launch", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	apiDoc.check(t, req, resp.StatusCode, resp.Header, body)
	return resp.StatusCode, string(body), resp.Header
}

// A launch signed by an independent OAuth 1.0a implementation with a
// workspace's LTI pair opens a session for the user; tampering, a wrong
// secret, a replay, a missing parameter, the server pair,
// an unknown key and a deleted workspace are each refused with a page and
// the right status.
func TestLTILaunchesFromAnLMS(t *testing.T) {
	const exam = "7c9e6679-7425-40de-944b-e07fc1f90ae7"
	w := asRoot(t).create(unique(t, "school"), nil)
	lti := w.AppKeys.LTI
	sign := func(key, secret string, params url.Values) url.Values {
		return signLaunch(t, lti.LaunchURL, key, secret, params)
	}

	good := sign(lti.ConsumerKey, lti.SharedSecret, launchParams(exam))
	status, page, header := postLaunch(t, env.GatewayURL, good)
	if status != http.StatusOK || !strings.Contains(page, `data-exam-config-id="`+exam+`"`) || header.Get("Cache-Control") != "no-store" {
		t.Fatalf("a good launch: %d %s", status, page)
	}
	token := html.UnescapeString(between(page, `data-auth="`, `"`))
	var s sdkSession
	session(t, token).ok(&s)
	if s.Email != "ada@school.example" || s.WorkspaceID != w.WorkspaceID {
		t.Fatalf("the launch's session: %+v", s)
	}

	refused := func(name string, form url.Values, want int, reason string) {
		t.Helper()
		status, page, _ := postLaunch(t, env.GatewayURL, form)
		if status != want || !strings.Contains(strings.ToLower(page), reason) || strings.Contains(page, "data-auth") {
			t.Errorf("%s: %d, want %d with %q:\n%s", name, status, want, reason, page)
		}
	}
	refused("a replayed launch", good, http.StatusUnauthorized, "already")

	tampered := sign(lti.ConsumerKey, lti.SharedSecret, launchParams(exam))
	tampered.Set("lis_person_contact_email_primary", "mallory@school.example")
	refused("a tampered parameter", tampered, http.StatusUnauthorized, "signature")
	refused("a wrong secret", sign(lti.ConsumerKey, "not-the-secret", launchParams(exam)), http.StatusUnauthorized, "signature")
	missing := launchParams(exam)
	missing.Del("resource_link_id")
	refused("no resource_link_id", sign(lti.ConsumerKey, lti.SharedSecret, missing), http.StatusBadRequest, "resource_link_id")
	nobody := launchParams(exam)
	nobody.Del("user_id")
	nobody.Del("lis_person_contact_email_primary")
	refused("neither user_id nor an e-mail", sign(lti.ConsumerKey, lti.SharedSecret, nobody), http.StatusBadRequest, "user_id")
	server := w.AppKeys.Server
	refused("the server key pair", sign(server.ConsumerKey, server.SharedSecret, launchParams(exam)), http.StatusUnauthorized, "consumer key")
	refused("an unknown key", sign("no-such-key", "x", launchParams(exam)), http.StatusUnauthorized, "consumer key")
	refused("no exam configuration", sign(lti.ConsumerKey, lti.SharedSecret, launchParams("")), http.StatusBadRequest, "exam_config_id")

	// A launch signed 10 minutes ago needs a signer with another clock,
	// which the library does not take: the workspace service's tests
	// cover it with a clock they control.

	asRoot(t).delete("/api/workspace/" + w.WorkspaceID).ok(nil)
	refused("a deleted workspace", sign(lti.ConsumerKey, lti.SharedSecret, launchParams(exam)), http.StatusUnauthorized, "")
}

func between(s, start, end string) string {
	_, after, ok := strings.Cut(s, start)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(after, end)
	return v
}

// lmsPage is an LMS's page on another site: it posts the signed launch
// into an iframe, as Canvas and Moodle open tools.
const lmsPage = `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Algebra I</title></head>
<body><h1>Exam 1</h1>
<form id="launch" method="post" action="%s" target="tool">%s</form>
<iframe name="tool" title="LiveProctor" width="800" height="600"></iframe>
<script>document.getElementById('launch').submit();</script>
</body></html>`

// In a real headless Chromium, an LMS page of another site launches the
// tool into an iframe: the component opens there for the user, with the
// exam configuration, on a token the session route accepts.
func TestLTILaunchInAnLMSIframe(t *testing.T) {
	const exam = "0f8fad5b-d9cb-469f-a165-70867728950e"
	w := asRoot(t).create(unique(t, "school"), nil)
	lti := w.AppKeys.LTI
	form := signLaunch(t, lti.LaunchURL, lti.ConsumerKey, lti.SharedSecret, launchParams(exam))
	var fields strings.Builder
	for name, values := range form {
		for _, v := range values {
			fmt.Fprintf(&fields, `<input type="hidden" name="%s" value="%s">`, html.EscapeString(name), html.EscapeString(v))
		}
	}
	launchURL := env.GatewayURL + "/lti/v1/launch"
	lms := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, _ *http.Request) {
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(rw, lmsPage, launchURL, fields.String())
	}))
	defer lms.Close()
	// localhost and 127.0.0.1 are different sites: the tool is framed
	// cross-site, as it is in a school's LMS.
	lmsURL := strings.Replace(lms.URL, "127.0.0.1", "localhost", 1)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	b, err := browser.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	page, err := b.Open(ctx, lmsURL)
	if err != nil {
		t.Fatal(err)
	}
	defer page.Close()
	frame, err := page.Frame(ctx, launchURL)
	if err != nil {
		t.Fatalf("%v\n%s", err, strings.Join(page.Log(), "\n"))
	}
	defer frame.Close()
	for field, want := range map[string]string{"email": "ada@school.example", "examConfigId": exam, "workspaceId": w.WorkspaceID} {
		got, err := frame.Text(ctx, `#proctor [data-field="`+field+`"]`)
		if err != nil || got != want {
			t.Fatalf("the framed component shows %s %q (%v), want %q\n%s", field, got, err, want, strings.Join(frame.Log(), "\n"))
		}
	}
	if _, kept, err := frame.Attribute(ctx, "#proctor", "data-auth"); err != nil || kept {
		t.Fatalf("the token is still in the page's DOM (%v)", err)
	}
}
