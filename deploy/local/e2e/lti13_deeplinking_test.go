package e2e

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/jose"
	"github.com/liveproctor/workspaces/pkg/testenv"
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
func TestLTI13DeepLinkingReply(t *testing.T) {
	const exam = "7c9e6679-7425-40de-944b-e07fc1f90ae7"
	const data = `{"csrf":"çà 数学 🧪","html":"<b>&amp;</b>","n":1}`
	p, s, _, clients := setUpLTI13(t)
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
	status, page = teacher.post(target, url.Values{"deep_link_id": {id}, "exam_config_id": {exam}, "score_maximum": {"25"}})
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
	// The request offered AGS: the link carried its line item, and the
	// platform made the gradebook column, named by the exam.
	if len(r.LineItems) != 1 {
		t.Fatalf("line items made: %+v; the item: %+v", r.LineItems, item)
	}
	made := r.LineItems[0]
	if made.ResourceID != exam || made.ScoreMaximum != 25 || made.Label != "LiveProctor exam" || made.ResourceLinkID == "" ||
		!slices.Contains(p.withT(t).LineItems(), made) {
		t.Fatalf("the line item made: %+v", made)
	}
}

// A teacher's reply to a request that says the platform ignores line items
// (accept_lineitem false), or that offers no AGS, carries none, and the
// platform makes no gradebook column; the exam is linked all the same.
func TestLTI13DeepLinkingWithoutLineItem(t *testing.T) {
	const exam = "7c9e6679-7425-40de-944b-e07fc1f90ae7"
	p, s, _, clients := setUpLTI13(t)
	teacher := newLaunchBrowser(t)
	for name, claims := range map[string]map[string]any{
		"accept_lineitem false": {"https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings": map[string]any{"accept_lineitem": false}},
		"no AGS claim":          {"https://purl.imsglobal.org/spec/lti-ags/claim/endpoint": nil},
	} {
		action, form := clients[0].start(teacher, launchOverrides{MessageType: "LtiDeepLinkingRequest", Claims: claims})
		status, page := teacher.post(action, form)
		if status != http.StatusOK {
			t.Fatalf("%s: the deep-linking launch: %d\n%s", name, status, page)
		}
		_, id := deepLinkingPage(t, page)
		status, page = teacher.post(s.GatewayURL+"/lti/v1p3/deep-linking", url.Values{"deep_link_id": {id}, "exam_config_id": {exam}})
		if status != http.StatusOK {
			t.Fatalf("%s: the reply: %d\n%s", name, status, page)
		}
		returnURL, jwt := replyForm(t, page)
		if status, page := teacher.post(returnURL, url.Values{"JWT": {jwt}}); status != http.StatusOK {
			t.Fatalf("%s: the platform refused the reply: %d\n%s", name, status, page)
		}
		r, ok := p.withT(t).DeepLinkResult()
		items, _ := r.Payload["https://purl.imsglobal.org/spec/lti-dl/claim/content_items"].([]any)
		item, _ := firstItem(items)
		if _, offered := item["lineItem"]; !ok || !r.Verified || offered || len(r.LineItems) != 0 {
			t.Fatalf("%s: the platform's verdict %+v", name, r)
		}
	}
	if made := p.withT(t).LineItems(); len(made) != 0 {
		t.Fatalf("line items made: %+v", made)
	}
}

// The tool's key schedule of TestLTI13DeepLinkingDuringToolKeyRotation:
// each key signs 6 s; its successor is published 3 s ahead, long enough
// for a reply to be signed between seeing the successor and its time on a
// loaded machine; a replaced key stays 6 s, long enough to post a reply
// the old key signed after the switch. The keys are checked twice a
// second.
const (
	toolKeyRotation = 6 * time.Second
	toolKeyLead     = 3 * time.Second
	toolKeyOverlap  = 6 * time.Second
)

