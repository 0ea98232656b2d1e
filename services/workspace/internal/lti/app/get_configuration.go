package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/liveproctor/workspaces/pkg/ident"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// productName is what an LMS calls the tool, before the workspace's name.
const productName = "LiveProctor"

// Configuration is what a workspace's LTI 1.1 configuration XML and its
// Canvas LTI 1.3 developer-key JSON say.
type Configuration struct {
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
	// LTI 1.3's URLs, the same for every workspace, for the Canvas
	// developer-key JSON.
	LTI13LoginURL, LTI13LaunchURL, LTI13JWKSURL string
	// The workspace's pages for an LMS administrator: the LTI 1.1
	// configuration XML and the Canvas developer-key JSON.
	LTI11ConfigURL, CanvasJSONURL string
}

// Configuration returns the LTI configuration of an active workspace. It
// takes no caller: an LMS fetches the configuration URL anonymously, so it
// says nothing that the workspace's id and name do not (no key, no
// secret). An unknown or deleted workspace is the usual not-found answer;
// an id that cannot exist is answered so without reading the store, since
// anyone may call this.
func (r *Registrations) Configuration(ctx context.Context, id string) (Configuration, error) {
	if !ident.ValidWorkspaceID(id) {
		return Configuration{}, r.ws.NotFound(id)
	}
	w, err := r.ws.Get(ctx, id)
	switch {
	case errors.Is(err, domain.ErrNotFound):
		return Configuration{}, r.ws.NotFound(id)
	case err != nil:
		return Configuration{}, fmt.Errorf("get workspace: %w", err)
	case w.Deleted():
		return Configuration{}, r.ws.NotFound(id)
	}
	urls := r.s.URLs
	return Configuration{
		WorkspaceID: w.ID(),
		Title:       productName + " (" + w.Name() + ")",
		Description: productName + " for " + w.Name() + ": opens the proctoring component for the launching user, " +
			"with the exam configuration named by the custom parameter custom_exam_config_id.",
		LaunchURL:      urls.LTI11Launch(),
		Domain:         urls.Domain(),
		LTI13LoginURL:  urls.LTI13Login(),
		LTI13LaunchURL: urls.LTI13Launch(),
		LTI13JWKSURL:   urls.LTI13JWKS(),
		LTI11ConfigURL: urls.LTI11Configuration(w.ID()),
		CanvasJSONURL:  urls.CanvasConfiguration(w.ID()),
	}, nil
}
