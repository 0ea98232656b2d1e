// Package browser drives the machine's headless Chromium for tests: start a
// browser (with host names mapped, a test certificate trusted, and cookie
// settings: Options), open pages, find the frames and tabs they open, wait
// for elements, click them, read their text and attributes and evaluate
// JavaScript, read the cookies a page holds.
//
// It speaks the Chrome DevTools Protocol through chromedp, over a pipe to a
// Chromium process it starts itself (/usr/bin/chromium, Debian's package),
// with flags that keep the browser off the network apart from the pages a
// test opens, and a throw-away profile.
package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// ChromiumPath is where Debian's chromium package installs the browser.
const ChromiumPath = "/usr/bin/chromium"

// ErrNotInstalled is returned (wrapped) by EnsureInstalled and Start when
// Chromium is missing.
var ErrNotInstalled = errors.New(`chromium is not installed: run "make test-deps" (Debian: apt-get install chromium)`)

// EnsureInstalled reports ErrNotInstalled when /usr/bin/chromium is missing
// or not executable.
func EnsureInstalled() error {
	fi, err := os.Stat(ChromiumPath)
	if err != nil || fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		return ErrNotInstalled
	}
	return nil
}

// Browser is one headless Chromium process with its own temporary profile.
type Browser struct {
	ctx         context.Context // the chromedp browser context
	cancel      context.CancelFunc
	allocCancel context.CancelFunc
	dataDir     string
	closeOnce   sync.Once
	closeErr    error
}

// Options change how Start runs Chromium; the zero value is a plain
// headless browser.
type Options struct {
	// HostResolverRules maps host names to addresses, in the syntax of
	// Chromium's --host-resolver-rules ("MAP tool.test 127.0.0.1, MAP
	// platform.test 127.0.0.1"): two sites on one machine.
	HostResolverRules string
	// TrustedSPKIs are certificates the browser accepts without a
	// certificate authority, each the base64 SHA-256 of its
	// SubjectPublicKeyInfo (--ignore-certificate-errors-spki-list): a
	// test's own certificate.
	TrustedSPKIs []string
	// BlockThirdPartyCookies turns on Chromium's third-party-cookie
	// phase-out (--test-third-party-cookie-phaseout): a frame of another
	// site than the tab's gets no unpartitioned cookies; Partitioned
	// (CHIPS) cookies still work. (Debian's Chromium 156 blocks them so
	// by default as well.)
	BlockThirdPartyCookies bool
	// AllowThirdPartyCookies lets frames of other sites have their
	// cookies, as the "Allow third-party cookies" setting does (the
	// profile's cookie_controls_mode 0).
	AllowThirdPartyCookies bool
	// BlockFramedCookies blocks every cookie, Partitioned ones too, of a
	// site in frames under another: each pair is {site, top-level site}
	// as Chromium's content-setting patterns ("[*.]tool.test",
	// "[*.]platform.test"), the exception a user makes when blocking a
	// site's cookies. The site keeps its cookies as the tab's own page.
	BlockFramedCookies [][2]string
}

// Start launches Chromium with the default Options.
func Start(ctx context.Context) (*Browser, error) {
	return StartWith(ctx, Options{})
}

// StartWith launches Chromium as o says. ctx bounds the start only; the
// browser runs until Close.
func StartWith(ctx context.Context, o Options) (*Browser, error) {
	if err := EnsureInstalled(); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "chromium-profile-")
	if err != nil {
		return nil, fmt.Errorf("browser: profile directory: %w", err)
	}
	if err := o.writePreferences(dir); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	opts := append(o.flags(),
		chromedp.ExecPath(ChromiumPath),
		chromedp.Headless,
		chromedp.NoSandbox, // needed as root, harmless otherwise for local pages
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(dir),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("metrics-recording-only", true),
		chromedp.Flag("no-pings", true),
		chromedp.Flag("mute-audio", true),
	)
	// The browser's life is bound to the context of its first action, so
	// it must not be ctx, which may carry a deadline.
	allocCtx, allocCancel := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, cancel := chromedp.NewContext(allocCtx)
	b := &Browser{ctx: bctx, cancel: cancel, allocCancel: allocCancel, dataDir: dir}

	started := make(chan error, 1)
	go func() { started <- chromedp.Do(bctx) }()
	select {
	case err = <-started:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		_ = b.Close()
		return nil, fmt.Errorf("browser: starting %s: %w", ChromiumPath, err)
	}
	return b, nil
}

// flags are the Chromium flags of o.
func (o Options) flags() []chromedp.ExecAllocatorOption {
	var flags []chromedp.ExecAllocatorOption
	if o.HostResolverRules != "" {
		flags = append(flags, chromedp.Flag("host-resolver-rules", o.HostResolverRules))
	}
	if len(o.TrustedSPKIs) > 0 {
		flags = append(flags, chromedp.Flag("ignore-certificate-errors-spki-list", strings.Join(o.TrustedSPKIs, ",")))
	}
	if o.BlockThirdPartyCookies {
		flags = append(flags, chromedp.Flag("test-third-party-cookie-phaseout", true))
	}
	return flags
}

