package domain_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/outbound"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

const moodleConfigURL = "https://moodle.school.example/mod/lti/openid-configuration.php"

// moodleConfiguration is a platform configuration as Moodle publishes it,
// patched by patch (a member set to nil is removed).
func moodleConfiguration(patch map[string]any) []byte {
	doc := map[string]any{
		"issuer":                                "https://moodle.school.example",
		"authorization_endpoint":                "https://moodle.school.example/mod/lti/auth.php",
		"token_endpoint":                        "https://moodle.school.example/mod/lti/token.php",
		"jwks_uri":                              "https://moodle.school.example/mod/lti/certs.php",
		"registration_endpoint":                 "https://moodle.school.example/mod/lti/openid-registration.php",
		"scopes_supported":                      []string{"openid"},
		"response_types_supported":              []string{"id_token"},
		"id_token_signing_alg_values_supported": []string{"RS256"},
		"https://purl.imsglobal.org/spec/lti-platform-configuration": map[string]any{
			"product_family_code": "moodle",
			"version":             "4.5",
			"messages_supported":  []map[string]string{{"type": "LtiResourceLinkRequest"}, {"type": "LtiDeepLinkingRequest"}},
		},
	}
	for k, v := range patch {
		if v == nil {
			delete(doc, k)
		} else {
			doc[k] = v
		}
	}
	b, _ := json.Marshal(doc)
	return b
}

func TestReadPlatformConfiguration(t *testing.T) {
	cfg, err := ltidomain.ReadPlatformConfiguration(moodleConfiguration(nil), moodleConfigURL, outbound.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	want := ltidomain.PlatformConfiguration{
		Issuer:                "https://moodle.school.example",
		AuthorizationEndpoint: "https://moodle.school.example/mod/lti/auth.php",
		TokenEndpoint:         "https://moodle.school.example/mod/lti/token.php",
		JWKSURI:               "https://moodle.school.example/mod/lti/certs.php",
		RegistrationEndpoint:  "https://moodle.school.example/mod/lti/openid-registration.php",
		Product:               "moodle",
		DeepLinking:           true,
	}
	if cfg != want {
		t.Fatalf("got %+v\nwant %+v", cfg, want)
	}
	reg := cfg.Registration(ltidomain.RegisteredClient{ClientID: "aBc123", DeploymentID: "7"})
	if reg.Issuer != want.Issuer || reg.ClientID != "aBc123" || len(reg.DeploymentIDs) != 1 || reg.DeploymentIDs[0] != "7" ||
		reg.AuthLoginURL != want.AuthorizationEndpoint || reg.JWKSURL != want.JWKSURI || reg.AuthTokenURL == nil || *reg.AuthTokenURL != want.TokenEndpoint {
		t.Fatalf("registration %+v", reg)
	}
	if err := ltidomain.CheckNewRegistration(reg, outbound.Policy{}); err != nil {
		t.Fatalf("the registration breaks a rule: %v", err)
	}
	if none := cfg.Registration(ltidomain.RegisteredClient{ClientID: "x"}); none.DeploymentIDs == nil || len(none.DeploymentIDs) != 0 {
		t.Fatalf("without a deployment: %+v, want an empty list", none.DeploymentIDs)
	}
}

func TestReadPlatformConfigurationRefusals(t *testing.T) {
	tests := []struct {
		name      string
		patch     map[string]any
		configURL string
		says      string
	}{
		{"issuer on another host", map[string]any{"issuer": "https://evil.example"}, "", "is not on the host"},
		{"issuer on another port", map[string]any{"issuer": "https://moodle.school.example:8443"}, "", "is not on the host"},
		{"issuer over http", map[string]any{"issuer": "http://moodle.school.example"}, "", "its issuer must be a public https URL"},
		{"no issuer", map[string]any{"issuer": nil}, "", "its issuer is required"},
		{"private jwks", map[string]any{"jwks_uri": "https://10.0.0.7/certs"}, "", "its jwks_uri must be a public https URL"},
		{"metadata token endpoint", map[string]any{"token_endpoint": "https://169.254.169.254/token"}, "", "its token_endpoint must be a public https URL"},
		{"no registration endpoint", map[string]any{"registration_endpoint": nil}, "", "its registration_endpoint is required"},
		{"no RS256", map[string]any{"id_token_signing_alg_values_supported": []string{"ES256"}}, "", "RS256"},
		{"no algorithms", map[string]any{"id_token_signing_alg_values_supported": nil}, "", "RS256"},
		{"no openid scope", map[string]any{"scopes_supported": []string{"profile"}}, "", "openid"},
		{"no id_token", map[string]any{"response_types_supported": []string{"code"}}, "", "id_token"},
		{"no LTI member", map[string]any{"https://purl.imsglobal.org/spec/lti-platform-configuration": nil}, "", "does not say it speaks LTI"},
		{"no resource links", map[string]any{"https://purl.imsglobal.org/spec/lti-platform-configuration": map[string]any{
			"messages_supported": []map[string]string{{"type": "LtiDeepLinkingRequest"}}}}, "", "LtiResourceLinkRequest"},
		{"not an object", map[string]any{"issuer": 7}, "", "not a JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			configURL := tt.configURL
			if configURL == "" {
				configURL = moodleConfigURL
			}
			_, err := ltidomain.ReadPlatformConfiguration(moodleConfiguration(tt.patch), configURL, outbound.Policy{})
			e, ok := fault.As(err)
			if !ok || e.Kind != fault.Invalid || !strings.Contains(e.Message, tt.says) ||
				!strings.HasPrefix(e.Message, "The platform's OpenID configuration cannot be used to register the tool: ") {
				t.Fatalf("err = %v, want Invalid saying %q", err, tt.says)
			}
		})
	}
}

