package lti

import (
	"encoding/json"
	"log/slog"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"

	"github.com/liveproctor/workspaces/gateway/internal/httperr"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
)

// CanvasConfigPath is where a Canvas administrator's developer key reads a
// workspace's LTI 1.3 tool configuration ("Enter URL" in the key's
// form). It takes no credentials, like ConfigPath.
const CanvasConfigPath = "/lti/v1p3/workspaces/{id}/canvas.json"

// canvasToolID names the tool in Canvas's extension block.
const canvasToolID = "liveproctor"

// deepLinkingRequest is the LTI message type of the placements: a teacher
// picks the exam, and the tool answers with a link that carries its id.
const deepLinkingRequest = "LtiDeepLinkingRequest"

// canvasPlacements are where Canvas offers the tool. Both open a Deep
// Linking request, so every link Canvas stores names its exam:
// link_selection (a module item) and assignment_selection (an assignment
// whose submission is the external tool, the usual home of an exam). A
// course_navigation tab is left out: its resource-link launch names no
// exam, and the launch refuses it.
var canvasPlacements = []string{"link_selection", "assignment_selection"}

// canvasConfiguration is Canvas's JSON tool configuration of an LTI 1.3
// developer key. Scopes is empty: the tool calls no LTI Advantage service.
// It has no custom_fields: a developer key's custom fields go into every
// launch of every link, so they cannot name one link's exam.
type canvasConfiguration struct {
	Title             string            `json:"title"`
	Description       string            `json:"description"`
	OIDCInitiationURL string            `json:"oidc_initiation_url"`
	TargetLinkURI     string            `json:"target_link_uri"`
	PublicJWKURL      string            `json:"public_jwk_url"`
	Scopes            []string          `json:"scopes"`
	Extensions        []canvasExtension `json:"extensions"`
}

type canvasExtension struct {
	Platform     string         `json:"platform"`
	PrivacyLevel string         `json:"privacy_level"`
	Domain       string         `json:"domain"`
	ToolID       string         `json:"tool_id"`
	Settings     canvasSettings `json:"settings"`
}

type canvasSettings struct {
	Text       string            `json:"text"`
	Placements []canvasPlacement `json:"placements"`
}

type canvasPlacement struct {
	Placement     string `json:"placement"`
	MessageType   string `json:"message_type"`
	TargetLinkURI string `json:"target_link_uri"`
	Text          string `json:"text"`
	Enabled       bool   `json:"enabled"`
}

// renderCanvasConfiguration writes c as Canvas's JSON: the LTI 1.3 URLs
// the workspace service builds from PUBLIC_BASE_URL, the privacy level
// public (the launch needs the user's e-mail) and the placements above.
func renderCanvasConfiguration(c *workspacev1.LtiConfiguration) ([]byte, error) {
	placements := make([]canvasPlacement, 0, len(canvasPlacements))
	for _, p := range canvasPlacements {
		placements = append(placements, canvasPlacement{
			Placement: p, MessageType: deepLinkingRequest, TargetLinkURI: c.GetLti13LaunchUrl(), Text: c.GetTitle(), Enabled: true,
		})
	}
	doc := canvasConfiguration{
		Title:             c.GetTitle(),
		Description:       c.GetDescription(),
		OIDCInitiationURL: c.GetLti13LoginUrl(),
		TargetLinkURI:     c.GetLti13LaunchUrl(),
		PublicJWKURL:      c.GetLti13JwksUrl(),
		Scopes:            []string{},
		Extensions: []canvasExtension{{
			Platform:     canvasPlatform,
			PrivacyLevel: "public",
			Domain:       c.GetDomain(),
			ToolID:       canvasToolID,
			Settings:     canvasSettings{Text: c.GetTitle(), Placements: placements},
		}},
	}
	body, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(body, '\n'), nil
}

// ServeCanvasConfiguration answers GET on CanvasConfigPath: the JSON, or an
// error in the one error shape (404 for an unknown or deleted workspace,
// 503 while the workspace service is down), as ServeConfiguration does.
func ServeCanvasConfiguration(client ConfigurationReader, errs *httperr.Handler, md Metadata, logger *slog.Logger) runtime.HandlerFunc {
	return serveConfiguration(client, errs, md, logger, "Canvas configuration", "application/json", renderCanvasConfiguration)
}
