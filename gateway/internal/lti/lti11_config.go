package lti

import (
	"bytes"
	"context"
	"encoding/xml"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/liveproctor/workspaces/gateway/internal/httperr"
	"github.com/liveproctor/workspaces/gateway/internal/reqstate"
	"github.com/liveproctor/workspaces/pkg/fault"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
)

// ConfigPath is where an LMS reads a workspace's LTI 1.1 configuration:
// the create result's configurationUrl. It takes no credentials.
const ConfigPath = "/lti/v1/workspaces/{id}/config.xml"

// ltiConfigCacheControl lets an LMS or a CDN keep the configuration a few
// minutes: it changes only when the workspace is renamed or deleted.
const ltiConfigCacheControl = "public, max-age=300"

// The namespaces of an IMS Common Cartridge basic LTI link.
const (
	nsCartridge = "http://www.imsglobal.org/xsd/imslticc_v1p0"
	nsBLTI      = "http://www.imsglobal.org/xsd/imsbasiclti_v1p0"
	nsLTICM     = "http://www.imsglobal.org/xsd/imslticm_v1p0"
	nsLTICP     = "http://www.imsglobal.org/xsd/imslticp_v1p0"
	nsXSI       = "http://www.w3.org/2001/XMLSchema-instance"
)

const ltiSchemaLocation = nsCartridge + " http://www.imsglobal.org/xsd/lti/ltiv1p0/imslticc_v1p0.xsd " +
	nsBLTI + " http://www.imsglobal.org/xsd/lti/ltiv1p0/imsbasiclti_v1p0.xsd " +
	nsLTICM + " http://www.imsglobal.org/xsd/lti/ltiv1p0/imslticm_v1p0.xsd " +
	nsLTICP + " http://www.imsglobal.org/xsd/lti/ltiv1p0/imslticp_v1p0.xsd"

// canvasPlatform names the extension block Canvas reads.
const canvasPlatform = "canvas.instructure.com"

// ltiCartridge is the cartridge_basiclti_link document. encoding/xml does
// not write namespace prefixes itself, so the elements carry theirs in
// their names and the root declares them; a namespace-aware reader sees
// each element in its IMS namespace. The element order is the IMS schema's.
type ltiCartridge struct {
	XMLName         xml.Name      `xml:"cartridge_basiclti_link"`
	XMLNS           string        `xml:"xmlns,attr"`
	XMLNSBLTI       string        `xml:"xmlns:blti,attr"`
	XMLNSLTICM      string        `xml:"xmlns:lticm,attr"`
	XMLNSLTICP      string        `xml:"xmlns:lticp,attr"`
	XMLNSXSI        string        `xml:"xmlns:xsi,attr"`
	SchemaLocation  string        `xml:"xsi:schemaLocation,attr"`
	Title           string        `xml:"blti:title"`
	Description     string        `xml:"blti:description"`
	Extensions      ltiExtensions `xml:"blti:extensions"`
	LaunchURL       string        `xml:"blti:launch_url"`
	SecureLaunchURL string        `xml:"blti:secure_launch_url,omitempty"`
	Vendor          ltiVendor     `xml:"blti:vendor"`
}

type ltiExtensions struct {
	Platform   string        `xml:"platform,attr"`
	Properties []ltiProperty `xml:"lticm:property"`
	Options    []ltiOptions  `xml:"lticm:options"`
}

type ltiOptions struct {
	Name       string        `xml:"name,attr"`
	Properties []ltiProperty `xml:"lticm:property"`
}

type ltiProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:",chardata"`
}

type ltiVendor struct {
	Code string `xml:"lticp:code"`
	Name string `xml:"lticp:name"`
}

// renderLTIConfiguration writes c as a cartridge_basiclti_link: the launch
// URL (also as secure_launch_url when it is https), and the Canvas
// extension with the public privacy level (so Canvas sends the user's name
// and e-mail), the domain, and a course navigation link to the launch URL.
func renderLTIConfiguration(c *workspacev1.LtiConfiguration) ([]byte, error) {
	doc := ltiCartridge{
		XMLNS: nsCartridge, XMLNSBLTI: nsBLTI, XMLNSLTICM: nsLTICM, XMLNSLTICP: nsLTICP, XMLNSXSI: nsXSI,
		SchemaLocation: ltiSchemaLocation,
		Title:          c.GetTitle(),
		Description:    c.GetDescription(),
		Extensions: ltiExtensions{
			Platform: canvasPlatform,
			Properties: []ltiProperty{
				{Name: "privacy_level", Value: "public"},
				{Name: "domain", Value: c.GetDomain()},
			},
			Options: []ltiOptions{{
				Name: "course_navigation",
				Properties: []ltiProperty{
					{Name: "url", Value: c.GetLaunchUrl()},
					{Name: "text", Value: c.GetTitle()},
					{Name: "enabled", Value: "true"},
				},
			}},
		},
		LaunchURL: c.GetLaunchUrl(),
		Vendor:    ltiVendor{Code: "liveproctor", Name: "LiveProctor"},
	}
	if u, err := url.Parse(c.GetLaunchUrl()); err == nil && u.Scheme == "https" {
		doc.SecureLaunchURL = c.GetLaunchUrl()
	}
	var buf bytes.Buffer
	buf.WriteString(xml.Header)
	enc := xml.NewEncoder(&buf)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

// ConfigurationReader is the call the route makes.
type ConfigurationReader interface {
	GetLtiConfiguration(ctx context.Context, in *workspacev1.GetLtiConfigurationRequest, opts ...grpc.CallOption) (*workspacev1.LtiConfiguration, error)
}

// ServeConfiguration answers GET and HEAD on ConfigPath: the XML, or an
// error in the one error shape (404 for an unknown or deleted workspace,
// 503 while the workspace service is down), rendered from the service's
// status by errs like every other route's.
func ServeConfiguration(client ConfigurationReader, errs *httperr.Handler, md Metadata, logger *slog.Logger) runtime.HandlerFunc {
	return serveConfiguration(client, errs, md, logger, "LTI configuration", "application/xml; charset=utf-8", renderLTIConfiguration)
}

// serveConfiguration answers a workspace's configuration for an LMS as
// render writes it from the workspace service's answer, with contentType,
// cacheable by the LMS and any CDN for ltiConfigCacheControl; HEAD gets the
// headers only.
func serveConfiguration(client ConfigurationReader, errs *httperr.Handler, md Metadata, logger *slog.Logger,
	what, contentType string, render func(*workspacev1.LtiConfiguration) ([]byte, error)) runtime.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request, params map[string]string) {
		ctx := metadata.NewOutgoingContext(r.Context(), md(r.Context(), r))
		c, err := client.GetLtiConfiguration(ctx, &workspacev1.GetLtiConfigurationRequest{WorkspaceId: params["id"]})
		if err != nil {
			errs.WriteError(w, r, err)
			return
		}
		body, err := render(c)
		if err != nil {
			logger.Error("render the "+what, "request_id", reqstate.ID(r.Context()), "error", err)
			httperr.Write(w, r, fault.Internal, httperr.MsgInternal)
			return
		}
		header := w.Header()
		header.Set("Content-Type", contentType)
		header.Set("Cache-Control", ltiConfigCacheControl)
		header.Set("X-Content-Type-Options", "nosniff")
		header.Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(http.StatusOK)
		if r.Method != http.MethodHead {
			_, _ = w.Write(body)
		}
	}
}
