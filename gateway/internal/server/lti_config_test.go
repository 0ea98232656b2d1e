package server_test

import (
	"context"
	"encoding/xml"
	"net/http"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
)

// ltiNames are the workspaces the fake knows, by id: their names.
var ltiNames = map[string]string{
	"w1":     "Springfield District",
	"quotes": `A <b> & "c" 'd' ]]>`,
}

func (f *fakeWorkspaces) GetLtiConfiguration(ctx context.Context, req *workspacev1.GetLtiConfigurationRequest) (*workspacev1.LtiConfiguration, error) {
	if err := f.answer(ctx); err != nil {
		return nil, err
	}
	name, ok := ltiNames[req.GetWorkspaceId()]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "workspace %q not found", req.GetWorkspaceId())
	}
	scheme := "https"
	if req.GetWorkspaceId() == "quotes" {
		scheme = "http"
	}
	return &workspacev1.LtiConfiguration{
		WorkspaceId: req.GetWorkspaceId(),
		Title:       "LiveProctor (" + name + ")",
		Description: "LiveProctor for " + name,
		LaunchUrl:   scheme + "://lti.example.com:8443/lti/v1/launch",
		Domain:      "lti.example.com",

		Lti13LoginUrl:  scheme + "://lti.example.com:8443/lti/v1p3/login",
		Lti13LaunchUrl: scheme + "://lti.example.com:8443/lti/v1p3/launch",
		Lti13JwksUrl:   scheme + "://lti.example.com:8443/lti/v1p3/jwks.json",
	}, nil
}

// cartridge is the configuration as a namespace-aware reader, such as an
// LMS's, sees it: each element in its IMS namespace.
type cartridge struct {
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
	Vendor struct {
		Code string `xml:"http://www.imsglobal.org/xsd/imslticp_v1p0 code"`
		Name string `xml:"http://www.imsglobal.org/xsd/imslticp_v1p0 name"`
	} `xml:"http://www.imsglobal.org/xsd/imsbasiclti_v1p0 vendor"`
}

type ltiProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:",chardata"`
}

func properties(ps []ltiProperty) map[string]string {
	m := map[string]string{}
	for _, p := range ps {
		m[p.Name] = p.Value
	}
	return m
}

func TestLTIConfigurationXML(t *testing.T) {
	e := newEnv(t, options{})
	for _, tc := range []struct {
		id, title, launch string
		secure            bool
	}{
		{"w1", "LiveProctor (Springfield District)", "https://lti.example.com:8443/lti/v1/launch", true},
		{"quotes", `LiveProctor (A <b> & "c" 'd' ]]>)`, "http://lti.example.com:8443/lti/v1/launch", false},
	} {
		resp, body := e.do(t, http.MethodGet, "/lti/v1/workspaces/"+tc.id+"/config.xml", nil, map[string]string{"X-Request-Id": "lti-1"})
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s", tc.id, resp.StatusCode, body)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/xml; charset=utf-8" {
			t.Errorf("%s: Content-Type %q", tc.id, ct)
		}
		if cc := resp.Header.Get("Cache-Control"); cc != "public, max-age=300" {
			t.Errorf("%s: Cache-Control %q", tc.id, cc)
		}
		if resp.Header.Get("X-Request-Id") != "lti-1" {
			t.Errorf("%s: X-Request-Id %q", tc.id, resp.Header.Get("X-Request-Id"))
		}
		if md, _ := e.workspaces.received(); len(md.Get("x-request-id")) != 1 || md.Get("x-request-id")[0] != "lti-1" || len(md.Get("authorization")) != 0 {
			t.Errorf("%s: the service received metadata %v", tc.id, md)
		}
		if !strings.HasPrefix(string(body), `<?xml version="1.0" encoding="UTF-8"?>`) {
			t.Errorf("%s: no XML declaration: %.60s", tc.id, body)
		}

		var c cartridge
		if err := xml.Unmarshal(body, &c); err != nil {
			t.Fatalf("%s: %v\n%s", tc.id, err, body)
		}
		if c.Title != tc.title || c.Description != "LiveProctor for "+ltiNames[tc.id] || c.LaunchURL != tc.launch {
			t.Errorf("%s: title %q, description %q, launch_url %q", tc.id, c.Title, c.Description, c.LaunchURL)
		}
		switch {
		case tc.secure && (c.SecureLaunchURL == nil || *c.SecureLaunchURL != tc.launch):
			t.Errorf("%s: secure_launch_url %v, want the https launch URL", tc.id, c.SecureLaunchURL)
		case !tc.secure && c.SecureLaunchURL != nil:
			t.Errorf("%s: secure_launch_url %q for an http launch URL", tc.id, *c.SecureLaunchURL)
		}
		if len(c.Extensions) != 1 || c.Extensions[0].Platform != "canvas.instructure.com" {
			t.Fatalf("%s: extensions %+v", tc.id, c.Extensions)
		}
		ext := c.Extensions[0]
		if p := properties(ext.Properties); p["privacy_level"] != "public" || p["domain"] != "lti.example.com" {
			t.Errorf("%s: Canvas properties %v", tc.id, p)
		}
		if len(ext.Options) != 1 || ext.Options[0].Name != "course_navigation" {
			t.Fatalf("%s: options %+v", tc.id, ext.Options)
		}
		if p := properties(ext.Options[0].Properties); p["enabled"] != "true" || p["url"] != tc.launch || p["text"] != tc.title {
			t.Errorf("%s: course_navigation %v", tc.id, p)
		}
		if c.Vendor.Code == "" || c.Vendor.Name == "" {
			t.Errorf("%s: vendor %+v", tc.id, c.Vendor)
		}
	}
	// The prefixes an LMS that does not resolve namespaces looks for.
	_, body := e.do(t, http.MethodGet, "/lti/v1/workspaces/w1/config.xml", nil, nil)
	for _, want := range []string{
		`<cartridge_basiclti_link xmlns="http://www.imsglobal.org/xsd/imslticc_v1p0" xmlns:blti="http://www.imsglobal.org/xsd/imsbasiclti_v1p0" xmlns:lticm="http://www.imsglobal.org/xsd/imslticm_v1p0" xmlns:lticp="http://www.imsglobal.org/xsd/imslticp_v1p0"`,
		`<blti:launch_url>https://lti.example.com:8443/lti/v1/launch</blti:launch_url>`,
		`<blti:extensions platform="canvas.instructure.com">`,
		`<lticm:property name="privacy_level">public</lticm:property>`,
		`<lticm:options name="course_navigation">`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("the XML lacks %s:\n%s", want, body)
		}
	}
	_, body = e.do(t, http.MethodGet, "/lti/v1/workspaces/quotes/config.xml", nil, nil)
	if strings.Contains(string(body), "<b>") || strings.Contains(string(body), "& ") {
		t.Errorf("the name is not escaped:\n%s", body)
	}
}

