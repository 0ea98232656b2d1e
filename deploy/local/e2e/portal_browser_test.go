package e2e

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/liveproctor/workspaces/deploy/local/browser"
	"github.com/liveproctor/workspaces/deploy/local/stack"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/pkg/testenv"
)

// The administrator's portal in a real Chromium, on a stack of its own
// whose tool URLs are its gateway's, beside the LTI test platform: the tour
// an administrator makes from the vendor's link to signing out, each
// action through the pages' own links, forms and buttons, then the ways a
// browser is refused. Every page is held to a smoke check of its
// accessibility and of its Content-Security-Policy (checkPage). The tour's
// screenshots go to PORTAL_SCREENSHOTS (`make portal-screenshots` sets it
// to docs, for the README's), else to the test's artifact directory.
func TestPortalInChromium(t *testing.T) {
	p := startPlatform(t, platformOptions{})
	s := startLTI13Stack(t, p.URL)
	shots := screenshotDir(t)
	t.Run("tour", func(t *testing.T) { portalTour(t, p, s, shots) })
	t.Run("refusals", func(t *testing.T) { portalRefusals(t, s) })
}

// screenshotDir is where the tour's screenshots go: PORTAL_SCREENSHOTS
// (relative to the repository's root), or the test's artifact directory
// (kept by `go test -artifacts`).
func screenshotDir(t *testing.T) string {
	dir := os.Getenv("PORTAL_SCREENSHOTS")
	if dir == "" {
		dir = t.ArtifactDir()
	} else if !filepath.IsAbs(dir) {
		root, err := stack.RepoRoot()
		if err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(root, dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("the portal's screenshots go to %s", dir)
	return dir
}

// The widths the pages are shown at: a desktop's, and a phone's (emulated:
// its touch, its viewport meta tag honoured).
const (
	desktopWidth, desktopHeight = 1280, 800
	phoneWidth, phoneHeight     = 390, 844
)

// maxScreenshotBytes keeps the committed screenshots small enough for a
// repository.
const maxScreenshotBytes = 300 << 10

// portalBrowser is one administrator's Chromium tab on the portal of the
// gateway tool.
type portalBrowser struct {
	t     *testing.T
	ctx   context.Context
	tool  string // the gateway's URL
	page  *browser.Page
	shots string // where screenshot writes
	// logSeen is how much of the tab's log checkPage has read.
	logSeen int
}

// newPortalBrowser starts Chromium with a desktop-wide tab; the copy
// buttons' clipboard may be read back on the gateway's origin.
func newPortalBrowser(t *testing.T, ctx context.Context, tool, shots string) *portalBrowser {
	t.Helper()
	b, err := browser.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	if err := b.AllowClipboardRead(ctx, tool); err != nil {
		t.Fatal(err)
	}
	page, err := b.Open(ctx, "about:blank")
	if err != nil {
		t.Fatal(err)
	}
	pb := &portalBrowser{t: t, ctx: ctx, tool: tool, page: page, shots: shots}
	pb.viewport(desktopWidth, desktopHeight, false)
	return pb
}

func (b *portalBrowser) viewport(width, height int64, mobile bool) {
	b.t.Helper()
	if err := b.page.Viewport(b.ctx, width, height, mobile); err != nil {
		b.t.Fatal(err)
	}
}

// visit loads target (a path on the gateway, or a URL), checks the page
// and returns its status.
func (b *portalBrowser) visit(target string) int {
	b.t.Helper()
	if strings.HasPrefix(target, "/") {
		target = b.tool + target
	}
	if err := b.page.Navigate(b.ctx, target); err != nil {
		b.t.Fatalf("open %s: %v", target, err)
	}
	return b.checkPage()
}

// click clicks what selector finds, as the administrator would, waits for
// the page that follows (a link's or a form's), checks it and returns its
// status.
func (b *portalBrowser) click(selector string) int {
	b.t.Helper()
	b.clickAndWait(selector)
	return b.checkPage()
}

// clickAndWait clicks what selector finds and waits for the next page to
// have loaded. The old page's window carries a mark the next one lacks.
func (b *portalBrowser) clickAndWait(selector string) {
	b.t.Helper()
	if err := b.page.Evaluate(b.ctx, "window.portalTourMark = true", nil); err != nil {
		b.t.Fatal(err)
	}
	if err := b.page.Click(b.ctx, selector); err != nil {
		b.t.Fatalf("click %s: %v\n%s", selector, err, b.mainText())
	}
	testenv.Eventually(b.t, 30*time.Second, func() error {
		var loaded bool
		if err := b.page.Evaluate(b.ctx, `window.portalTourMark === undefined && document.readyState === "complete"`, &loaded); err != nil {
			return err // the old page going away
		}
		if !loaded {
			return errors.New("still on the page clicked, or loading the next")
		}
		return nil
	}, "the page after a click on %s", selector)
}

// press clicks what selector finds, on the page as it is (a copy
// button, a radio button).
func (b *portalBrowser) press(selector string) {
	b.t.Helper()
	if err := b.page.Click(b.ctx, selector); err != nil {
		b.t.Fatalf("click %s: %v", selector, err)
	}
}

// fill types value into the field selector finds.
func (b *portalBrowser) fill(selector, value string) {
	b.t.Helper()
	if err := b.page.Fill(b.ctx, selector, value); err != nil {
		b.t.Fatalf("fill %s: %v", selector, err)
	}
}

// eval evaluates a JavaScript expression into out.
func (b *portalBrowser) eval(expression string, out any) {
	b.t.Helper()
	if err := b.page.Evaluate(b.ctx, expression, out); err != nil {
		b.t.Fatalf("%s: %v", expression, err)
	}
}

// text is the text of what selector finds on the page, trimmed; the page
// must have it.
func (b *portalBrowser) text(selector string) string {
	b.t.Helper()
	var got struct {
		Found bool
		Text  string
	}
	b.eval(fmt.Sprintf(`((e) => ({found: e !== null, text: e ? e.textContent.trim() : ""}))(document.querySelector(%q))`, selector), &got)
	if !got.Found {
		b.t.Fatalf("page %s has no %s:\n%s", b.location(), selector, b.mainText())
	}
	return got.Text
}

// value is the value of the form field whose id is given.
func (b *portalBrowser) value(id string) string {
	b.t.Helper()
	var v string
	b.eval(fmt.Sprintf("document.getElementById(%q).value", id), &v)
	return v
}

// count is how many elements selector finds now.
func (b *portalBrowser) count(selector string) int {
	b.t.Helper()
	n, err := b.page.Count(b.ctx, selector)
	if err != nil {
		b.t.Fatal(err)
	}
	return n
}

// heading is the page's h1.
func (b *portalBrowser) heading() string { return b.text("h1") }

// mainText is what the page shows in its main element, for failures.
func (b *portalBrowser) mainText() string {
	var text string
	_ = b.page.Evaluate(b.ctx, `document.querySelector("main") ? document.querySelector("main").innerText : document.documentElement.outerHTML`, &text)
	return text
}

// location is the tab's URL.
func (b *portalBrowser) location() string {
	b.t.Helper()
	loc, err := b.page.Location(b.ctx)
	if err != nil {
		b.t.Fatal(err)
	}
	return loc
}

// wantPage fails unless the page has the status and the heading.
func (b *portalBrowser) wantPage(status, wantStatus int, heading string) {
	b.t.Helper()
	if got := b.heading(); status != wantStatus || got != heading {
		b.t.Fatalf("page %s: %d %q, want %d %q\n%s", b.location(), status, got, wantStatus, heading, b.mainText())
	}
}

// wantNotice fails unless the page says the last action did what notice
// says.
func (b *portalBrowser) wantNotice(notice string) {
	b.t.Helper()
	if got := b.text(".notice"); !strings.HasPrefix(got, notice) {
		b.t.Fatalf("notice %q, want %q", got, notice)
	}
}

// pageProblems lists what the smoke check finds wrong with the page's
// accessibility: the page's language, one h1, a title, a name for every
// form field (a label or aria-label), button and link.
const pageProblems = `(() => {
  const problems = [];
  const named = (e) => (e.textContent || "").trim() !== "" || (e.getAttribute("aria-label") || "").trim() !== "";
  if (!document.documentElement.lang) problems.push("no lang on <html>");
  if (!document.title.trim()) problems.push("no title");
  const h1 = document.querySelectorAll("h1").length;
  if (h1 !== 1) problems.push(h1 + " h1 elements");
  for (const f of document.querySelectorAll("input, select, textarea")) {
    if (f.type === "hidden") continue;
    const labelled = [...(f.labels || [])].some(named) || (f.getAttribute("aria-label") || "").trim() !== "" ||
      (f.getAttribute("aria-labelledby") || "").split(" ").some((id) => id && document.getElementById(id) && named(document.getElementById(id)));
    if (!labelled) problems.push("a field without a label: " + f.outerHTML);
  }
  for (const e of document.querySelectorAll("button, a[href]")) {
    if (!named(e)) problems.push("no text: " + e.outerHTML);
  }
  const sheets = [...document.styleSheets];
  if (sheets.length !== 1 || sheets[0].cssRules.length === 0) problems.push("the style sheet is not applied");
  return problems;
})()`

// checkPage holds the page to the smoke check (pageProblems), to its
// policy (no Content-Security-Policy violation and no exception in the
// tab's log since the last check) and returns its HTTP status.
func (b *portalBrowser) checkPage() int {
	b.t.Helper()
	var problems []string
	b.eval(pageProblems, &problems)
	log := b.page.Log()
	fresh := log[b.logSeen:]
	b.logSeen = len(log)
	for _, line := range fresh {
		// A page answered with an error status is logged as a failed
		// load (network); the status is checked by the caller.
		if strings.HasPrefix(line, "log.") && strings.Contains(line, " network: ") {
			continue
		}
		problems = append(problems, "the tab's log: "+line)
	}
	if len(problems) > 0 {
		b.t.Errorf("page %s:\n%s", b.location(), strings.Join(problems, "\n"))
	}
	var status int
	b.eval(`performance.getEntriesByType("navigation")[0].responseStatus`, &status)
	return status
}

// screenshot saves the page, whole, as portal-<name>.png, and checks that
// it is laid out within the window's width.
func (b *portalBrowser) screenshot(name string) {
	b.t.Helper()
	b.wantNoSideScroll()
	shot, err := b.page.Screenshot(b.ctx)
	if err == nil {
		shot, err = compactPNG(shot)
	}
	if err != nil {
		b.t.Fatal(err)
	}
	if len(shot) > maxScreenshotBytes {
		b.t.Errorf("the screenshot %s has %d KiB, over %d", name, len(shot)>>10, maxScreenshotBytes>>10)
	}
	if err := os.WriteFile(filepath.Join(b.shots, "portal-"+name+".png"), shot, 0o644); err != nil {
		b.t.Fatal(err)
	}
}

// compactPNG re-encodes a screenshot with a palette of its 256 most used
// colours, the nearest of them standing in for the others (the edges of
// anti-aliased text): a page of text takes a third of the bytes, and
// looks the same.
func compactPNG(shot []byte) ([]byte, error) {
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		return nil, err
	}
	bounds := img.Bounds()
	uses := map[color.RGBA]int{}
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			uses[color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)]++
		}
	}
	colours := slices.SortedFunc(maps.Keys(uses), func(a, b color.RGBA) int {
		return cmp.Or(uses[b]-uses[a], cmp.Compare(a.R, b.R), cmp.Compare(a.G, b.G), cmp.Compare(a.B, b.B), cmp.Compare(a.A, b.A))
	})
	palette := make(color.Palette, 0, 256)
	for _, c := range colours[:min(256, len(colours))] {
		palette = append(palette, c)
	}
	out := image.NewPaletted(bounds, palette)
	index := map[color.RGBA]uint8{}
	for y := bounds.Min.Y; y < bounds.Max.Y; y++ {
		for x := bounds.Min.X; x < bounds.Max.X; x++ {
			c := color.RGBAModel.Convert(img.At(x, y)).(color.RGBA)
			i, ok := index[c]
			if !ok {
				i = uint8(palette.Index(c))
				index[c] = i
			}
			out.SetColorIndex(x, y, i)
		}
	}
	var buf bytes.Buffer
	err = (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&buf, out)
	return buf.Bytes(), err
}