// writePreferences writes the cookie settings of o into the new profile
// in dir, as Chromium keeps a user's settings (Default/Preferences).
func (o Options) writePreferences(dir string) error {
	if !o.AllowThirdPartyCookies && len(o.BlockFramedCookies) == 0 {
		return nil
	}
	profile := map[string]any{}
	if o.AllowThirdPartyCookies {
		profile["cookie_controls_mode"] = 0
		profile["block_third_party_cookies"] = false
	}
	if len(o.BlockFramedCookies) > 0 {
		blocked := map[string]any{}
		for _, p := range o.BlockFramedCookies {
			blocked[p[0]+","+p[1]] = map[string]int{"setting": 2} // CONTENT_SETTING_BLOCK
		}
		profile["content_settings"] = map[string]any{"exceptions": map[string]any{"cookies": blocked}}
	}
	prefs, err := json.Marshal(map[string]any{"profile": profile})
	if err == nil {
		err = os.MkdirAll(filepath.Join(dir, "Default"), 0o700)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "Default", "Preferences"), prefs, 0o600)
	}
	if err != nil {
		return fmt.Errorf("browser: profile preferences: %w", err)
	}
	return nil
}

// Tab waits until the browser has a tab (one a page opened, such as a
// target="_blank" link's) whose URL starts with urlPrefix, and returns it.
// The wait ends with ctx.
func (b *Browser) Tab(ctx context.Context, urlPrefix string) (*Page, error) {
	return attach(ctx, b.ctx, "page", urlPrefix)
}

// AllowClipboardRead lets the pages of origin read the clipboard, as a user
// who granted them the permission: a test reads back what a copy button
// wrote. Writing needs no permission, only a user's click.
func (b *Browser) AllowClipboardRead(ctx context.Context, origin string) error {
	c, cancel := context.WithCancel(b.ctx)
	stop := context.AfterFunc(ctx, cancel)
	defer func() { stop(); cancel() }()
	_, err := chromedp.CallBrowser(c, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
		Permission: &cdpbrowser.PermissionDescriptor{Name: "clipboard-read"},
		Setting:    cdpbrowser.PermissionSettingGranted,
		Origin:     origin,
	})
	return wrap(ctx, err)
}

// attach waits until parent's browser has a target of the type whose URL
// starts with urlPrefix, and attaches a Page to it.
func attach(ctx, parent context.Context, kind, urlPrefix string) (*Page, error) {
	tick := time.NewTicker(20 * time.Millisecond) // polling the target list
	defer tick.Stop()
	for {
		targets, err := chromedp.Targets(parent)
		if err != nil {
			return nil, fmt.Errorf("browser: listing targets: %w", err)
		}
		for _, t := range targets {
			if t.Type == kind && strings.HasPrefix(t.URL, urlPrefix) {
				tctx, cancel := chromedp.NewContext(parent, chromedp.WithTargetID(t.TargetID))
				p := &Page{ctx: tctx, cancel: cancel}
				if err := chromedp.Listen(tctx, p.record); err != nil {
					cancel()
					return nil, fmt.Errorf("browser: attaching to %s: %w", t.URL, err)
				}
				return p, nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("browser: no %s at %s: %w", kind, urlPrefix, ctx.Err())
		case <-tick.C:
		}
	}
}

// Click clicks the first element matching the CSS selector, waiting for
// it to exist, as a user's click: what it starts (a link's new window)
// is not held back as a script's would be.
func (p *Page) Click(ctx context.Context, selector string) error {
	sel, err := json.Marshal(selector)
	if err != nil {
		return err
	}
	if err := p.do(ctx, chromedp.WaitReady(chromedp.CSS(selector))); err != nil {
		return err
	}
	gesture := func(e *runtime.EvaluateParams) { e.UserGesture = new(true) }
	_, err = run(ctx, p, chromedp.Evaluate[bool]("document.querySelector("+string(sel)+").click(), true", gesture))
	return err
}

// Close stops the browser and removes its profile. It is safe to call more
// than once.
func (b *Browser) Close() error {
	b.closeOnce.Do(func() {
		b.cancel()      // closes the first tab and stops the browser
		b.allocCancel() // waits for the process to exit
		b.closeErr = os.RemoveAll(b.dataDir)
	})
	return b.closeErr
}

// Page is one tab.
type Page struct {
	ctx    context.Context // the chromedp tab context
	cancel context.CancelFunc

	mu  sync.Mutex
	log []string
}

// Open opens url in a new tab and waits for its load event. The tab records
// console messages, the browser's log and uncaught exceptions (see Log).
func (b *Browser) Open(ctx context.Context, url string) (*Page, error) {
	tctx, cancel := chromedp.NewContext(b.ctx)
	p := &Page{ctx: tctx, cancel: cancel}
	// Listen attaches the tab; that must happen on tctx itself, not on a
	// context bounded by ctx, so ctx only limits the wait.
	if err := chromedp.Listen(tctx, p.record); err != nil {
		cancel()
		return nil, fmt.Errorf("browser: opening a tab: %w", err)
	}
	if err := p.do(ctx, chromedp.Navigate(url)); err != nil {
		p.Close()
		return nil, fmt.Errorf("browser: opening %s: %w", url, err)
	}
	return p, nil
}

// Frame waits until the tab holds an iframe of another site whose URL
// starts with urlPrefix, and returns it as a Page: Chromium runs such a
// frame in a process of its own, where the tab's queries do not reach. The
// wait ends with ctx.
func (p *Page) Frame(ctx context.Context, urlPrefix string) (*Page, error) {
	return attach(ctx, p.ctx, "iframe", urlPrefix)
}

// record keeps console output, the browser's log entries and exceptions;
// it runs in chromedp's event loop, so it only appends.
func (p *Page) record(ev any) {
	var line string
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		parts := make([]string, 0, len(ev.Args))
		for _, a := range ev.Args {
			switch {
			case len(a.Value) > 0:
				parts = append(parts, string(a.Value))
			case a.Description != "":
				parts = append(parts, a.Description)
			default:
				parts = append(parts, string(a.Type))
			}
		}
		line = "console." + string(ev.Type) + ": " + strings.Join(parts, " ")
	case *log.EventEntryAdded:
		// The browser's own messages: a Content-Security-Policy
		// violation (source "security"), a resource that failed.
		line = "log." + string(ev.Entry.Level) + " " + string(ev.Entry.Source) + ": " + ev.Entry.Text
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		line = "exception: " + d.Text
		if d.Exception != nil && d.Exception.Description != "" {
			line += " " + d.Exception.Description
		}
	default:
		return
	}
	p.mu.Lock()
	p.log = append(p.log, line)
	p.mu.Unlock()
}