func TestLTIConfigurationHead(t *testing.T) {
	e := newEnv(t, options{})
	_, get := e.do(t, http.MethodGet, "/lti/v1/workspaces/w1/config.xml", nil, nil)
	resp, body := e.do(t, http.MethodHead, "/lti/v1/workspaces/w1/config.xml", nil, nil)
	if resp.StatusCode != http.StatusOK || len(body) != 0 || resp.ContentLength != int64(len(get)) ||
		resp.Header.Get("Content-Type") != "application/xml; charset=utf-8" {
		t.Errorf("HEAD: %d, Content-Length %d (GET's body %d), Content-Type %q, body %q",
			resp.StatusCode, resp.ContentLength, len(get), resp.Header.Get("Content-Type"), body)
	}
}

func TestLTIConfigurationErrors(t *testing.T) {
	e := newEnv(t, options{})
	resp, body := e.do(t, http.MethodGet, "/lti/v1/workspaces/unknown/config.xml", nil, nil)
	p := checkError(t, resp, body, 404, "NOT_FOUND")
	if !strings.Contains(p.GetMessage(), `workspace "unknown" not found`) {
		t.Errorf("message %q", p.GetMessage())
	}
	resp, body = e.do(t, http.MethodGet, "/lti/v1/workspaces/w1/config.xml?x=1", nil, nil)
	checkError(t, resp, body, 400, "INVALID_ARGUMENT")
	resp, body = e.do(t, http.MethodPost, "/lti/v1/workspaces/w1/config.xml", nil, nil)
	checkError(t, resp, body, 405, "UNIMPLEMENTED")
	resp, body = e.do(t, http.MethodGet, "/lti/v1/workspaces/%ff/config.xml", nil, nil)
	checkError(t, resp, body, 400, "INVALID_ARGUMENT")

	down := newEnv(t, options{workspaceDown: true})
	resp, body = down.do(t, http.MethodGet, "/lti/v1/workspaces/w1/config.xml", nil, nil)
	p = checkError(t, resp, body, 503, "UNAVAILABLE")
	if resp.Header.Get("Retry-After") == "" || strings.Contains(p.GetMessage(), "127.0.0.1") {
		t.Errorf("503: Retry-After %q, message %q", resp.Header.Get("Retry-After"), p.GetMessage())
	}
}
