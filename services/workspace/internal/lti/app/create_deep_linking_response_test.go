package app_test

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/jose"
	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

const deepLinkData = `{"csrf":"çà 数学 🧪","<b>":"&amp;"}`

// deepLinkLaunch makes a deep-linking launch of reg answering a new login
// of state and returns the id it kept the request under.
func (lf *lti13Fixture) deepLinkLaunch(state string) string {
	lf.t.Helper()
	return lf.deepLinkLaunchWith(state, nil)
}

// deepLinkLaunchWith is deepLinkLaunch with the claims extra set over the
// launch's (deep_linking_settings' members too).
func (lf *lti13Fixture) deepLinkLaunchWith(state string, extra map[string]any) string {
	lf.t.Helper()
	lf.login(state, lf.reg)
	c := lf.claims(state)
	delete(c, "https://purl.imsglobal.org/spec/lti/claim/custom")
	delete(c, "https://purl.imsglobal.org/spec/lti/claim/resource_link")
	c["https://purl.imsglobal.org/spec/lti/claim/message_type"] = ltidomain.MessageDeepLinking
	settings := map[string]any{
		"deep_link_return_url": platformIssuer + "/deep-link-return", "accept_types": []string{"ltiResourceLink"}, "data": deepLinkData,
	}
	c["https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"] = settings
	for k, v := range extra {
		if strings.HasPrefix(k, "accept_") {
			settings[k] = v
		} else {
			c[k] = v
		}
	}
	l, err := lf.launch(lf.sign(c, "k1"), state, state)
	if err != nil || l.DeepLinking == nil || l.DeepLinking.ID == "" {
		lf.t.Fatalf("deep-linking launch %+v: %v", l, err)
	}
	return l.DeepLinking.ID
}

func (lf *lti13Fixture) reply(id, exam string) (ltiapp.LTI13DeepLinkingResponse, error) {
	return lf.deepLinking.CreateResponse(context.Background(), id, exam, nil)
}

// verifiedReply checks the reply's JWT with the tool's published keys and
// returns its claims.
func (lf *lti13Fixture) verifiedReply(token string) map[string]json.RawMessage {
	lf.t.Helper()
	jwks, err := lf.toolKeys.JWKS(context.Background())
	if err != nil {
		lf.t.Fatal(err)
	}
	set, err := jose.ParseKeySet(jwks)
	if err != nil {
		lf.t.Fatal(err)
	}
	header, err := jose.ParseHeader(token)
	if err != nil {
		lf.t.Fatal(err)
	}
	key, ok := set.Key(header.KID)
	if !ok {
		lf.t.Fatalf("the reply's kid %q is not published: %s", header.KID, jwks)
	}
	payload, err := jose.Verify(token, key)
	if err != nil {
		lf.t.Fatal(err)
	}
	var claims map[string]json.RawMessage
	if err := json.Unmarshal(payload, &claims); err != nil {
		lf.t.Fatal(err)
	}
	return claims
}

func TestLTIDeepLinkingResponse(t *testing.T) {
	lf := newLTI13Fixture(t)
	id := lf.deepLinkLaunch("s1")

	// An exam id that is no UUID is refused, and the id stays usable.
	if _, err := lf.reply(id, "exam-42"); err != ltidomain.ErrLaunchExamConfigNotID {
		t.Fatalf("a bad exam id: %v", err)
	}
	// So does a failure on our side: no signing key yet.
	if _, err := lf.reply(id, examConfig); fault.KindOf(err) != fault.Unavailable {
		t.Fatalf("without a signing key: %v", err)
	}
	if err := lf.toolKeys.Rotate(context.Background()); err != nil {
		t.Fatal(err)
	}
	r, err := lf.reply(id, " "+examConfig+" ")
	if err != nil {
		t.Fatal(err)
	}
	if r.ReturnURL != platformIssuer+"/deep-link-return" {
		t.Fatalf("return URL %q", r.ReturnURL)
	}
	c := lf.verifiedReply(r.JWT)
	now := lf.clock.Now().Unix()
	for claim, want := range map[string]any{
		"iss": "client-1", "aud": platformIssuer, "iat": now, "exp": now + 300,
		"https://purl.imsglobal.org/spec/lti/claim/message_type":  "LtiDeepLinkingResponse",
		"https://purl.imsglobal.org/spec/lti/claim/version":       "1.3.0",
		"https://purl.imsglobal.org/spec/lti/claim/deployment_id": "dep-1",
		"https://purl.imsglobal.org/spec/lti-dl/claim/data":       deepLinkData,
		"https://purl.imsglobal.org/spec/lti-dl/claim/content_items": []any{map[string]any{
			"type": "ltiResourceLink", "title": "LiveProctor exam", "url": lti13LaunchURL,
			"custom": map[string]any{"exam_config_id": examConfig},
		}},
	} {
		if got, want := canonical(t, c[claim]), canonical(t, want); got != want {
			t.Errorf("%s = %s, want %s", claim, got, want)
		}
	}
	var nonce string
	if json.Unmarshal(c["nonce"], &nonce) != nil || len(nonce) < 32 {
		t.Errorf("nonce %s", c["nonce"])
	}

	// Once only.
	if _, err := lf.reply(id, examConfig); fault.KindOf(err) != fault.Unauthenticated {
		t.Fatalf("a second reply: %v", err)
	}
	if len(lf.guard.failed) != 0 {
		t.Fatalf("replies counted failures: %q", lf.guard.failed)
	}
}

