package e2e

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// deepLinkingPage reads the deep-linking page's form: where it posts and
// its hidden deep_link_id.
func deepLinkingPage(t *testing.T, page string) (action, id string) {
	t.Helper()
	m := regexp.MustCompile(`<form method="post" action="([^"]*)">\s*<input type="hidden" name="deep_link_id" value="([^"]*)">`).FindStringSubmatch(page)
	if m == nil || m[2] == "" {
		t.Fatalf("the deep-linking page has no form with a deep_link_id:\n%s", page)
	}
	return html.UnescapeString(m[1]), html.UnescapeString(m[2])
}

// replyForm reads the reply page's form: the platform's return URL, the
// JWT it posts and the policy's form-action.
func replyForm(t *testing.T, page string) (action, jwt string) {
	t.Helper()
	m := regexp.MustCompile(`<form id="deep-link-return" method="post" action="([^"]*)">\s*<input type="hidden" name="JWT" value="([^"]*)">`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("the reply page has no form posting JWT:\n%s", page)
	}
	return html.UnescapeString(m[1]), html.UnescapeString(m[2])
}

// A teacher adds an exam from the platform's content picker: the
// deep-linking launch's page takes the exam, and its reply, posted to the
// platform's return URL, verifies there with the tool's published keys (npm
// jose): the tool's client id as issuer, the platform as audience, the
// deployment, the request's data byte for byte, and one resource link
// whose custom exam_config_id is the exam. The page's id is used once; an
// exam id that is no UUID leaves it usable.
func TestLti13DeepLinkingReply(t *testing.T) {
	const exam = "7c9e6679-7425-40de-944b-e07fc1f90ae7"
	const data = `{"csrf":"çà 数学 🧪","html":"<b>&amp;</b>","n":1}`
	p, s, _, clients := setUpLti13(t)
	teacher := newLaunchBrowser(t)

	action, form := clients[0].start(teacher, launchOverrides{MessageType: "LtiDeepLinkingRequest", DeepLinkData: data})
	status, page := teacher.post(action, form)
	if status != http.StatusOK {
		t.Fatalf("the deep-linking launch: %d\n%s", status, page)
	}
	submit, id := deepLinkingPage(t, page)
	if submit != "/lti/v1p3/deep-linking" {
		t.Fatalf("the page posts to %q", submit)
	}
	target := s.GatewayURL + submit

	status, page = teacher.post(target, url.Values{"deep_link_id": {id}, "exam_config_id": {"exam-42"}})
	if status != http.StatusBadRequest || !strings.Contains(page, "not an exam configuration id") {
		t.Fatalf("a bad exam id: %d\n%s", status, page)
	}
	req, _ := http.NewRequest(http.MethodPost, target, strings.NewReader(url.Values{"deep_link_id": {id}, "exam_config_id": {exam}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := teacher.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "form-action "+p.URL+";") {
		t.Fatalf("the reply: %s %v", resp.Status, resp.Header)
	}
	// The answer above was the reply; its page is read from a second
	// launch's, below. The id is used up.
	status, page = teacher.post(target, url.Values{"deep_link_id": {id}, "exam_config_id": {exam}})
	if status != http.StatusUnauthorized || !strings.Contains(page, "already sent") {
		t.Fatalf("the id used again: %d\n%s", status, page)
	}

	action, form = clients[0].start(teacher, launchOverrides{MessageType: "LtiDeepLinkingRequest", DeepLinkData: data})
	if status, page = teacher.post(action, form); status != http.StatusOK {
		t.Fatalf("the second deep-linking launch: %d\n%s", status, page)
	}
	_, id = deepLinkingPage(t, page)
	status, page = teacher.post(target, url.Values{"deep_link_id": {id}, "exam_config_id": {exam}})
	if status != http.StatusOK {
		t.Fatalf("the reply: %d\n%s", status, page)
	}
	returnURL, jwt := replyForm(t, page)
	if returnURL != p.URL+"/deep-link-return" {
		t.Fatalf("the reply posts to %q", returnURL)
	}
	if status, page := teacher.post(returnURL, url.Values{"JWT": {jwt}}); status != http.StatusOK {
		t.Fatalf("the platform refused the reply: %d\n%s", status, page)
	}
	r, ok := p.withT(t).DeepLinkResult()
	if !ok || !r.Verified {
		t.Fatalf("the platform's verdict: %+v", r)
	}
	items, _ := r.Payload["https://purl.imsglobal.org/spec/lti-dl/claim/content_items"].([]any)
	item, _ := firstItem(items)
	custom, _ := item["custom"].(map[string]any)
	if r.Payload["https://purl.imsglobal.org/spec/lti-dl/claim/data"] != data || r.Payload["iss"] != clients[0].clientID ||
		r.Payload["aud"] != p.Issuer || len(items) != 1 || item["type"] != "ltiResourceLink" || custom["exam_config_id"] != exam ||
		item["url"] != s.GatewayURL+"/lti/v1p3/launch" {
		t.Fatalf("the reply's claims: %+v", r.Payload)
	}
}

func firstItem(items []any) (map[string]any, bool) {
	if len(items) == 0 {
		return nil, false
	}
	m, ok := items[0].(map[string]any)
	return m, ok
}