// wantNoSideScroll fails when the page is wider than the window.
func (b *portalBrowser) wantNoSideScroll() {
	b.t.Helper()
	var widths struct{ Scroll, Inner int }
	b.eval(`({scroll: document.documentElement.scrollWidth, inner: window.innerWidth})`, &widths)
	if widths.Scroll > widths.Inner {
		b.t.Errorf("page %s scrolls sideways: %d wide in a window of %d", b.location(), widths.Scroll, widths.Inner)
	}
}

// sessionCookie is the portal's cookie the browser holds, nil for none.
func (b *portalBrowser) sessionCookie() *http.Cookie {
	b.t.Helper()
	cookies, err := b.page.Cookies(b.ctx, b.tool+"/portal/")
	if err != nil {
		b.t.Fatal(err)
	}
	for _, c := range cookies {
		if c.Name == "portal_session" {
			return c
		}
	}
	return nil
}

// csrf is the CSRF token of the page's forms.
func (b *portalBrowser) csrf() string {
	b.t.Helper()
	var token string
	b.eval(`document.querySelector('input[name="csrf"]').value`, &token)
	return token
}

// openLink opens a portal link as the administrator does: its page, then
// its one button. It returns the status of the page the button leads to.
func (b *portalBrowser) openLink(l portalLink) int {
	b.t.Helper()
	b.wantPage(b.visit(l.URL), http.StatusOK, "Open the administrator's portal")
	return b.click("main form button")
}