func TestReadRegisteredClient(t *testing.T) {
	got, err := ltidomain.ReadRegisteredClient([]byte(`{"client_id":"10000000000042","https://purl.imsglobal.org/spec/lti-tool-configuration":{"deployment_id":"12:ab"}}`))
	if err != nil || got != (ltidomain.RegisteredClient{ClientID: "10000000000042", DeploymentID: "12:ab"}) {
		t.Fatalf("got %+v, %v", got, err)
	}
	got, err = ltidomain.ReadRegisteredClient([]byte(`{"client_id":"c"}`))
	if err != nil || got != (ltidomain.RegisteredClient{ClientID: "c"}) {
		t.Fatalf("without a deployment: %+v, %v", got, err)
	}
	for _, body := range []string{
		`[]`, `{}`, `{"client_id":""}`, `{"client_id":7}`, `{"client_id":"` + strings.Repeat("x", 256) + `"}`,
		`{"client_id":"c\n"}`, `{"client_id":"c","https://purl.imsglobal.org/spec/lti-tool-configuration":{"deployment_id":"` + strings.Repeat("d", 300) + `"}}`,
	} {
		if _, err := ltidomain.ReadRegisteredClient([]byte(body)); fault.KindOf(err) != fault.BadGateway {
			t.Errorf("%s: err = %v, want BadGateway", body, err)
		}
	}
}

// The tool's client metadata has what LTI-DR 1.0 §3.5.2 asks of a tool.
func TestToolClientJSON(t *testing.T) {
	c := ltidomain.ToolClient{
		Name: "LiveProctor exam", LoginURL: "https://tool.example/lti/v1p3/login", LaunchURL: "https://tool.example/lti/v1p3/launch",
		JWKSURL: "https://tool.example/lti/v1p3/jwks.json", DeepLinking: true,
	}
	var got struct {
		ApplicationType  string   `json:"application_type"`
		ResponseTypes    []string `json:"response_types"`
		GrantTypes       []string `json:"grant_types"`
		InitiateLoginURI string   `json:"initiate_login_uri"`
		RedirectURIs     []string `json:"redirect_uris"`
		JWKSURI          string   `json:"jwks_uri"`
		AuthMethod       string   `json:"token_endpoint_auth_method"`
		LTI              struct {
			Domain        string `json:"domain"`
			TargetLinkURI string `json:"target_link_uri"`
			Messages      []struct {
				Type string `json:"type"`
			} `json:"messages"`
		} `json:"https://purl.imsglobal.org/spec/lti-tool-configuration"`
	}
	if err := json.Unmarshal(c.JSON(), &got); err != nil {
		t.Fatal(err)
	}
	if got.ApplicationType != "web" || strings.Join(got.ResponseTypes, ",") != "id_token" || strings.Join(got.GrantTypes, ",") != "implicit,client_credentials" ||
		got.InitiateLoginURI != c.LoginURL || len(got.RedirectURIs) != 1 || got.RedirectURIs[0] != c.LaunchURL || got.JWKSURI != c.JWKSURL ||
		got.AuthMethod != "private_key_jwt" || got.LTI.Domain != "tool.example" || got.LTI.TargetLinkURI != c.LaunchURL ||
		len(got.LTI.Messages) != 2 || got.LTI.Messages[0].Type != "LtiResourceLinkRequest" || got.LTI.Messages[1].Type != "LtiDeepLinkingRequest" {
		t.Fatalf("%s", c.JSON())
	}
	c.DeepLinking = false
	if strings.Contains(string(c.JSON()), "LtiDeepLinkingRequest") {
		t.Fatal("a platform without deep linking is offered it")
	}
}

// FuzzReadPlatformConfiguration: whatever a platform answers, the reading
// ends with a configuration whose issuer is on the configuration URL's host
// and whose endpoints follow the rule, or with an Invalid refusal.
func FuzzReadPlatformConfiguration(f *testing.F) {
	f.Add(moodleConfiguration(nil), moodleConfigURL)
	f.Add(moodleConfiguration(map[string]any{"issuer": "https://MOODLE.school.example:443"}), moodleConfigURL)
	f.Add([]byte(`{"issuer":"https://a.example"}`), "https://a.example/x")
	f.Add([]byte(`null`), "https://a.example/")
	f.Fuzz(func(t *testing.T, body []byte, configURL string) {
		cfg, err := ltidomain.ReadPlatformConfiguration(body, configURL, outbound.Policy{})
		if err != nil {
			if fault.KindOf(err) != fault.Invalid {
				t.Fatalf("err = %v, want Invalid", err)
			}
			return
		}
		if err := ltidomain.CheckNewRegistration(cfg.Registration(ltidomain.RegisteredClient{ClientID: "c"}), outbound.Policy{}); err != nil {
			t.Fatalf("an accepted configuration makes a registration that breaks a rule: %v\n%s", err, body)
		}
	})
}