// canonical is v as JSON with sorted members; v may be JSON text.
func canonical(t *testing.T, v any) string {
	t.Helper()
	if raw, ok := v.(json.RawMessage); ok {
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatal(err)
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var back any
	_ = json.Unmarshal(b, &back)
	b, _ = json.Marshal(back)
	return string(b)
}

func TestLTIDeepLinkingResponseRefusals(t *testing.T) {
	lf := newLTI13Fixture(t)
	if err := lf.toolKeys.Rotate(context.Background()); err != nil {
		t.Fatal(err)
	}
	for name, id := range map[string]string{"no id": "", "an unknown id": "bm8tc3VjaC1pZA"} {
		if _, err := lf.reply(id, examConfig); fault.KindOf(err) != fault.Unauthenticated {
			t.Errorf("%s: %v", name, err)
		}
	}
	expired := lf.deepLinkLaunch("s1")
	lf.clock.Add(ltiapp.LTI13DeepLinkTTL)
	if _, err := lf.reply(expired, examConfig); fault.KindOf(err) != fault.Unauthenticated {
		t.Errorf("an expired id: %v", err)
	}
	// A registration removed since the launch signs nothing.
	removed := lf.deepLinkLaunch("s2")
	if _, err := lf.regs.Delete(context.Background(), lf.self, "school", lf.reg.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := lf.reply(removed, examConfig); err != ltidomain.ErrLTI13Registration {
		t.Errorf("a removed registration: %v", err)
	}
}

// A request that carries the AGS claim gets a line item with its link:
// labelled as the link, out of the teacher's maximum (100 when none), its
// resourceId the exam; one whose accept_lineitem is false, or without the
// claim, gets none. A maximum not over 0 is refused and the id stays usable.
func TestLTIDeepLinkingResponseLineItem(t *testing.T) {
	lf := newLTI13Fixture(t)
	if err := lf.toolKeys.Rotate(context.Background()); err != nil {
		t.Fatal(err)
	}
	ags := map[string]any{"https://purl.imsglobal.org/spec/lti-ags/claim/endpoint": map[string]any{
		"scope": []string{"https://purl.imsglobal.org/spec/lti-ags/scope/lineitem"}, "lineitems": platformIssuer + "/lineitems?type_id=1",
	}}
	refused := map[string]any{"accept_lineitem": false}
	for k, v := range ags {
		refused[k] = v
	}
	given := 25.5
	for _, tc := range []struct {
		name    string
		claims  map[string]any
		maximum *float64
		want    any // the content item's lineItem; nil for none
	}{
		{"the default maximum", ags, nil, map[string]any{"label": "LiveProctor exam", "scoreMaximum": 100, "resourceId": examConfig}},
		{"the teacher's maximum", ags, &given, map[string]any{"label": "LiveProctor exam", "scoreMaximum": 25.5, "resourceId": examConfig}},
		{"accept_lineitem false", refused, &given, nil},
		{"no AGS claim", nil, &given, nil},
	} {
		id := lf.deepLinkLaunchWith("s-"+tc.name, tc.claims)
		for _, bad := range []float64{0, -1, math.NaN(), math.Inf(1)} {
			if _, err := lf.deepLinking.CreateResponse(context.Background(), id, examConfig, &bad); err != ltidomain.ErrScoreMaximum {
				t.Fatalf("%s: a maximum of %v: %v", tc.name, bad, err)
			}
		}
		r, err := lf.deepLinking.CreateResponse(context.Background(), id, examConfig, tc.maximum)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var items []map[string]any
		if err := json.Unmarshal(lf.verifiedReply(r.JWT)["https://purl.imsglobal.org/spec/lti-dl/claim/content_items"], &items); err != nil || len(items) != 1 {
			t.Fatalf("%s: content items %v, %v", tc.name, items, err)
		}
		got, ok := items[0]["lineItem"]
		switch {
		case tc.want == nil && ok:
			t.Errorf("%s: a line item %v", tc.name, got)
		case tc.want != nil && canonical(t, got) != canonical(t, tc.want):
			t.Errorf("%s: line item %s, want %s", tc.name, canonical(t, got), canonical(t, tc.want))
		}
	}
}
