package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/liveproctor/workspaces/pkg/basicauth"
)

const (
	// portalWorkspace is the portal scenario's workspace. Its id and name
	// hold no "bench", so the list scenario's search does not find it.
	portalWorkspace = "portal-school"
	// portalIssuer is the LMS its registrations claim to be: one issuer
	// with several client ids, as every hosted Canvas is.
	portalIssuer = "https://canvas.portal-school.example.edu"
	// portalRegistrations is how many platforms the workspace registers,
	// with one deployment and two in turn.
	portalRegistrations = 4
	// portalCookie is the cookie the gateway keeps a portal session's
	// token in.
	portalCookie = "portal_session"
	// portalSlack is what a session must outlast the scenario's wrk runs
	// by: the set-up, the checks and wrk's start and end.
	portalSlack = time.Minute
)

// The two sides of the portal scenario, by the names the report gives them.
const (
	portalPageName = "LTI registrations, portal page"
	portalRESTName = "LTI registrations, REST route"
)

// portalProcesses are the processes whose CPU the portal's table shows
// one by one: those that serve both sides.
var portalProcesses = []string{"gateway", "workspace", "redis-server", "ferretdb"}

// portalBench is what the portal scenario measured.
type portalBench struct {
	Registrations, Deployments int
	// Page is GET /portal/registrations with the session's cookie, REST
	// GET /api/workspace/{id}/lti/registrations with the workspace's
	// server pair, one measurement per round each.
	Page, REST []measurement
}

// CPUFactor is the page's CPU per request over the REST route's, for
// process name, or every server when name is empty.
func (b *portalBench) CPUFactor(name string) float64 {
	rest := cpuPerCall(pool(b.REST), name)
	if rest == 0 {
		return 0
	}
	return cpuPerCall(pool(b.Page), name) / rest
}

// portalSession is the session an opened portal link started.
type portalSession struct {
	Token string // the cookie's value: a secret, never printed
	Ends  time.Time
}

// measurePortal compares the administrator's portal's registrations page
// with the REST route that lists the same registrations: a workspace with
// a few LTI 1.3 registrations, a portal link made over REST and opened as
// the page's button opens it, then wrk on both in alternating rounds. It
// fails when an answer is not 200, and says so when the session has ended.
func measurePortal(ctx context.Context, cfg config, e *env, rep *report) error {
	gateway := e.stack.GatewayURL
	server, err := seedPortalWorkspace(ctx, e, gateway)
	if err != nil {
		return err
	}
	b := &portalBench{Registrations: portalRegistrations}
	for i := 1; i <= portalRegistrations; i++ {
		n, err := registerPortalPlatform(ctx, e, gateway, server, i)
		if err != nil {
			return err
		}
		b.Deployments += n
	}
	s, err := openPortal(ctx, e.http, gateway, server)
	if err != nil {
		return err
	}
	if need := portalDuration(cfg); time.Until(s.Ends) < need {
		return fmt.Errorf("the portal session ends at %s, before the scenario's %s of load would: shorten -round, -rounds or -warmup",
			s.Ends.Format(time.TimeOnly), need)
	}

	page := wrkLoad{Method: http.MethodGet, URL: gateway + "/portal/registrations",
		Header: http.Header{"Cookie": {(&http.Cookie{Name: portalCookie, Value: s.Token}).String()}}}
	rest := wrkLoad{Method: http.MethodGet, URL: gateway + "/api/workspace/" + portalWorkspace + "/lti/registrations", Header: server}
	if err := checkPortalSides(ctx, e.http, page, rest); err != nil {
		return err
	}
	rep.Portal = b
	// The page goes second: -profile samples the second side.
	rounds, err := alternate(ctx, cfg, e, cfg.Conns,
		[]side{{Name: portalRESTName, Wrk: &rest}, {Name: portalPageName, Wrk: &page}}, nil)
	if err != nil {
		return err
	}
	b.REST, b.Page = rounds[0], rounds[1]
	status, _, err := fetch(ctx, e.http, page)
	if err != nil {
		return fmt.Errorf("the page after the rounds: %w", err)
	}
	return b.faults(status)
}

