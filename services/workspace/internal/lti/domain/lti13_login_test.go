package domain_test

import (
	"errors"
	"net/url"
	"strings"
	"testing"

	"github.com/liveproctor/workspaces/pkg/fault"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

const toolLaunchURL = "https://tool.example.com/lti/v1p3/launch"

// loginInitiation is what Canvas sends for a student opening the tool.
func loginInitiation() ltidomain.LTI13LoginInitiation {
	return ltidomain.LTI13LoginInitiation{
		Issuer:         "https://canvas.instructure.com",
		LoginHint:      "535fa085f22b4655f48cd5a36a9215f64c062838",
		TargetLinkURI:  toolLaunchURL,
		LTIMessageHint: "eyJ0eXAiOiJKV1QiLCJhbGciOiJIUzI1NiJ9.eyJ2ZXJpZmllciI6IjEifQ.x",
		ClientID:       "10000000000001",
		DeploymentID:   "1:8865aa05b4b79b64a91a86042e43af5ea8ae79eb",
	}
}

func TestCheckLTI13LoginInitiation(t *testing.T) {
	long := strings.Repeat("h", ltidomain.MaxLTI13LoginParam)
	cases := []struct {
		name   string
		change func(*ltidomain.LTI13LoginInitiation)
		want   string // in the refusal; "" for none
	}{
		{"everything sent", func(*ltidomain.LTI13LoginInitiation) {}, ""},
		{"only what is required", func(in *ltidomain.LTI13LoginInitiation) {
			in.LTIMessageHint, in.ClientID, in.DeploymentID = "", "", ""
		}, ""},
		{"hints of the largest size", func(in *ltidomain.LTI13LoginInitiation) { in.LoginHint, in.LTIMessageHint = long, long }, ""},
		{"no iss", func(in *ltidomain.LTI13LoginInitiation) { in.Issuer = "" }, "lacks iss"},
		{"no login_hint", func(in *ltidomain.LTI13LoginInitiation) { in.LoginHint = "" }, "lacks login_hint"},
		{"no target_link_uri", func(in *ltidomain.LTI13LoginInitiation) { in.TargetLinkURI = "" }, "lacks target_link_uri"},
		{"a login_hint too long", func(in *ltidomain.LTI13LoginInitiation) { in.LoginHint = long + "h" }, "login_hint is longer than 2048 bytes"},
		{"an lti_message_hint too long", func(in *ltidomain.LTI13LoginInitiation) { in.LTIMessageHint = long + "h" }, "lti_message_hint is longer"},
		{"an iss too long", func(in *ltidomain.LTI13LoginInitiation) { in.Issuer = "https://x/" + long }, "iss is longer"},
		{"a client_id over 255", func(in *ltidomain.LTI13LoginInitiation) { in.ClientID = strings.Repeat("1", 256) }, "client_id must be 1 to 255"},
		{"a deployment id with a control character", func(in *ltidomain.LTI13LoginInitiation) { in.DeploymentID = "1:\n" }, "lti_deployment_id must be"},
		{"another target link", func(in *ltidomain.LTI13LoginInitiation) { in.TargetLinkURI = toolLaunchURL + "/" }, "must be this tool's launch URL, " + toolLaunchURL},
		{"the login URL as the target link", func(in *ltidomain.LTI13LoginInitiation) {
			in.TargetLinkURI = "https://tool.example.com/lti/v1p3/login"
		}, "target_link_uri"},
		{"the parent as the storage frame", func(in *ltidomain.LTI13LoginInitiation) { in.StorageTarget = "_parent" }, ""},
		{"Canvas's storage frame", func(in *ltidomain.LTI13LoginInitiation) { in.StorageTarget = "post_message_forwarding" }, ""},
		{"a storage frame of the largest size", func(in *ltidomain.LTI13LoginInitiation) {
			in.StorageTarget = strings.Repeat("f", ltidomain.MaxLTI13StorageTarget)
		}, ""},
		{"a storage frame too long", func(in *ltidomain.LTI13LoginInitiation) {
			in.StorageTarget = strings.Repeat("f", ltidomain.MaxLTI13StorageTarget+1)
		}, "lti_storage_target must be a frame's name"},
		{"a storage frame with a space", func(in *ltidomain.LTI13LoginInitiation) { in.StorageTarget = "a frame" }, "lti_storage_target"},
		{"a storage frame with a quote", func(in *ltidomain.LTI13LoginInitiation) { in.StorageTarget = `x"` }, "lti_storage_target"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := loginInitiation()
			c.change(&in)
			err := ltidomain.CheckLTI13LoginInitiation(in, toolLaunchURL)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want == "":
			case fault.KindOf(err) != fault.Invalid || !strings.Contains(err.Error(), c.want):
				t.Fatalf("got %v, want an Invalid error with %q", err, c.want)
			}
		})
	}
}

