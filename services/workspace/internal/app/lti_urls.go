package app

import (
	"net/url"
	"strings"
)

// Every URL handed to an LMS is built here, below the public base URL
// (PUBLIC_BASE_URL), on the routes the gateway serves, so that the create
// result and the configuration XML cannot disagree.

// ltiBase is the public base URL without a trailing slash, so that a base
// configured as https://lti.example.com/ does not double it.
func (a *App) ltiBase() string { return strings.TrimRight(a.settings.LTIBaseURL, "/") }

// ltiLaunchURL is where an LMS sends the launches of every workspace (the
// consumer key tells them apart).
func (a *App) ltiLaunchURL() string { return a.ltiBase() + "/lti/v1/launch" }

// ltiConfigurationURL is where an LMS reads workspace id's configuration XML.
func (a *App) ltiConfigurationURL(id string) string {
	return a.ltiBase() + "/lti/v1/workspaces/" + url.PathEscape(id) + "/config.xml"
}

// hostName is the host of rawURL without a port; empty when rawURL does not
// parse.
func hostName(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	return u.Hostname()
}
