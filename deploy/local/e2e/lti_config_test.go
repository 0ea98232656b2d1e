package e2e

import (
	"encoding/xml"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// ltiCartridge is the configuration XML as a namespace-aware LMS reads it.
type ltiCartridge struct {
	XMLName         xml.Name `xml:"http://www.imsglobal.org/xsd/imslticc_v1p0 cartridge_basiclti_link"`
	Title           string   `xml:"http://www.imsglobal.org/xsd/imsbasiclti_v1p0 title"`
	Description     string   `xml:"http://www.imsglobal.org/xsd/imsbasiclti_v1p0 description"`
	LaunchURL       string   `xml:"http://www.imsglobal.org/xsd/imsbasiclti_v1p0 launch_url"`
	SecureLaunchURL *string  `xml:"http://www.imsglobal.org/xsd/imsbasiclti_v1p0 secure_launch_url"`
	Extensions      []struct {
		Platform   string        `xml:"platform,attr"`
		Properties []ltiProperty `xml:"http://www.imsglobal.org/xsd/imslticm_v1p0 property"`
		Options    []struct {
			Name       string        `xml:"name,attr"`
			Properties []ltiProperty `xml:"http://www.imsglobal.org/xsd/imslticm_v1p0 property"`
		} `xml:"http://www.imsglobal.org/xsd/imslticm_v1p0 options"`
	} `xml:"http://www.imsglobal.org/xsd/imsbasiclti_v1p0 extensions"`
}

type ltiProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:",chardata"`
}

func ltiProperties(ps []ltiProperty) map[string]string {
	m := map[string]string{}
	for _, p := range ps {
		m[p.Name] = p.Value
	}
	return m
}

// onGateway is the path of a URL the stack hands out. The workspace service
// builds them on PUBLIC_BASE_URL, which the test stack leaves at the local
// run's address; its gateway listens on a port of its own.
func onGateway(t *testing.T, rawURL string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil || !u.IsAbs() {
		t.Fatalf("not an absolute URL: %q", rawURL)
	}
	return u.EscapedPath()
}

// The configuration XML parses, and its launch_url is the create result's
// launchUrl; an LMS reads it without credentials.
func TestLTIConfigurationXML(t *testing.T) {
	root := asRoot(t)
	id := unique(t, "lti")
	name := `Springfield <"K&12"> 'Schools'`
	res := root.create(id, map[string]any{"name": name})
	if !strings.HasSuffix(res.AppKeys.LTI.ConfigurationURL, "/lti/v1/workspaces/"+id+"/config.xml") {
		t.Fatalf("configurationUrl %q", res.AppKeys.LTI.ConfigurationURL)
	}
	path := onGateway(t, res.AppKeys.LTI.ConfigurationURL)

	got := anonymous(t).get(path).wantStatus(http.StatusOK)
	if ct := got.header.Get("Content-Type"); ct != "application/xml; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	if cc := got.header.Get("Cache-Control"); !strings.HasPrefix(cc, "public") || !strings.Contains(cc, "max-age=") {
		t.Errorf("Cache-Control %q", cc)
	}
	var c ltiCartridge
	if err := xml.Unmarshal(got.body, &c); err != nil {
		t.Fatalf("the configuration is not XML: %v\n%s", err, got.body)
	}
	if c.LaunchURL == "" || c.LaunchURL != res.AppKeys.LTI.LaunchURL {
		t.Errorf("launch_url %q, the create result's launchUrl %q", c.LaunchURL, res.AppKeys.LTI.LaunchURL)
	}
	if !strings.Contains(c.Title, name) || !strings.Contains(c.Description, name) {
		t.Errorf("title %q, description %q: want the workspace's name", c.Title, c.Description)
	}
	launch, _ := url.Parse(res.AppKeys.LTI.LaunchURL)
	if (launch.Scheme == "https") != (c.SecureLaunchURL != nil) {
		t.Errorf("secure_launch_url %v for launch URL %s", c.SecureLaunchURL, launch)
	}
	if len(c.Extensions) != 1 || c.Extensions[0].Platform != "canvas.instructure.com" {
		t.Fatalf("extensions %+v", c.Extensions)
	}
	ext := c.Extensions[0]
	if p := ltiProperties(ext.Properties); p["privacy_level"] != "public" || p["domain"] != launch.Hostname() {
		t.Errorf("Canvas properties %v, want privacy_level public and domain %s", p, launch.Hostname())
	}
	if len(ext.Options) != 1 || ext.Options[0].Name != "course_navigation" {
		t.Fatalf("Canvas placements %+v", ext.Options)
	}
	if p := ltiProperties(ext.Options[0].Properties); p["enabled"] != "true" || p["url"] != res.AppKeys.LTI.LaunchURL || p["text"] != c.Title {
		t.Errorf("course_navigation %v", p)
	}

	// Credentials are not looked at: not even wrong ones are refused.
	as(t, rootKey, "wrong").get(path).wantStatus(http.StatusOK)
	head := anonymous(t).do(http.MethodHead, path, nil).wantStatus(http.StatusOK)
	if len(head.body) != 0 || head.header.Get("Content-Type") != "application/xml; charset=utf-8" {
		t.Errorf("HEAD: Content-Type %q, body %q", head.header.Get("Content-Type"), head.body)
	}
}

// An unknown or deleted workspace has no configuration: 404 in the error
// shape, the same as for an id that cannot exist.
func TestLTIConfigurationOfMissingWorkspaces(t *testing.T) {
	root := asRoot(t)
	id := unique(t, "gone")
	res := root.create(id, nil)
	path := onGateway(t, res.AppKeys.LTI.ConfigurationURL)
	root.delete("/api/workspace/" + id).ok(nil)

	for _, p := range []string{path, "/lti/v1/workspaces/" + unique(t, "unknown") + "/config.xml", "/lti/v1/workspaces/no%20such%3Aid/config.xml"} {
		e := anonymous(t).get(p).wantError(http.StatusNotFound, "NOT_FOUND", "")
		if !strings.Contains(e.GetError().GetMessage(), "not found") {
			t.Errorf("%s: message %q", p, e.GetError().GetMessage())
		}
	}
	anonymous(t).do(http.MethodHead, path, nil).wantStatus(http.StatusNotFound)

	root.post("/api/workspace/"+id+":undelete", nil).ok(nil)
	anonymous(t).get(path).wantStatus(http.StatusOK)
}