// waitText waits until what selector finds has text, and returns it.
func (b *portalBrowser) waitText(selector string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 15*time.Second)
	defer cancel()
	wait := fmt.Sprintf(`new Promise((resolve) => {
  const e = document.querySelector(%q);
  if (e.textContent.trim()) { resolve(e.textContent.trim()); return; }
  new MutationObserver(() => { if (e.textContent.trim()) resolve(e.textContent.trim()); })
    .observe(e, { childList: true, characterData: true, subtree: true });
})`, selector)
	var text string
	if err := b.page.Evaluate(ctx, wait, &text); err != nil {
		b.t.Fatalf("no text in %s: %v\n%s", selector, err, strings.Join(b.page.Log(), "\n"))
	}
	return text
}

// pageEvent is an event as the audit trail's page shows it: its type and
// who made it.
type pageEvent struct {
	Type, By string
}

// shownEvents are the events the audit trail's page lists.
func (b *portalBrowser) shownEvents() []pageEvent {
	b.t.Helper()
	var events []pageEvent
	b.eval(`[...document.querySelectorAll("ol.events > li")].map((li) => ({
  type: li.querySelector("p code").textContent,
  by: li.querySelector("dd").textContent,
}))`, &events)
	return events
}

// vendorSite is the vendor's settings page a link's returnUrl names; it
// counts its visits.
type vendorSite struct {
	URL    string // the page's
	visits atomic.Int64
}

func startVendorSite(t *testing.T) *vendorSite {
	v := &vendorSite{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/settings/lms" {
			http.NotFound(w, r) // the browser's favicon.ico
			return
		}
		v.visits.Add(1)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, `<!doctype html><html lang="en"><title>Settings</title><h1>The vendor's LMS settings</h1></html>`)
	}))
	t.Cleanup(srv.Close)
	v.URL = srv.URL + "/settings/lms"
	return v
}

