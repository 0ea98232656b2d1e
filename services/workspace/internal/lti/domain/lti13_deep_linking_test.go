package domain_test

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// claimsJSON is the claims as they travel in the JWT, read back.
func claimsJSON(t *testing.T, c map[string]any) map[string]any {
	t.Helper()
	raw, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	return back
}

func TestDeepLinkingReplyClaims(t *testing.T) {
	now := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	reply := ltidomain.DeepLinkingReply{
		ClientID: "10000000000001", PlatformIssuer: "https://canvas.instructure.com", DeploymentID: "1:abc",
		Data: "opaque", LaunchURL: launchURL, ExamConfigID: "0f8fad5b-d9cb-469f-a165-70867728950e",
		Nonce: "n-1", Now: now,
	}
	got, _ := json.Marshal(claimsJSON(t, reply.Claims()))
	want := `{"aud":"https://canvas.instructure.com","exp":1795770300,"https://purl.imsglobal.org/spec/lti-dl/claim/content_items":[` +
		`{"custom":{"exam_config_id":"0f8fad5b-d9cb-469f-a165-70867728950e"},"title":"LiveProctor exam","type":"ltiResourceLink",` +
		`"url":"https://tool.example.com/lti/v1p3/launch"}],"https://purl.imsglobal.org/spec/lti-dl/claim/data":"opaque",` +
		`"https://purl.imsglobal.org/spec/lti/claim/deployment_id":"1:abc",` +
		`"https://purl.imsglobal.org/spec/lti/claim/message_type":"LtiDeepLinkingResponse",` +
		`"https://purl.imsglobal.org/spec/lti/claim/version":"1.3.0","iat":1795770000,"iss":"10000000000001","nonce":"n-1"}`
	if string(got) != want {
		t.Fatalf("claims\n got %s\nwant %s", got, want)
	}
}

// The request's data comes back exactly, whatever it holds; a request
// without data gets a reply without the claim.
func TestDeepLinkingReplyEchoesData(t *testing.T) {
	const claim = "https://purl.imsglobal.org/spec/lti-dl/claim/data"
	for _, data := range []string{
		"csrf-7f3a",
		`{"course":"çà 数学 🧪","n":1}`,
		"  spaces, <tags> & \"quotes\"\n\ttabs \\ backslash \u2028 ",
		"eyJhbGciOiJIUzI1NiJ9.e30.x",
	} {
		c := claimsJSON(t, ltidomain.DeepLinkingReply{Data: data, Now: time.Unix(0, 0)}.Claims())
		if got, ok := c[claim].(string); !ok || got != data {
			t.Errorf("data %q came back as %#v", data, c[claim])
		}
	}
	c := claimsJSON(t, ltidomain.DeepLinkingReply{Now: time.Unix(0, 0)}.Claims())
	if _, ok := c[claim]; ok {
		t.Errorf("a request without data: the reply has %s", claim)
	}
}

// With LineItem the link asks for its gradebook column, named by the exam.
func TestDeepLinkingReplyLineItem(t *testing.T) {
	reply := ltidomain.DeepLinkingReply{ExamConfigID: "0f8fad5b-d9cb-469f-a165-70867728950e", LineItem: true, ScoreMaximum: 12.5, Now: time.Unix(0, 0)}
	items, _ := claimsJSON(t, reply.Claims())["https://purl.imsglobal.org/spec/lti-dl/claim/content_items"].([]any)
	got, _ := json.Marshal(items[0].(map[string]any)["lineItem"])
	if want := `{"label":"LiveProctor exam","resourceId":"0f8fad5b-d9cb-469f-a165-70867728950e","scoreMaximum":12.5}`; string(got) != want {
		t.Fatalf("lineItem %s, want %s", got, want)
	}
}

func TestCheckScoreMaximum(t *testing.T) {
	v := 7.5
	if got, err := ltidomain.CheckScoreMaximum(nil); err != nil || got != ltidomain.DefaultScoreMaximum {
		t.Errorf("none: %v, %v", got, err)
	}
	if got, err := ltidomain.CheckScoreMaximum(&v); err != nil || got != v {
		t.Errorf("7.5: %v, %v", got, err)
	}
	for _, bad := range []float64{0, -3, math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := ltidomain.CheckScoreMaximum(&bad); err != ltidomain.ErrScoreMaximum || fault.KindOf(err) != fault.Invalid {
			t.Errorf("%v: %v", bad, err)
		}
	}
}

func TestCheckPickedExamConfig(t *testing.T) {
	for in, want := range map[string]string{
		"0f8fad5b-d9cb-469f-a165-70867728950e":    "0f8fad5b-d9cb-469f-a165-70867728950e",
		" 0F8FAD5B-D9CB-469F-A165-70867728950E\n": "0F8FAD5B-D9CB-469F-A165-70867728950E",
	} {
		if got, err := ltidomain.CheckPickedExamConfig(in); err != nil || got != want {
			t.Errorf("CheckPickedExamConfig(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for in, want := range map[string]error{
		"":            ltidomain.ErrLaunchNoExamConfig,
		"  ":          ltidomain.ErrLaunchNoExamConfig,
		"exam-42":     ltidomain.ErrLaunchExamConfigNotID,
		"0f8fad5b-d9": ltidomain.ErrLaunchExamConfigNotID,
	} {
		if _, err := ltidomain.CheckPickedExamConfig(in); err != want || fault.KindOf(err) != fault.Invalid {
			t.Errorf("CheckPickedExamConfig(%q) = %v; want %v", in, err, want)
		}
	}
}