// Log returns the console messages, the browser's log entries (such as
// Content-Security-Policy violations, as "log.error security: …") and
// uncaught exceptions seen so far, one per line.
func (p *Page) Log() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.log...)
}

// scoped returns a context of the tab that ends when ctx does, so a caller's
// deadline limits one action without closing the tab.
func (p *Page) scoped(ctx context.Context) (context.Context, func()) {
	c, cancel := context.WithCancel(p.ctx)
	stop := context.AfterFunc(ctx, cancel)
	return c, func() { stop(); cancel() }
}

// wrap prefers the caller's context error, which says why an action stopped.
func wrap(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("%w (%v)", ctx.Err(), err)
	}
	return err
}

func (p *Page) do(ctx context.Context, actions ...chromedp.Action[chromedp.Void]) error {
	c, done := p.scoped(ctx)
	defer done()
	return wrap(ctx, chromedp.Do(c, actions...))
}

func run[T any](ctx context.Context, p *Page, a chromedp.Action[T]) (T, error) {
	c, done := p.scoped(ctx)
	defer done()
	v, err := chromedp.Run(c, a)
	return v, wrap(ctx, err)
}

// Text returns the textContent of the first element matching the CSS
// selector, waiting for it to exist.
func (p *Page) Text(ctx context.Context, selector string) (string, error) {
	return run(ctx, p, chromedp.TextContent(chromedp.CSS(selector)))
}

// Attribute returns an attribute of the first element matching the CSS
// selector, waiting for the element to exist; ok is false when the element
// lacks the attribute.
func (p *Page) Attribute(ctx context.Context, selector, name string) (value string, ok bool, err error) {
	r, err := run(ctx, p, chromedp.AttributeValue(chromedp.CSS(selector), name))
	return r.Value, r.Exists, err
}

// Count returns how many elements match the CSS selector now, without
// waiting.
func (p *Page) Count(ctx context.Context, selector string) (int, error) {
	sel, err := json.Marshal(selector)
	if err != nil {
		return 0, err
	}
	var n int
	err = p.Evaluate(ctx, "document.querySelectorAll("+string(sel)+").length", &n)
	return n, err
}

// Evaluate runs a JavaScript expression in the page, waits for it when it is
// a Promise, and decodes its JSON value into out (which may be nil). A thrown
// exception or a rejected promise is an error.
func (p *Page) Evaluate(ctx context.Context, expression string, out any) error {
	raw, err := run(ctx, p, chromedp.Evaluate[[]byte](expression, chromedp.EvalAwaitPromise))
	if err != nil {
		return err
	}
	if out == nil || len(raw) == 0 {
		return nil
	}
	return json.Unmarshal(raw, out)
}