// portalTour walks the portal as a workspace's administrator: the vendor
// makes a link, the administrator opens it, sets up LTI 1.3 (copies a
// value, makes a Dynamic Registration link the platform uses), registers
// the platform by hand, adds and removes a deployment, reads the launch
// health of launches the platform made, deletes a registration, reads the
// LTI 1.1 values and rotates its pair, rotates and revokes key pairs,
// reads the audit trail, and signs out. Each page is screenshotted.
func portalTour(t *testing.T, p *platform, s *stack.Stack, shots string) {
	const (
		workspaceID = "springfield-district"
		clientID    = "10000000000042"
		deployment  = "dep-1" // the one lti13Launches logs in with
		exam        = "7c9e6679-7425-40de-944b-e07fc1f90ae7"
	)
	tool := s.GatewayURL
	p = p.withT(t)
	p.SetClients(tool, []platformClient{{ClientID: clientID, DeploymentIDs: []string{deployment}}})
	vendorPage := startVendorSite(t)
	root := asRoot(t).on(s)
	w := root.create(workspaceID, map[string]any{"name": "Springfield School District"})
	vendor := w.server(t).on(s)
	// A workspace with a history: the audit trail's first page is full
	// before the portal opens.
	for i := range 50 {
		root.put("/api/workspace/"+workspaceID, map[string]any{"name": []string{"Springfield Schools", "Springfield School District"}[i%2]}).ok(nil)
	}

	// The vendor makes a link; a mail scanner fetching it spends nothing.
	l := vendor.newPortalLink(workspaceID, map[string]any{"returnUrl": vendorPage.URL})
	if !strings.HasPrefix(l.URL, tool+"/portal/open/") {
		t.Fatalf("the link %s is not on the gateway %s", l.URL, tool)
	}
	if status, _, header := portalRequest(t, http.MethodGet, l.URL, nil, nil, nil); status != http.StatusOK || header.Get("Set-Cookie") != "" {
		t.Fatalf("a mail scanner's GET of the link: %d, Set-Cookie %q", status, header.Get("Set-Cookie"))
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	b := newPortalBrowser(t, ctx, tool, shots)

	// The link's page, its button, and the overview.
	b.wantPage(b.visit(l.URL), http.StatusOK, "Open the administrator's portal")
	b.screenshot("open")
	b.wantPage(b.click("main form button"), http.StatusOK, "Administrator's portal")
	if loc := b.location(); loc != tool+"/portal/" {
		t.Fatalf("the button led to %s, want the portal's home", loc)
	}
	if got := b.text(".banner .workspace"); got != "Springfield School District ("+workspaceID+")" {
		t.Errorf("the banner names %q", got)
	}
	var back string
	b.eval(`document.querySelector("footer a").getAttribute("href")`, &back)
	if back != vendorPage.URL {
		t.Errorf("the way back leads to %q, want the returnUrl %s", back, vendorPage.URL)
	}
	cookie := b.sessionCookie()
	if cookie == nil || !cookie.HttpOnly || !cookie.Secure || cookie.SameSite != http.SameSiteLaxMode || cookie.Path != "/portal" ||
		time.Until(cookie.Expires) < 59*time.Minute || time.Until(cookie.Expires) > time.Hour {
		t.Fatalf("the session's cookie %+v, want HttpOnly, Secure, SameSite=Lax, Path=/portal, for an hour", cookie)
	}
	var scriptCookies string
	b.eval("document.cookie", &scriptCookies)
	if scriptCookies != "" {
		t.Errorf("the page's scripts read the cookies %q", scriptCookies)
	}
	b.screenshot("overview")

	registrationID := tourLTI13(t, b, p, s, workspaceID, clientID, deployment, exam)
	tourLTI11(t, b, w, exam)
	vendor = tourKeys(t, b, s, w)
	tourEvents(t, b, vendor, workspaceID, l.ID, w.AppKeys.Server.ConsumerKey)

	// The pages at a phone's width: nothing scrolls sideways.
	b.viewport(phoneWidth, phoneHeight, true)
	for _, path := range []string{"/portal/", "/portal/lti13", "/portal/registrations", "/portal/registrations/" + registrationID,
		"/portal/registrations/new", "/portal/lti11", "/portal/keys", "/portal/events"} {
		if status := b.visit(path); status != http.StatusOK {
			t.Fatalf("%s on a phone: %d", path, status)
		}
		b.wantNoSideScroll()
		switch path {
		case "/portal/":
			b.screenshot("overview-phone")
		case "/portal/registrations/" + registrationID:
			b.screenshot("registration-phone")
		}
	}
	b.viewport(desktopWidth, desktopHeight, false)

	// Signing out ends the session: the cookie no longer opens a page,
	// and the way back leads to the vendor's returnUrl.
	b.visit("/portal/")
	b.wantPage(b.click(`form[action="/portal/sign-out"] button`), http.StatusOK, "You are signed out")
	b.screenshot("signed-out")
	if c := b.sessionCookie(); c != nil {
		t.Errorf("the browser keeps the cookie %s after signing out", c.Name)
	}
	if status, page, _ := portalRequest(t, http.MethodGet, tool+"/portal/", cookie, nil, nil); status != http.StatusUnauthorized ||
		!strings.Contains(page, "Your portal session has ended") {
		t.Errorf("the signed-out session's cookie on the home page: %d\n%s", status, page)
	}
	b.clickAndWait(`main a[rel="noreferrer"]`)
	if loc := b.location(); loc != vendorPage.URL || vendorPage.visits.Load() != 1 {
		t.Errorf("the way back led to %s (%d visits of the vendor's page), want %s", loc, vendorPage.visits.Load(), vendorPage.URL)
	}
	b.wantPage(b.visit("/portal/keys"), http.StatusUnauthorized, "Your portal session has ended")
	b.screenshot("session-ended")
	signedOut := vendor.waitEvents(workspaceID, url.Values{"type": {"portalLink.revoked"}}, "portalLink.revoked").Events[0]
	if signedOut.Actor.Type != "portal" || signedOut.Actor.LinkID != l.ID || signedOut.Target.ID != l.ID {
		t.Errorf("signing out is recorded as %+v", signedOut)
	}
}

// tourLTI13 sets up LTI 1.3 in the portal: the values an LMS asks for, a
// Dynamic Registration link the platform registers with, a registration
// by hand (refused first for a field to fix), a deployment added and
// removed, the launch health of an accepted launch and a refused one, and
// the deletion of the registration the link made. It returns the id of
// the registration made by hand.
func tourLTI13(t *testing.T, b *portalBrowser, p *platform, s *stack.Stack, workspaceID, clientID, deployment, exam string) string {
	tool := s.GatewayURL
	b.wantPage(b.click(`nav a[href="/portal/lti13"]`), http.StatusOK, "LTI 1.3 set-up")
	config, err := portalGRPC(t, s).GetLtiConfiguration(context.Background(), &workspacev1.GetLtiConfigurationRequest{WorkspaceId: workspaceID})
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string][2]string{
		"login-url":        {config.GetLti13LoginUrl(), tool + "/lti/v1p3/login"},
		"redirect-uri":     {config.GetLti13LaunchUrl(), tool + "/lti/v1p3/launch"},
		"target-link-uri":  {config.GetLti13LaunchUrl(), tool + "/lti/v1p3/launch"},
		"deep-linking-url": {config.GetLti13LaunchUrl(), tool + "/lti/v1p3/launch"},
		"jwks-url":         {config.GetLti13JwksUrl(), tool + "/lti/v1p3/jwks.json"},
		"domain":           {config.GetDomain(), "127.0.0.1"},
		"canvas-json-url":  {config.GetCanvasConfigurationUrl(), tool + "/lti/v1p3/workspaces/" + workspaceID + "/canvas.json"},
	} {
		if got := b.value(id); got != want[0] || got != want[1] {
			t.Errorf("%s shows %q; the LTI configuration says %q, the tool's URL is %q", id, got, want[0], want[1])
		}
	}
	// The copy button writes the value to the clipboard and says so.
	b.press(`button.copy[data-copy="login-url"]`)
	if said := b.waitText("#copy-status"); said != "Copied the Login URL." {
		t.Errorf("the copy button said %q", said)
	}
	var copied string
	b.eval("navigator.clipboard.readText()", &copied)
	if copied != config.GetLti13LoginUrl() {
		t.Errorf("the clipboard holds %q, want the login URL", copied)
	}

	// A Dynamic Registration link, which the platform registers with.
	b.wantPage(b.click(`form[action="/portal/lti13/registration-link"] button`), http.StatusOK, "LTI 1.3 set-up")
	link := b.value("registration-link")
	if !strings.HasPrefix(link, tool+"/lti/v1p3/register/") || !strings.Contains(b.text(".secret"), "It works once, until") {
		t.Fatalf("the Dynamic Registration link %q:\n%s", link, b.mainText())
	}
	b.screenshot("lti13")
	if status, page := openLink(t, s, link, p.OpenRegistration(dynregShape{})); status != http.StatusOK {
		t.Fatalf("the platform's registration with the portal's link: %d\n%s", status, page)
	}

	// A registration by hand: refused for a JWKS URL over http, the form
	// shown again with the field to fix, then accepted.
	b.wantPage(b.click(`nav a[href="/portal/registrations"]`), http.StatusOK, "LTI 1.3 registrations")
	if n := b.count("ul.cards > li"); n != 1 {
		t.Fatalf("%d registrations listed, want the one the link made", n)
	}
	b.wantPage(b.click(`main a[href="/portal/registrations/new"]`), http.StatusOK, "Register a platform by hand")
	b.fill("#issuer", p.Issuer)
	b.fill("#client-id", clientID)
	b.fill("#deployment-ids", deployment)
	b.fill("#login-url", p.URL+"/auth")
	b.fill("#jwks-url", "http://lms.example/jwks")
	b.wantPage(b.click(`form[action="/portal/registrations"] button`), http.StatusBadRequest, "Register a platform by hand")
	if problems := b.text(".refusal .problems"); !strings.HasPrefix(problems, "JWKS URL: ") || b.value("client-id") != clientID {
		t.Fatalf("the refusal names %q, the form keeps %q", problems, b.value("client-id"))
	}
	b.screenshot("registration-new")
	b.fill("#jwks-url", p.URL+"/jwks")
	b.wantPage(b.click(`form[action="/portal/registrations"] button`), http.StatusOK, "Registration of "+p.Issuer)
	b.wantNotice("The platform is registered.")
	path := strings.TrimPrefix(b.location(), tool)
	path, _, _ = strings.Cut(path, "?")
	registrationID := strings.TrimPrefix(path, "/portal/registrations/")

	// A deployment added, then removed after its confirmation.
	b.fill("#deployment", "dep-2")
	b.wantPage(b.click(`form[action$="/deployments"] button`), http.StatusOK, "Registration of "+p.Issuer)
	b.wantNotice("The deployment is added")
	if got := b.text("ul.deployments"); !strings.Contains(got, deployment) || !strings.Contains(got, "dep-2") {
		t.Fatalf("the deployments listed: %q", got)
	}
	b.wantPage(b.click(`a[href$="/deployments/remove?deployment=dep-2"]`), http.StatusOK, "Remove deployment dep-2?")
	b.wantPage(b.click("main form button.danger"), http.StatusOK, "Registration of "+p.Issuer)
	b.wantNotice("The deployment is removed")
	vendorReg := func() ltiRegistration {
		var reg ltiRegistration
		asRoot(t).on(s).get(registrationPath(workspaceID, registrationID)).ok(&reg)
		return reg
	}
	if reg := vendorReg(); reg.ClientID != clientID || !slices.Equal(reg.DeploymentIDs, []string{deployment}) || reg.JWKSURL != p.URL+"/jwks" {
		t.Fatalf("the registration made in the portal, over REST: %+v", reg)
	}

	// Launch health: a launch the platform makes through the registration
	// made by hand is accepted; one for a deployment it lacks is refused,
	// and the administrator reads why and the request's id.
	launches := lti13Launches{t: t, platform: p, clientID: clientID}
	lb := newLaunchBrowser(t)
	withExam := launchOverrides{Claims: map[string]any{customClaim: map[string]any{"exam_config_id": exam}}}
	if status, page := lb.post(launches.start(lb, withExam)); status != http.StatusOK {
		t.Fatalf("a launch through the registration made by hand: %d\n%s", status, page)
	}
	unknownDeployment := launchOverrides{Claims: map[string]any{
		customClaim: map[string]any{"exam_config_id": exam},
		"https://purl.imsglobal.org/spec/lti/claim/deployment_id": "dep-9",
	}}
	action, form := launches.start(lb, unknownDeployment)
	requestID := "portal-tour-refused-launch"
	if status, page := lb.postWith(action, form, http.Header{"X-Request-Id": {requestID}}); status != http.StatusUnauthorized {
		t.Fatalf("a launch for an unknown deployment: %d\n%s", status, page)
	}
	b.wantPage(b.visit(path), http.StatusOK, "Registration of "+p.Issuer)
	const launchWords = "the launch's deployment_id is not registered: add it to the registration"
	if b.count("#health + p time") != 1 {
		t.Errorf("no last accepted launch shown:\n%s", b.mainText())
	}
	if reason, id := b.text("ol.failures > li .reason"), b.text("ol.failures > li .request-id code"); reason != launchWords || id != requestID {
		t.Errorf("the refused launch is shown as %q, request %q; want %q, %q", reason, id, launchWords, requestID)
	}
	b.screenshot("registration")

	// The registration the link made is deleted, after its confirmation.
	b.wantPage(b.click(`nav a[href="/portal/registrations"]`), http.StatusOK, "LTI 1.3 registrations")
	if n := b.count("ul.cards > li"); n != 2 {
		t.Fatalf("%d registrations listed, want 2", n)
	}
	b.screenshot("registrations")
	var other string
	b.eval(fmt.Sprintf(`[...document.querySelectorAll("ul.cards h2 a")].map((a) => a.getAttribute("href")).find((h) => h !== %q)`, path), &other)
	b.wantPage(b.click(`a[href="`+other+`"]`), http.StatusOK, "Registration of "+p.Issuer)
	b.wantPage(b.click(`a[href="`+other+`/delete"]`), http.StatusOK, "Delete the registration of "+p.Issuer+"?")
	b.wantPage(b.click("main form button.danger"), http.StatusOK, "LTI 1.3 registrations")
	b.wantNotice("The registration is deleted")
	if regs := asRoot(t).on(s).registrations(workspaceID); len(regs) != 1 || regs[0].ID != registrationID {
		t.Fatalf("the registrations over REST after the deletion: %+v", regs)
	}
	return registrationID
}