// Deep Linking replies verify at the platform (npm jose, the tool's JWKS
// fetched for each reply, whatever its max-age) throughout a rotation of
// the tool's keys: once a successor is published, replies are still
// signed by the old key and verify; then the successor signs and its
// replies verify, and so does a reply the old key signed before the
// switch; after the overlap the old key is no longer published.
func TestLTI13DeepLinkingDuringToolKeyRotation(t *testing.T) {
	p, s, _, clients := setUpLTI13(t,
		"LTI_TOOL_KEY_ROTATION="+toolKeyRotation.String(), "LTI_TOOL_KEY_LEAD="+toolKeyLead.String(),
		"LTI_TOOL_KEY_OVERLAP="+toolKeyOverlap.String(), "LTI_TOOL_KEY_CHECK_INTERVAL=500ms")
	teacher := newLaunchBrowser(t)
	d := deepLinks{t: t, p: p, tool: s.GatewayURL, launches: clients[0], teacher: teacher}

	// Two exam pickers open before the successor appears, so that their
	// replies are signed right after it does, well within its lead.
	during, beforeSwitch := d.open(), d.open()
	seen := toolKids(t, s.GatewayURL)
	var old, successor string
	testenv.Eventually(t, 2*toolKeyRotation+20*time.Second, func() error {
		kids := toolKids(t, s.GatewayURL)
		for i, kid := range kids {
			if i > 0 && !slices.Contains(seen, kid) {
				old, successor = kids[i-1], kid
				return nil
			}
		}
		return fmt.Errorf("the JWKS lists %v, no key beyond %v", kids, seen)
	}, "a successor of the tool's key published")

	reply := d.reply(during)
	later := d.reply(beforeSwitch)
	if reply.kid != old || later.kid != old {
		t.Fatalf("replies right after the successor %s was published are signed by %s and %s, want the old key %s", successor, reply.kid, later.kid, old)
	}
	d.verifies(reply)

	byOld := 0
	testenv.Eventually(t, toolKeyLead+20*time.Second, func() error {
		r := d.reply(d.open())
		d.verifies(r)
		switch r.kid {
		case successor:
			t.Logf("the successor %s signs after %d more replies by the old key %s", successor, byOld, old)
			return nil
		case old:
			byOld++
			return fmt.Errorf("the reply is signed by the old key %s", old)
		}
		t.Fatalf("a reply signed by %s, neither the old key %s nor its successor %s", r.kid, old, successor)
		return nil
	}, "a reply signed by the successor %s", successor)
	d.verifies(later) // the old key signed it before the switch

	testenv.Eventually(t, toolKeyOverlap+20*time.Second, func() error {
		kids := toolKids(t, s.GatewayURL)
		if slices.Contains(kids, old) {
			return fmt.Errorf("the JWKS still lists the old key: %v", kids)
		}
		if !slices.Contains(kids, successor) {
			t.Fatalf("the JWKS lists neither the old key %s nor its successor %s: %v", old, successor, kids)
		}
		return nil
	}, "the old key %s no longer published", old)
}

// deepLinks runs deep-linking launches of one platform client and their
// replies, for one teacher.
type deepLinks struct {
	t        *testing.T
	p        *platform
	tool     string
	launches lti13Launches
	teacher  *launchBrowser
}

// deepLinkReply is a reply's JWT, where it is posted, and the kid that
// signed it.
type deepLinkReply struct {
	returnURL, jwt, kid string
}

// open launches the content picker and returns its deep_link_id.
func (d deepLinks) open() string {
	d.t.Helper()
	action, form := d.launches.start(d.teacher, launchOverrides{MessageType: "LtiDeepLinkingRequest"})
	status, page := d.teacher.post(action, form)
	if status != http.StatusOK {
		d.t.Fatalf("the deep-linking launch: %d\n%s", status, page)
	}
	_, id := deepLinkingPage(d.t, page)
	return id
}

// reply picks an exam on the picker id and returns the reply the tool
// signed, not yet posted to the platform.
func (d deepLinks) reply(id string) deepLinkReply {
	d.t.Helper()
	status, page := d.teacher.post(d.tool+"/lti/v1p3/deep-linking", url.Values{"deep_link_id": {id}, "exam_config_id": {"7c9e6679-7425-40de-944b-e07fc1f90ae7"}})
	if status != http.StatusOK {
		d.t.Fatalf("the reply: %d\n%s", status, page)
	}
	returnURL, jwt := replyForm(d.t, page)
	h, err := jose.ParseHeader(jwt)
	if err != nil {
		d.t.Fatalf("the reply's JWT: %v", err)
	}
	return deepLinkReply{returnURL: returnURL, jwt: jwt, kid: h.KID}
}

// verifies posts r to the platform and fails the test unless the platform
// verified it with the key that signed it.
func (d deepLinks) verifies(r deepLinkReply) {
	d.t.Helper()
	if status, page := d.teacher.post(r.returnURL, url.Values{"JWT": {r.jwt}}); status != http.StatusOK {
		d.t.Fatalf("the platform refused a reply signed by %s: %d\n%s", r.kid, status, page)
	}
	got, ok := d.p.withT(d.t).DeepLinkResult()
	if !ok || !got.Verified || got.Header["kid"] != r.kid {
		d.t.Fatalf("the platform's verdict on a reply signed by %s: %+v", r.kid, got)
	}
}

// toolKids are the kids the tool's JWKS lists, oldest first.
func toolKids(t *testing.T, tool string) []string {
	t.Helper()
	resp, err := http.Get(tool + "/lti/v1p3/jwks.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET the tool's JWKS: %s %v\n%s", resp.Status, err, body)
	}
	var set struct {
		Keys []struct {
			KID string `json:"kid"`
		} `json:"keys"`
	}
	if err := json.Unmarshal(body, &set); err != nil {
		t.Fatalf("the tool's JWKS %s: %v", body, err)
	}
	kids := make([]string, len(set.Keys))
	for i, k := range set.Keys {
		kids[i] = k.KID
	}
	return kids
}

func firstItem(items []any) (map[string]any, bool) {
	if len(items) == 0 {
		return nil, false
	}
	m, ok := items[0].(map[string]any)
	return m, ok
}