// Instances calls fn, a JavaScript function of one argument, on each live
// object whose prototype is the value of the expression prototype, and
// decodes the array of its results into out. It reaches what a page keeps in
// closures, out of reach of its globals and its DOM (Runtime.queryObjects,
// which collects garbage first).
func (p *Page) Instances(ctx context.Context, prototype, fn string, out any) error {
	c, done := p.scoped(ctx)
	defer done()
	const group = "browser.Instances"
	defer func() {
		_, _ = chromedp.Call(c, runtime.ReleaseObjectGroup, runtime.ReleaseObjectGroupParams{ObjectGroup: group})
	}()
	proto, err := chromedp.Run(c, chromedp.Evaluate[*runtime.RemoteObject](prototype, chromedp.EvalObjectGroup(group)))
	if err != nil {
		return wrap(ctx, err)
	}
	if proto.ObjectID == "" {
		return fmt.Errorf("browser: %s is not an object", prototype)
	}
	found, err := chromedp.Call(c, runtime.QueryObjects, runtime.QueryObjectsParams{PrototypeObjectID: proto.ObjectID, ObjectGroup: group})
	if err != nil {
		return wrap(ctx, err)
	}
	raw, err := chromedp.Run(c, chromedp.CallFunctionOn[[]byte]("function () { return this.map("+fn+"); }",
		func(cp *runtime.CallFunctionOnParams) { cp.ObjectID = found.Objects.ObjectID }))
	if err != nil {
		return wrap(ctx, err)
	}
	return json.Unmarshal(raw, out)
}

// Navigate loads url in the tab and waits for its load event.
func (p *Page) Navigate(ctx context.Context, url string) error {
	return p.do(ctx, chromedp.Navigate(url))
}

// Location returns the URL the tab shows now.
func (p *Page) Location(ctx context.Context) (string, error) {
	return run(ctx, p, chromedp.Location())
}

// Fill replaces the value of the first form field matching the CSS
// selector, waiting for it to be visible, by typing value as a user would.
func (p *Page) Fill(ctx context.Context, selector, value string) error {
	sel, err := json.Marshal(selector)
	if err != nil {
		return err
	}
	if err := p.do(ctx, chromedp.WaitVisible(chromedp.CSS(selector))); err != nil {
		return err
	}
	if _, err := run(ctx, p, chromedp.Evaluate[bool]("document.querySelector("+string(sel)+").value = '', true")); err != nil {
		return err
	}
	return p.do(ctx, chromedp.SendKeys(chromedp.CSS(selector), value))
}

// Viewport sets the size of the tab's window in CSS pixels; mobile
// emulates a phone (its touch, its viewport meta tag honoured).
func (p *Page) Viewport(ctx context.Context, width, height int64, mobile bool) error {
	var opts []chromedp.EmulateViewportOption
	if mobile {
		opts = append(opts, chromedp.EmulateMobile, chromedp.EmulateTouch, chromedp.EmulatePortrait)
	}
	return p.do(ctx, chromedp.EmulateViewport(width, height, opts...))
}

// Screenshot returns a PNG of the whole page as the window's width lays
// it out, from its top to its end.
func (p *Page) Screenshot(ctx context.Context) ([]byte, error) {
	return run(ctx, p, chromedp.FullScreenshot(100))
}

// Cookies returns the cookies the browser holds for target (a URL), as it
// would send them there: HttpOnly ones too, which the page's scripts
// cannot read, with their attributes.
func (p *Page) Cookies(ctx context.Context, target string) ([]*http.Cookie, error) {
	c, done := p.scoped(ctx)
	defer done()
	got, err := chromedp.Call(c, network.GetCookies, network.GetCookiesParams{URLs: []string{target}})
	if err != nil {
		return nil, wrap(ctx, err)
	}
	sameSite := map[network.CookieSameSite]http.SameSite{
		network.CookieSameSiteLax: http.SameSiteLaxMode, network.CookieSameSiteStrict: http.SameSiteStrictMode,
		network.CookieSameSiteNone: http.SameSiteNoneMode,
	}
	cookies := make([]*http.Cookie, 0, len(got.Cookies))
	for _, k := range got.Cookies {
		h := &http.Cookie{
			Name: k.Name, Value: k.Value, Domain: k.Domain, Path: k.Path,
			HttpOnly: k.HTTPOnly, Secure: k.Secure, SameSite: sameSite[k.SameSite],
		}
		if !k.Session {
			h.Expires = time.Unix(0, int64(k.Expires*float64(time.Second)))
		}
		cookies = append(cookies, h)
	}
	return cookies, nil
}

// Close closes the tab.
func (p *Page) Close() {
	p.cancel()
}