// tourLTI11 reads the LTI 1.1 page and rotates the LTI pair with an hour's
// overlap: the new secret is shown once, and launches signed with either
// pair work during the overlap.
func tourLTI11(t *testing.T, b *portalBrowser, w createResult, exam string) {
	lti := w.AppKeys.LTI
	b.wantPage(b.click(`nav a[href="/portal/lti11"]`), http.StatusOK, "LTI 1.1")
	if config, launch, key := b.value("config-url"), b.value("launch-url"), b.value("consumer-key-"+lti.ConsumerKey); config != lti.ConfigurationURL ||
		launch != lti.LaunchURL || key != lti.ConsumerKey {
		t.Errorf("the LTI 1.1 page shows %q, %q, %q; want the create result's %q, %q, %q",
			config, launch, key, lti.ConfigurationURL, lti.LaunchURL, lti.ConsumerKey)
	}
	b.screenshot("lti11")

	b.wantPage(b.click(`a[href="/portal/keys/`+lti.ConsumerKey+`/rotate"]`), http.StatusOK, "Rotate the key pair lti?")
	b.press("#overlap-3600")
	b.wantPage(b.click("main form button.danger"), http.StatusOK, "The key pair lti is rotated")
	key, secret := b.value("app-key"), b.value("app-secret")
	if key == "" || key == lti.ConsumerKey || secret == "" {
		t.Fatalf("the rotated pair shows %q, %q", key, secret)
	}
	for _, pair := range [][2]string{{key, secret}, {lti.ConsumerKey, lti.SharedSecret}} {
		form := signLaunch(t, lti.LaunchURL, pair[0], pair[1], launchParams(exam))
		if status, page, _ := postLaunch(t, b.tool, form); status != http.StatusOK {
			t.Errorf("a launch signed with %s during the overlap: %d\n%s", pair[0], status, page)
		}
	}
	// The secret is shown once: no page shows it again.
	for _, path := range []string{"/portal/lti11", "/portal/keys"} {
		b.visit(path)
		var html string
		b.eval("document.documentElement.outerHTML", &html)
		if strings.Contains(html, secret) {
			t.Errorf("%s shows the new shared secret again", path)
		}
	}
}

