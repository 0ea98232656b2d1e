package server_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/grpcfault"
)

const examID = "0f8fad5b-d9cb-469f-a165-70867728950e"

func form(body string) (string, *strings.Reader, map[string]string) {
	return "/lti/v1/launch", strings.NewReader(body), map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
}

// A launch goes to the auth service with every parameter, the query's then
// the body's, duplicates kept and '+' decoded; the page opens the component
// with the token in the page, never cached, and any LMS may frame it.
func TestLTILaunchOpensTheComponent(t *testing.T) {
	e := newEnv(t, options{})
	path, body, header := form("oauth_consumer_key=k&a=1&a=2&text=two+words%21&custom_exam_config_id=" + examID)
	resp, page := e.do(t, http.MethodPost, path+"?q=x+y", body, header)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, page)
	}
	for name, want := range map[string]string{
		"Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store", "Referrer-Policy": "no-referrer",
	} {
		if got := resp.Header.Get(name); got != want {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors *") || !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("Content-Security-Policy %q", csp)
	}
	if resp.Header.Get("X-Frame-Options") != "" {
		t.Error("X-Frame-Options would keep the LMS from framing the page")
	}
	for _, want := range []string{`data-auth="bGF1bmNoZWQ="`, `data-exam-config-id="` + examID + `"`, `src="/sdk/v1/sdk.js"`, `src="/sdk/v1/launch.js"`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("page lacks %s:\n%s", want, page)
		}
	}
	req, md := e.auth.lastLaunch()
	var got []string
	for _, p := range req.GetParameters() {
		got = append(got, p.GetName()+"="+p.GetValue())
	}
	want := []string{"q=x y", "oauth_consumer_key=k", "a=1", "a=2", "text=two words!", "custom_exam_config_id=" + examID}
	if strings.Join(got, "&") != strings.Join(want, "&") || req.GetMethod() != "POST" {
		t.Fatalf("launch %s %v, want POST %v", req.GetMethod(), got, want)
	}
	if xff := md.Get("x-forwarded-for"); len(xff) != 1 || xff[0] != "127.0.0.1" {
		t.Errorf("x-forwarded-for %v", xff)
	}
	if id := md.Get("x-request-id"); len(id) != 1 || id[0] != resp.Header.Get("X-Request-Id") {
		t.Errorf("request id %v, answered %q", id, resp.Header.Get("X-Request-Id"))
	}
}

// A refused launch is a short page with the reason and the matching status;
// the exam configuration is the workspace service's rule, whose reason the
// page shows as sent.
func TestLTILaunchRefusals(t *testing.T) {
	e := newEnv(t, options{})
	noExam := fault.New(fault.Invalid,
		"This link opens no exam: in the LMS, add the custom parameter exam_config_id=<the exam configuration's id> to the LiveProctor tool or link.")
	notExam := fault.New(fault.Invalid,
		"This link's exam_config_id is not an exam configuration id (a UUID such as 0f8fad5b-d9cb-469f-a165-70867728950e): correct the custom parameter in the LMS.")
	throttled := fault.New(fault.Throttled, "too many failed authentications from your address")
	throttled.RetryAfter = 7 * time.Second
	tests := []struct {
		name      string
		body      string
		header    map[string]string
		answer    error
		status    int
		reason    string
		reachAuth bool
	}{
		{name: "no exam configuration", body: "oauth_consumer_key=k", reachAuth: true, answer: grpcfault.Status(noExam), status: 400, reason: "exam_config_id"},
		{
			name: "malformed exam configuration", body: "custom_exam_config_id=exam-1", reachAuth: true, answer: grpcfault.Status(notExam),
			status: 400, reason: "not an exam configuration id",
		},
		{name: "not a form", body: "{}", header: map[string]string{"Content-Type": "application/json"}, status: 415, reason: "form post"},
		{name: "bad escape", body: "a=%zz", status: 400, reason: "percent-encoded"},
		{
			name: "bad signature", body: "custom_exam_config_id=" + examID, reachAuth: true, status: 401,
			answer: grpcfault.Status(fault.New(fault.Unauthenticated, "the launch's signature does not match: check the shared secret <pasted> in the LMS")),
			reason: "the launch&#39;s signature does not match: check the shared secret &lt;pasted&gt; in the LMS",
		},
		{name: "throttled", body: "custom_exam_config_id=" + examID, reachAuth: true, answer: grpcfault.Status(throttled), status: 429, reason: "too many failed"},
		{
			name: "unavailable", body: "custom_exam_config_id=" + examID, reachAuth: true, status: 503, reason: "launch again in a minute",
			answer: grpcfault.Status(fault.New(fault.Unavailable, "redis said no at 10.0.0.7:6379")),
		},
		{name: "internal", body: "custom_exam_config_id=" + examID, reachAuth: true, answer: status.Error(codes.Internal, "panic at 10.0.0.7"), status: 500, reason: "an error on our side"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e.auth.mu.Lock()
			e.auth.launchErr = tt.answer
			e.auth.mu.Unlock()
			path, body, header := form(tt.body)
			if tt.header != nil {
				header = tt.header
			}
			resp, page := e.do(t, http.MethodPost, path, body, header)
			if resp.StatusCode != tt.status || !strings.Contains(string(page), tt.reason) {
				t.Fatalf("status %d, want %d with %q:\n%s", resp.StatusCode, tt.status, tt.reason, page)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" || resp.Header.Get("Cache-Control") != "no-store" {
				t.Errorf("headers %v", resp.Header)
			}
			if strings.Contains(string(page), "10.0.0.7") {
				t.Errorf("the page names an address:\n%s", page)
			}
			if req, _ := e.auth.lastLaunch(); (req != nil) != tt.reachAuth {
				t.Errorf("reached the auth service: %v, want %v", req != nil, tt.reachAuth)
			}
			if tt.status == 429 && resp.Header.Get("Retry-After") != "7" {
				t.Errorf("Retry-After %q", resp.Header.Get("Retry-After"))
			}
		})
	}
}
