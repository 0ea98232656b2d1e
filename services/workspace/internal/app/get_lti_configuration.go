package app

import (
	"context"

	"github.com/liveproctor/workspaces/pkg/ident"
)

// ltiProductName is what an LMS calls the tool, before the workspace's name.
const ltiProductName = "LiveProctor"

// LTIConfiguration is what a workspace's LTI 1.1 configuration XML and its
// Canvas LTI 1.3 developer-key JSON say.
type LTIConfiguration struct {
	WorkspaceID string
	// Title is "LiveProctor (<workspace name>)": an LMS lists tools by
	// title, and a school connected to several workspaces must tell them
	// apart.
	Title       string
	Description string
	// LaunchURL is the create result's launchUrl.
	LaunchURL string
	// Domain is LaunchURL's host name, without a port: Canvas matches it
	// against the host of the URLs it launches.
	Domain string
	// LTI 1.3's URLs, the same for every workspace (lti13.go), for the
	// Canvas developer-key JSON.
	LTI13LoginURL, LTI13LaunchURL, LTI13JWKSURL string
}

// GetLTIConfiguration returns the LTI configuration of an active workspace.
// It takes no caller: an LMS fetches the configuration URL anonymously, so
// it says nothing that the workspace's id and name do not (no key, no
// secret). An unknown or deleted workspace is the usual not-found answer;
// an id that cannot exist is answered so without reading the store, since
// anyone may call this.
func (a *App) GetLTIConfiguration(ctx context.Context, id string) (LTIConfiguration, error) {
	if !ident.ValidWorkspaceID(id) {
		return LTIConfiguration{}, notFound(id)
	}
	w, err := a.load(ctx, id)
	if err != nil {
		return LTIConfiguration{}, err
	}
	if w.Deleted() {
		return LTIConfiguration{}, notFound(id)
	}
	launch := a.ltiLaunchURL()
	return LTIConfiguration{
		WorkspaceID: w.ID(),
		Title:       ltiProductName + " (" + w.Name() + ")",
		Description: ltiProductName + " for " + w.Name() + ": opens the proctoring component for the launching user, " +
			"with the exam configuration named by the custom parameter custom_exam_config_id.",
		LaunchURL:      launch,
		Domain:         hostName(launch),
		LTI13LoginURL:  a.lti13LoginURL(),
		LTI13LaunchURL: a.lti13LaunchURL(),
		LTI13JWKSURL:   a.lti13JWKSURL(),
	}, nil
}