// tourKeys rotates the server pair with an hour's overlap (both work over
// REST), then revokes the previous pair (refused from then on), each after
// its confirmation. It returns the vendor's client with the new pair.
func tourKeys(t *testing.T, b *portalBrowser, s *stack.Stack, w createResult) client {
	old := w.server(t).on(s)
	path := "/api/workspace/" + w.WorkspaceID
	serverKey := w.AppKeys.Server.ConsumerKey
	b.wantPage(b.click(`nav a[href="/portal/keys"]`), http.StatusOK, "Key pairs")
	b.wantPage(b.click(`a[href="/portal/keys/`+serverKey+`/rotate"]`), http.StatusOK, "Rotate the key pair server?")
	b.press("#overlap-3600")
	b.screenshot("key-rotate")
	b.wantPage(b.click("main form button.danger"), http.StatusOK, "The key pair server is rotated")
	b.screenshot("key-rotated")
	vendor := as(t, b.value("app-key"), b.value("app-secret")).on(s)
	vendor.get(path).ok(nil)
	old.get(path).ok(nil)

	b.wantPage(b.click(`main a[href="/portal/keys"]`), http.StatusOK, "Key pairs")
	b.screenshot("keys")
	b.wantPage(b.click(`a[href="/portal/keys/`+serverKey+`/revoke"]`), http.StatusOK, "Revoke the key pair server?")
	b.wantPage(b.click("main form button.danger"), http.StatusOK, "Key pairs")
	b.wantNotice("The key pair is revoked")
	waitUnauthenticated(t, old, path)
	vendor.get(path).ok(nil)
	return vendor
}