// seedPortalWorkspace creates the scenario's workspace with the root pair
// and returns the header of its own server pair.
func seedPortalWorkspace(ctx context.Context, e *env, gateway string) (http.Header, error) {
	var created struct {
		AppKeys struct {
			Server struct {
				ConsumerKey  string `json:"consumerKey"`
				SharedSecret string `json:"sharedSecret"`
			} `json:"server"`
		} `json:"appKeys"`
	}
	if err := postJSONAt(ctx, e.http, gateway, e.basic, "/api/workspace",
		`{"id":"`+portalWorkspace+`","name":"Springfield schools","type":"DISTRICT"}`, &created); err != nil {
		return nil, fmt.Errorf("create the portal's workspace: %w", err)
	}
	return http.Header{
		"Authorization": {basicauth.Header(created.AppKeys.Server.ConsumerKey, created.AppKeys.Server.SharedSecret)},
		"Content-Type":  {"application/json"},
	}, nil
}

// registerPortalPlatform registers the i-th platform of the scenario's
// workspace and returns how many deployments it has.
func registerPortalPlatform(ctx context.Context, e *env, gateway string, server http.Header, i int) (int, error) {
	deployments := []string{fmt.Sprintf("%d:portal-school-a", i)}
	if i%2 == 0 {
		deployments = append(deployments, fmt.Sprintf("%d:portal-school-b", i))
	}
	body, err := json.Marshal(map[string]any{
		"issuer": portalIssuer, "clientId": portalClientID(i), "deploymentIds": deployments,
		"authLoginUrl": portalIssuer + "/api/lti/authorize_redirect",
		"jwksUrl":      portalIssuer + "/api/lti/security/jwks",
		"authTokenUrl": portalIssuer + "/login/oauth2/token",
	})
	if err != nil {
		return 0, err
	}
	var registered struct{}
	if err := postJSONAt(ctx, e.http, gateway, server, "/api/workspace/"+portalWorkspace+"/lti/registrations", string(body), &registered); err != nil {
		return 0, fmt.Errorf("register the portal's platform %d: %w", i, err)
	}
	return len(deployments), nil
}

// portalClientID is the i-th platform's client id.
func portalClientID(i int) string { return fmt.Sprintf("1000000000000%d", i) }

// openPortal makes a portal link with the workspace's server pair and
// opens it as the link page's button does: a post from the portal's own
// page, which answers with the session's cookie.
func openPortal(ctx context.Context, client *http.Client, gateway string, server http.Header) (portalSession, error) {
	var link struct {
		URL string `json:"url"`
	}
	if err := postJSONAt(ctx, client, gateway, server, "/api/workspace/"+portalWorkspace+"/portal-links", `{}`, &link); err != nil {
		return portalSession{}, fmt.Errorf("make a portal link: %w", err)
	}
	// The link is under PUBLIC_BASE_URL, which need not be where the bench
	// reaches the gateway: only its path is the gateway's.
	u, err := url.Parse(link.URL)
	if err != nil || !strings.HasPrefix(u.Path, "/portal/open/") {
		return portalSession{}, errors.New("the portal link's URL is not …/portal/open/{secret}")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, gateway+u.EscapedPath(), nil)
	if err != nil {
		return portalSession{}, fmt.Errorf("open the portal link: %w", withoutURL(err))
	}
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := noRedirects(client).Do(req)
	if err != nil {
		return portalSession{}, fmt.Errorf("open the portal link: %w", withoutURL(err))
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return sessionFromOpening(resp, time.Now())
}

// withoutURL is err without the URL a *url.Error quotes: a portal link's
// path is its secret.
func withoutURL(err error) error {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		return uerr.Err
	}
	return err
}