// A wrong target_link_uri is told apart from the other refusals, which
// come first: the login names its registration, which is told of it.
func TestAnotherTargetLinkIsToldApart(t *testing.T) {
	in := loginInitiation()
	in.TargetLinkURI = toolLaunchURL + "/"
	if err := ltidomain.CheckLTI13LoginInitiation(in, toolLaunchURL); !errors.Is(err, ltidomain.ErrLTI13LoginTarget) {
		t.Fatalf("another target link: %v", err)
	}
	in.LoginHint = ""
	if err := ltidomain.CheckLTI13LoginInitiation(in, toolLaunchURL); errors.Is(err, ltidomain.ErrLTI13LoginTarget) {
		t.Fatalf("no login_hint and another target link: %v", err)
	}
}

// The request carries exactly the parameters of Security Framework 1.0
// §5.1.1.2 with LTI's prompt=none, keeps the endpoint's own query, and
// echoes lti_message_hint only when sent.
func TestLTI13AuthRequestURL(t *testing.T) {
	r := ltidomain.LTI13AuthRequest{
		ClientID: "10000000000001", RedirectURI: toolLaunchURL, LoginHint: "hint+1 &=", LTIMessageHint: "msg/hint?=",
		State: "c3RhdGU", Nonce: "bm9uY2U",
	}
	got, err := r.URL("https://sso.canvaslms.com/api/lti/authorize_redirect?tenant=district%2042&prompt=login#frag")
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(got)
	if err != nil {
		t.Fatal(err)
	}
	if u.Scheme != "https" || u.Host != "sso.canvaslms.com" || u.Path != "/api/lti/authorize_redirect" || u.Fragment != "" {
		t.Fatalf("endpoint: %s", got)
	}
	want := url.Values{
		"tenant": {"district 42"}, "scope": {"openid"}, "response_type": {"id_token"}, "response_mode": {"form_post"},
		"prompt": {"none"}, "client_id": {"10000000000001"}, "redirect_uri": {toolLaunchURL}, "login_hint": {"hint+1 &="},
		"lti_message_hint": {"msg/hint?="}, "state": {"c3RhdGU"}, "nonce": {"bm9uY2U"},
	}
	if q := u.Query(); q.Encode() != want.Encode() {
		t.Fatalf("query:\n got %s\nwant %s", q.Encode(), want.Encode())
	}

	r.LTIMessageHint = ""
	got, err = r.URL("https://moodle.example.edu/mod/lti/auth.php")
	if err != nil {
		t.Fatal(err)
	}
	if u, _ := url.Parse(got); u.Query().Has("lti_message_hint") || len(u.Query()) != 9 {
		t.Fatalf("without lti_message_hint: %s", got)
	}
	if _, err := r.URL("https://x.example/%zz"); err == nil {
		t.Fatal("a malformed endpoint made a URL")
	}
}

// The storage frame's origin is the authorization endpoint's, written as
// a browser writes event.origin: lower case, no default port, no path.
func TestPlatformOrigin(t *testing.T) {
	cases := map[string]string{
		"https://sso.canvaslms.com/api/lti/authorize_redirect": "https://sso.canvaslms.com",
		"https://LMS.Example.edu:443/auth?x=1":                 "https://lms.example.edu",
		"https://lms.example.edu:8443/auth":                    "https://lms.example.edu:8443",
		"http://127.0.0.1:80/auth":                             "http://127.0.0.1",
		"http://platform.test:9000/auth":                       "http://platform.test:9000",
		"https://[::1]:443/auth":                               "https://[::1]",
	}
	for in, want := range cases {
		if got, err := ltidomain.PlatformOrigin(in); err != nil || got != want {
			t.Errorf("PlatformOrigin(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "/auth", "https://", "::"} {
		if got, err := ltidomain.PlatformOrigin(bad); err == nil {
			t.Errorf("PlatformOrigin(%q) = %q, want an error", bad, got)
		}
	}
}