// tourEvents reads the audit trail: its first page full, the next one
// with the portal's changes, by the portal and the link.
func tourEvents(t *testing.T, b *portalBrowser, vendor client, workspaceID, linkID, oldServerKey string) {
	vendor.waitEventsPrefix(workspaceID, url.Values{"type": {"keyPair.revoked"}}, "keyPair.revoked")
	b.wantPage(b.click(`nav a[href="/portal/events"]`), http.StatusOK, "Audit trail")
	if first := b.shownEvents(); len(first) != 50 || first[0].Type != "workspace.created" {
		t.Fatalf("the audit trail's first page: %d events, first %+v", len(first), first[:min(1, len(first))])
	}
	b.wantPage(b.click(`nav.pages a[href^="/portal/events?pageToken="]`), http.StatusOK, "Audit trail")
	if b.count(`nav.pages a[href="/portal/events"]`) != 1 {
		t.Errorf("the second page has no way to the first")
	}
	byPortal := "Administrator's portal (link " + linkID + ")"
	by := map[string][]string{}
	for _, e := range b.shownEvents() {
		by[e.Type] = append(by[e.Type], e.By)
	}
	for typ, want := range map[string]string{
		"portalLink.created":          "Key pair " + oldServerKey + " of workspace " + workspaceID,
		"portalLink.opened":           byPortal,
		"ltiRegistrationLink.created": byPortal,
		"ltiRegistration.created":     byPortal,
		"ltiRegistration.deleted":     byPortal,
		"keyPair.rotated":             byPortal,
		"keyPair.revoked":             byPortal,
	} {
		if len(by[typ]) == 0 || slices.ContainsFunc(by[typ], func(got string) bool { return got != want }) {
			t.Errorf("%s is shown by %q, want %q", typ, by[typ], want)
		}
	}
	b.screenshot("events")
}

// portalRequest sends a request to the portal as a client other than the
// browser, with the session's cookie (nil for none), a form (nil for
// none) and headers; it follows no redirect.
func portalRequest(t *testing.T, method, target string, cookie *http.Cookie, form url.Values, header http.Header) (int, string, http.Header) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, target, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for name, values := range header {
		req.Header[name] = values
	}
	if cookie != nil {
		req.AddCookie(&http.Cookie{Name: cookie.Name, Value: cookie.Value})
	}
	c := &http.Client{Timeout: 30 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	page, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(page), resp.Header
}