// sessionFromOpening reads the session a link's opening started from the
// answer, received at now: a redirect to the portal setting the cookie,
// whose Max-Age is the session's remaining life.
func sessionFromOpening(resp *http.Response, now time.Time) (portalSession, error) {
	if resp.StatusCode != http.StatusSeeOther {
		return portalSession{}, fmt.Errorf("opening the portal link answered %d, not 303", resp.StatusCode)
	}
	for _, c := range resp.Cookies() {
		if c.Name == portalCookie && c.Value != "" && c.MaxAge > 0 {
			return portalSession{Token: c.Value, Ends: now.Add(time.Duration(c.MaxAge) * time.Second)}, nil
		}
	}
	return portalSession{}, fmt.Errorf("opening the portal link set no %s cookie with a Max-Age", portalCookie)
}

// portalDuration is how long the scenario loads the session: a warm-up of
// each side and cfg.Rounds rounds of each, as wrk runs them, and
// portalSlack.
func portalDuration(cfg config) time.Duration {
	d := 2*time.Duration(cfg.Rounds)*wrkDuration(cfg.Round) + portalSlack
	if cfg.Warmup > 0 {
		d += 2 * wrkDuration(cfg.Warmup)
	}
	return d
}

// checkPortalSides checks, before the load, that both sides answer 200
// with every registration: the page naming each platform's client id, the
// REST route listing as many.
func checkPortalSides(ctx context.Context, client *http.Client, page, rest wrkLoad) error {
	status, body, err := fetch(ctx, client, page)
	if err != nil {
		return fmt.Errorf("the portal's page: %w", err)
	}
	if status != http.StatusOK {
		return fmt.Errorf("the portal's page answered %d, not 200", status)
	}
	for i := 1; i <= portalRegistrations; i++ {
		if !bytes.Contains(body, []byte(portalClientID(i))) {
			return fmt.Errorf("the portal's page does not show the registration of client id %s", portalClientID(i))
		}
	}
	status, body, err = fetch(ctx, client, rest)
	if err != nil {
		return fmt.Errorf("the REST route: %w", err)
	}
	if status != http.StatusOK {
		return fmt.Errorf("the REST route answered %d, not 200", status)
	}
	var listed struct {
		Registrations []json.RawMessage `json:"registrations"`
	}
	if err := json.Unmarshal(body, &listed); err != nil {
		return fmt.Errorf("decode the REST route's answer: %w", err)
	}
	if len(listed.Registrations) != portalRegistrations {
		return fmt.Errorf("the REST route lists %d registrations, not %d", len(listed.Registrations), portalRegistrations)
	}
	return nil
}

// fetch sends l's request once, without a body (the portal's loads have
// none), following no redirect, and returns the answer's status and body.
func fetch(ctx context.Context, client *http.Client, l wrkLoad) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, l.Method, l.URL, nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header = l.Header.Clone()
	resp, err := noRedirects(client).Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, nil, fmt.Errorf("read the answer: %w", err)
	}
	return resp.StatusCode, body, nil
}

// noRedirects is client, sharing its connections, answering a redirect
// with the redirect itself.
func noRedirects(client *http.Client) *http.Client {
	c := *client
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}

// faults says why the figures cannot stand: the page answering now with
// status other than 200 (401: the session has ended), and every round's
// answers that were not 200. wrk counts the answers of 400 and more and
// the socket errors; neither route answers a GET with a redirect.
func (b *portalBench) faults(status int) error {
	var errs []error
	switch status {
	case http.StatusOK:
	case http.StatusUnauthorized:
		errs = append(errs, errors.New("the portal session has ended: the page answers 401 (a session lasts an hour from its opening, and ends early when its link is revoked or its workspace deleted)"))
	default:
		errs = append(errs, fmt.Errorf("after the rounds the page answers %d", status))
	}
	for _, s := range []struct {
		name   string
		rounds []measurement
	}{{"the page", b.Page}, {"the REST route", b.REST}} {
		if m := pool(s.rounds); m.Errors > 0 {
			errs = append(errs, fmt.Errorf("%s: %d of %d answers were not 200 (%w)", s.name, m.Errors, m.Requests, m.FirstError))
		}
	}
	return errors.Join(errs...)
}
