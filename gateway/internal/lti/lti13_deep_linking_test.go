package lti

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"google.golang.org/grpc"

	"github.com/liveproctor/workspaces/pkg/fault"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/pkg/grpcfault"
)

// deepLinkReplies answers every reply with reply, or err, and keeps the
// last request.
type deepLinkReplies struct {
	reply *workspacev1.LtiDeepLinkingResponse
	err   error
	got   *workspacev1.CreateLtiDeepLinkingResponseRequest
}

func (d *deepLinkReplies) CreateLtiDeepLinkingResponse(_ context.Context, in *workspacev1.CreateLtiDeepLinkingResponseRequest,
	_ ...grpc.CallOption) (*workspacev1.LtiDeepLinkingResponse, error) {
	d.got = in
	return d.reply, d.err
}

func postDeepLink(d *deepLinkReplies, contentType, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, DeepLinkingPath, strings.NewReader(body))
	r.Header.Set("Content-Type", contentType)
	w := httptest.NewRecorder()
	DeepLinkingResponse(d, noMetadata13, 32<<10, quiet13())(w, r, nil)
	return w
}

// The reply is a page whose form posts the signed JWT, in the field JWT,
// to the platform's return URL: its script submits it, and the policy
// lets that script run and the form post to that origin only.
func TestDeepLinkingResponsePostsTheJWT(t *testing.T) {
	d := &deepLinkReplies{reply: &workspacev1.LtiDeepLinkingResponse{
		ReturnUrl: "https://lms.example:8443/courses/7/deep_linking_response?modal=true&x=1", Jwt: "eyJh.eyJi.c2ln",
	}}
	w := postDeepLink(d, formType13, "deep_link_id=dl-1&exam_config_id="+exam13+"&other=x")
	body := w.Body.String()
	if w.Code != http.StatusOK || d.got.GetDeepLinkId() != "dl-1" || d.got.GetExamConfigId() != exam13 || d.got.ScoreMaximum != nil {
		t.Fatalf("%d, sent %v:\n%s", w.Code, d.got, body)
	}
	for _, want := range []string{
		`<form id="deep-link-return" method="post" action="https://lms.example:8443/courses/7/deep_linking_response?modal=true&amp;x=1">`,
		`<input type="hidden" name="JWT" value="eyJh.eyJi.c2ln">`,
		`<button type="submit">`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the page lacks %s:\n%s", want, body)
		}
	}
	script := regexp.MustCompile(`(?s)<script>(.*?)</script>`).FindStringSubmatch(body)
	if script == nil {
		t.Fatalf("no script:\n%s", body)
	}
	sum := sha256.Sum256([]byte(script[1]))
	csp := w.Header().Get("Content-Security-Policy")
	if !strings.Contains(csp, "script-src 'sha256-"+base64.StdEncoding.EncodeToString(sum[:])+"';") ||
		!strings.Contains(csp, "form-action https://lms.example:8443;") || !strings.Contains(csp, "default-src 'none'") ||
		w.Header().Get("Cache-Control") != "no-store" {
		t.Fatalf("headers %v", w.Header())
	}
}

// The teacher's score maximum goes to the workspace service as a number;
// left empty, it is not sent, and the service's default applies.
func TestDeepLinkingResponseScoreMaximum(t *testing.T) {
	for field, want := range map[string]any{"": nil, "+25.5+": 25.5, "40": 40.0, "-1": -1.0} {
		d := &deepLinkReplies{reply: &workspacev1.LtiDeepLinkingResponse{ReturnUrl: "https://lms.example/return", Jwt: "a.b.c"}}
		w := postDeepLink(d, formType13, "deep_link_id=a&exam_config_id="+exam13+"&score_maximum="+field)
		var got any
		if d.got.ScoreMaximum != nil {
			got = *d.got.ScoreMaximum
		}
		if w.Code != http.StatusOK || got != want {
			t.Errorf("score_maximum %q: %d, sent %v, want %v", field, w.Code, got, want)
		}
	}
}

func TestDeepLinkingResponseRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, contentType, body string
		err                     error
		returnURL               string
		status                  int
		words                   string
	}{
		{"JSON", "application/json", `{}`, nil, "", http.StatusUnsupportedMediaType, "form"},
		{"bad escapes", formType13, "deep_link_id=%zz", nil, "", http.StatusBadRequest, "malformed"},
		{"two ids", formType13, "deep_link_id=a&deep_link_id=b", nil, "", http.StatusBadRequest, "two different values of deep_link_id"},
		{"a maximum that is no number", formType13, "deep_link_id=a&exam_config_id=" + exam13 + "&score_maximum=ten", nil, "", http.StatusBadRequest, "not a number"},
		{"a bad exam", formType13, "deep_link_id=a&exam_config_id=x",
			fault.New(fault.Invalid, "This link's exam_config_id is not an exam configuration id"), "", http.StatusBadRequest, "not an exam configuration id"},
		{"a used id", formType13, "deep_link_id=a&exam_config_id=" + exam13,
			fault.New(fault.Unauthenticated, "this exam choice is unknown, already sent or expired"), "", http.StatusUnauthorized, "already sent"},
		{"store down", formType13, "deep_link_id=a&exam_config_id=" + exam13,
			fault.New(fault.Unavailable, "the store is down"), "", http.StatusServiceUnavailable, "unavailable for a moment"},
		{"a return URL no policy can name", formType13, "deep_link_id=a&exam_config_id=" + exam13,
			nil, "https://lms.example;script-src*/x", http.StatusBadRequest, "cannot be posted to"},
	} {
		d := &deepLinkReplies{reply: &workspacev1.LtiDeepLinkingResponse{ReturnUrl: tc.returnURL, Jwt: "a.b.c"}}
		if tc.err != nil {
			d.err = grpcfault.Status(tc.err)
		}
		w := postDeepLink(d, tc.contentType, tc.body)
		if w.Code != tc.status || !strings.Contains(w.Body.String(), tc.words) || strings.Contains(w.Body.String(), "a.b.c") {
			t.Errorf("%s: %d:\n%s", tc.name, w.Code, w.Body)
		}
	}
}

func TestFormOrigin(t *testing.T) {
	for in, want := range map[string]string{
		"https://canvas.example/api/lti/deep_linking_response?x=1": "https://canvas.example",
		"http://127.0.0.1:39031/deep-link-return":                  "http://127.0.0.1:39031",
		"https://lms.example;script-src*/x":                        "",
		"javascript:alert(1)":                                      "",
		"https://[::1]:8443/x":                                     "",
	} {
		got, ok := formOrigin(in)
		if got != want && !(want == "" && !ok) {
			t.Errorf("formOrigin(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
}