// portalRefusals are the ways a browser is kept out: an expired link, a
// used one, a form without its CSRF token or from another site, another
// workspace's session, a revoked session, a deleted workspace.
func portalRefusals(t *testing.T, s *stack.Stack) {
	tool := s.GatewayURL
	root := asRoot(t).on(s)
	a := root.create("riverside-district", map[string]any{"name": "Riverside District"})
	other := root.create("lakeside-district", map[string]any{"name": "Lakeside District"})
	vendorA, vendorB := a.server(t).on(s), other.server(t).on(s)
	regA := vendorA.register(a.WorkspaceID, canvasRegistration(clientID(t, "canvas"), "1:abc"))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	b := newPortalBrowser(t, ctx, tool, "")

	t.Run("an expired link", func(t *testing.T) {
		b.t = t
		l := vendorA.newPortalLink(a.WorkspaceID, nil)
		expireLink(t, s, l)
		b.wantPage(b.openLink(l), http.StatusUnauthorized, "This link cannot open the portal")
		if advice := b.mainText(); !strings.Contains(advice, "Ask your vendor for a new link") {
			t.Errorf("the refusal of an expired link says:\n%s", advice)
		}
		if c := b.sessionCookie(); c != nil {
			t.Errorf("an expired link set the cookie %s", c.Name)
		}
	})

	t.Run("a used link", func(t *testing.T) {
		b.t = t
		l := vendorA.newPortalLink(a.WorkspaceID, nil)
		b.wantPage(b.openLink(l), http.StatusOK, "Administrator's portal")
		b.wantPage(b.openLink(l), http.StatusUnauthorized, "This link cannot open the portal")
		// The session it started stands.
		b.wantPage(b.visit("/portal/"), http.StatusOK, "Administrator's portal")
	})

	t.Run("a form without its CSRF token", func(t *testing.T) {
		b.t = t
		b.wantPage(b.visit("/portal/keys"), http.StatusOK, "Key pairs")
		cookie, csrf := b.sessionCookie(), b.csrf()
		revoke := tool + "/portal/keys/" + a.AppKeys.Server.ConsumerKey + "/revoke"
		sameOrigin := http.Header{"Sec-Fetch-Site": {"same-origin"}, "Origin": {tool}}
		for name, form := range map[string]url.Values{"no token": {}, "another token": {"csrf": {"bm90LXRoZS10b2tlbg"}}} {
			if status, page, _ := portalRequest(t, http.MethodPost, revoke, cookie, form, sameOrigin); status != http.StatusForbidden ||
				!strings.Contains(page, "This form cannot be accepted") {
				t.Errorf("a revocation with %s: %d\n%s", name, status, page)
			}
		}
		if status, _, _ := portalRequest(t, http.MethodPost, tool+"/portal/sign-out", cookie, url.Values{}, sameOrigin); status != http.StatusForbidden {
			t.Errorf("signing out without the token: %d", status)
		}
		// With its token, the same client's form is taken: the refusals
		// were the token's.
		status, page, _ := portalRequest(t, http.MethodPost, tool+"/portal/lti13/registration-link", cookie, url.Values{"csrf": {csrf}}, sameOrigin)
		if status != http.StatusOK || !strings.Contains(page, "/lti/v1p3/register/") {
			t.Fatalf("a form with its token: %d\n%s", status, page)
		}
		vendorA.get("/api/workspace/" + a.WorkspaceID).ok(nil)
		b.wantPage(b.visit("/portal/keys"), http.StatusOK, "Key pairs")
	})

	t.Run("a form from another site", func(t *testing.T) {
		b.t = t
		b.visit("/portal/keys")
		cookie, csrf := b.sessionCookie(), b.csrf()
		revoke := tool + "/portal/keys/" + a.AppKeys.Server.ConsumerKey + "/revoke"
		if status, _, _ := portalRequest(t, http.MethodPost, revoke, cookie, url.Values{"csrf": {csrf}},
			http.Header{"Origin": {"https://attacker.example"}}); status != http.StatusForbidden {
			t.Errorf("a post with the Origin of another site: %d", status)
		}
		// A page of another origin on the same host (so the browser sends
		// the SameSite=Lax cookie along) posts the revocation, even
		// knowing the token.
		attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = fmt.Fprintf(w, `<!doctype html><html lang="en"><title>Win a prize</title><form method="post" action="%s">`+
				`<input type="hidden" name="csrf" value="%s"><button>Claim</button></form></html>`, revoke, csrf)
		}))
		defer attacker.Close()
		if err := b.page.Navigate(ctx, attacker.URL); err != nil {
			t.Fatal(err)
		}
		b.logSeen = len(b.page.Log())
		b.wantPage(b.click("button"), http.StatusForbidden, "This form cannot be accepted")
		vendorA.get("/api/workspace/" + a.WorkspaceID).ok(nil)
	})

	t.Run("another workspace's link", func(t *testing.T) {
		b.t = t
		l := vendorB.newPortalLink(other.WorkspaceID, nil)
		b.wantPage(b.openLink(l), http.StatusOK, "Administrator's portal")
		for _, path := range []string{"/portal/", "/portal/registrations", "/portal/keys", "/portal/events"} {
			b.visit(path)
			var html string
			b.eval("document.documentElement.outerHTML", &html)
			if !strings.Contains(html, "Lakeside District") || strings.Contains(html, a.WorkspaceID) || strings.Contains(html, "Riverside") ||
				strings.Contains(html, regA.ClientID) || strings.Contains(html, a.AppKeys.Server.ConsumerKey) {
				t.Errorf("%s in the other workspace's session shows the first's:\n%s", path, b.mainText())
			}
		}
		b.wantPage(b.visit("/portal/registrations/"+regA.ID), http.StatusNotFound, "That did not work")
		b.wantPage(b.visit("/portal/keys/"+a.AppKeys.Server.ConsumerKey+"/rotate"), http.StatusNotFound, "That did not work")
	})

	t.Run("a revoked session", func(t *testing.T) {
		b.t = t
		l := vendorB.newPortalLink(other.WorkspaceID, nil)
		b.wantPage(b.openLink(l), http.StatusOK, "Administrator's portal")
		vendorB.revokePortalLink(other.WorkspaceID, l.ID)
		b.wantPage(b.visit("/portal/lti13"), http.StatusUnauthorized, "Your portal session has ended")
		if c := b.sessionCookie(); c != nil {
			t.Errorf("the browser keeps the cookie of a revoked session")
		}
	})

	t.Run("a deleted workspace", func(t *testing.T) {
		b.t = t
		l := vendorA.newPortalLink(a.WorkspaceID, nil)
		b.wantPage(b.openLink(l), http.StatusOK, "Administrator's portal")
		root.delete("/api/workspace/" + a.WorkspaceID).ok(nil)
		b.wantPage(b.visit("/portal/registrations"), http.StatusUnauthorized, "Your portal session has ended")
	})
}

// expireLink makes the link's 5 minutes pass as far as the store can
// tell: the key its secret leads to is written with the link's expiry
// (checked here), and Redis drops it then; the test shortens it to a
// millisecond and waits for Redis to drop it.
func expireLink(t *testing.T, s *stack.Stack, l portalLink) {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: s.RedisAddr})
	defer rdb.Close()
	ctx := context.Background()
	sum := sha256.Sum256([]byte(l.secret(t)))
	key := "portal:open:" + hex.EncodeToString(sum[:])
	if ttl, err := rdb.PTTL(ctx, key).Result(); err != nil || ttl < 4*time.Minute || ttl > 5*time.Minute {
		t.Fatalf("the link's key %s expires in %v (%v), want the link's 5 minutes", key, ttl, err)
	}
	if err := rdb.PExpire(ctx, key, time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 10*time.Second, func() error {
		if n, err := rdb.Exists(ctx, key).Result(); err != nil || n != 0 {
			return fmt.Errorf("the key is still there (%v)", err)
		}
		return nil
	}, "Redis drops the expired link's key")
}
