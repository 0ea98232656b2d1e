package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/deploy/local/browser"
	"github.com/liveproctor/workspaces/deploy/local/stack"
)

// Launches without third-party cookies, in a real headless Chromium: the
// platform (tools/lti-platform) and the tool (the gateway) are two sites,
// https://platform.test:P and https://tool.test:P, both on loopback behind
// one TLS front with the test's own certificate. The platform's course
// page frames the tool's login; the whole launch runs in that frame, and
// LiveProctor opens there for the user (or, with no way to keep the state
// in the frame, in the new window it offers).
func TestLTI13LaunchWithoutThirdPartyCookies(t *testing.T) {
	e := startStorageEnv(t)
	t.Run("launches in the frame", e.framedLaunches)
	t.Run("no cookies in the frame: a new window", e.newWindowLaunch)
	t.Run("storage answers that stop the launch", e.refusedStorage)
}

// The exam every launch of these tests is for.
const storageExam = "9b2e5a3c-4f1d-4e8a-b6c7-0d1e2f3a4b5c"

// What a browser may keep for the tool's frame: its unpartitioned
// (third-party) cookies blocked, as Chromium's phase-out switch has it,
// or allowed; or no cookies at all in frames under the platform, as a
// user's per-site block has it.
var (
	thirdPartyBlocked = browser.Options{BlockThirdPartyCookies: true}
	thirdPartyAllowed = browser.Options{AllowThirdPartyCookies: true}
	noFramedCookies   = browser.Options{BlockFramedCookies: [][2]string{{"[*.]tool.test", "[*.]platform.test"}}}
)

// storageEnv is a stack and a platform on two sites, and a workspace that
// registered the platform.
type storageEnv struct {
	front                     *twoSites
	p                         *platform
	tool, platformSite, relay string
	client, workspaceID       string
}

// startStorageEnv starts the stack, the platform and the TLS front, and
// registers the platform with a new workspace.
func startStorageEnv(t *testing.T) *storageEnv {
	t.Helper()
	front := listenTwoSites(t)
	e := &storageEnv{front: front, tool: front.url("tool.test"), platformSite: front.url("platform.test"), relay: front.url("relay.test")}
	e.p = startPlatform(t, platformOptions{Issuer: e.platformSite})
	pu, err := url.Parse(e.p.URL)
	if err != nil {
		t.Fatal(err)
	}
	s := startStorageStack(t, e.tool, pu.Host+",platform.test:"+front.port)
	front.serve(t, map[string]string{"tool.test": s.GatewayURL, "platform.test": e.p.URL, "relay.test": e.p.URL})
	e.client = clientID(t, "a")
	e.p.SetClients(e.tool, []platformClient{{ClientID: e.client, DeploymentIDs: []string{"dep-1"}}})
	w := asRoot(t).on(s).create(unique(t, "school"), nil)
	w.server(t).on(s).register(w.WorkspaceID, map[string]any{
		"issuer": e.platformSite, "clientId": e.client, "deploymentIds": []string{"dep-1"},
		"authLoginUrl": e.platformSite + "/auth", "jwksUrl": e.p.URL + "/jwks",
	})
	e.workspaceID = w.WorkspaceID
	return e
}

// course is the platform's course page with the query extra.
func (e *storageEnv) course(extra url.Values) string {
	q := url.Values{"client_id": {e.client}, "lti_deployment_id": {"dep-1"}}
	for k, v := range extra {
		q[k] = v
	}
	return e.platformSite + "/course?" + q.Encode()
}

// launched is what a launch shows.
func (e *storageEnv) launched() map[string]string {
	return map[string]string{"email": "ada@school.example", "examConfigId": storageExam, "workspaceId": e.workspaceID}
}

// With platform storage the launch completes in the frame whatever the
// browser keeps, through the storage; without it, on the Partitioned
// cookie; and a platform that named no storage but has some (it answers
// lti.capabilities) gets it used when the frame keeps no cookie.
func (e *storageEnv) framedLaunches(t *testing.T) {
	storage := url.Values{"lti_storage_target": {"_parent"}}
	for _, c := range []struct {
		name    string
		options browser.Options
		course  url.Values
		// unpartitioned: the frame has the tool's unpartitioned cookies;
		// cookies: the frame keeps cookies at all
		unpartitioned, cookies bool
		// stored: the launch went through the platform's storage
		stored bool
	}{
		{"storage, third-party cookies blocked", thirdPartyBlocked, storage, false, true, true},
		{"storage, third-party cookies allowed", thirdPartyAllowed, storage, true, true, true},
		{"storage, no cookies in the frame", noFramedCookies, storage, false, false, true},
		{"no storage named, no cookies, the platform offers storage", noFramedCookies, nil, false, false, true},
		{"no storage, third-party cookies blocked: the Partitioned cookie", thirdPartyBlocked, url.Values{"storage": {"none"}}, false, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := e.p.withT(t)
			p.Next(launchOverrides{Claims: map[string]any{customClaim: map[string]any{"exam_config_id": storageExam}}})
			_, page, ctx := openCourse(t, e.front, c.options, e.course(c.course))
			frame := attachFrame(t, ctx, page, e.tool+"/lti/v1p3/launch", p)
			showsLaunch(t, ctx, frame, p, e.launched())
			checkCookies(t, ctx, frame, c.unpartitioned, c.cookies)
			var log string
			if err := page.Evaluate(ctx, "document.getElementById('storage-log').textContent", &log); err != nil {
				t.Fatal(err)
			}
			used := strings.Contains(log, "lti.put_data state_") && strings.Contains(log, "lti.get_data state_") &&
				strings.Contains(log, "lti.put_data nonce_") && strings.Contains(log, "lti.get_data nonce_")
			if used != c.stored {
				t.Fatalf("the platform's storage log:\n%s\nwant the state and nonce stored and read back: %v", log, c.stored)
			}
		})
	}
}

// With no storage and no cookies in the frame, the frame offers a new
// window; the launch completes there, where the tool is the first party.
// A platform that names a storage that never answers gets the same, once
// its login has started again without it (and without asking for
// storage again).
func (e *storageEnv) newWindowLaunch(t *testing.T) {
	for _, c := range []struct {
		name   string
		course url.Values
	}{
		{"no storage", url.Values{"storage": {"none"}}},
		{"a storage that does not answer", url.Values{"lti_storage_target": {"_parent"}, "storage": {"none"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := e.p.withT(t)
			p.Next(launchOverrides{Claims: map[string]any{customClaim: map[string]any{"exam_config_id": storageExam}}})
			b, page, ctx := openCourse(t, e.front, noFramedCookies, e.course(c.course))
			frame := attachFrame(t, ctx, page, e.tool+"/lti/v1p3/login", p)
			checkCookies(t, ctx, frame, false, false)
			if err := waitVisible(ctx, frame, "new-window"); err != nil {
				t.Fatalf("%v\n%s", err, strings.Join(frame.Log(), "\n"))
			}
			target, ok, err := frame.Attribute(ctx, "#new-window-link", "target")
			if err != nil || !ok || target != "_blank" {
				t.Fatalf("the new-window link's target %q (%v)", target, err)
			}
			if err := frame.Click(ctx, "#new-window-link"); err != nil {
				t.Fatal(err)
			}
			tab, err := b.Tab(ctx, e.tool+"/lti/v1p3/launch")
			if err != nil {
				t.Fatalf("%v\nplatform: %+v", err, p.Stats())
			}
			defer tab.Close()
			showsLaunch(t, ctx, tab, p, e.launched())
		})
	}
}

// A put_data answer that does not come from the platform's origin, or
// that answers no message the login page sent, stops the launch there,
// before the platform is asked to authenticate.
func (e *storageEnv) refusedStorage(t *testing.T) {
	for _, c := range []struct {
		name   string
		course url.Values
		words  string
	}{
		{"a put_data answer from another origin", url.Values{"lti_storage_target": {"_parent"}, "storage": {"wrong-origin"}, "relay": {e.relay}},
			"came from " + e.relay + ", not from the LMS at " + e.platformSite},
		{"a put_data answer with another message_id", url.Values{"lti_storage_target": {"_parent"}, "storage": {"wrong-id"}},
			"message_id this page never sent"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := e.p.withT(t)
			p.Reset()
			_, page, ctx := openCourse(t, e.front, thirdPartyBlocked, e.course(c.course))
			frame := attachFrame(t, ctx, page, e.tool+"/lti/v1p3/login", p)
			if err := waitVisible(ctx, frame, "refused"); err != nil {
				t.Fatalf("%v\n%s", err, strings.Join(frame.Log(), "\n"))
			}
			reason, err := frame.Text(ctx, "#reason")
			if err != nil || !strings.Contains(reason, c.words) || !strings.Contains(reason, "Open the link again from the LMS") {
				t.Fatalf("the refusal %q (%v), want %q", reason, err, c.words)
			}
			if got := p.Stats().AuthRequests; len(got) != 0 {
				t.Fatalf("the platform was asked to authenticate: %+v", got)
			}
		})
	}
}

// openCourse starts a browser with o (for the test's duration) that
// reaches the two sites, and opens the course page at courseURL. The
// context it returns bounds the test's waits.
func openCourse(t *testing.T, front *twoSites, o browser.Options, courseURL string) (*browser.Browser, *browser.Page, context.Context) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	o.HostResolverRules = "MAP tool.test 127.0.0.1, MAP platform.test 127.0.0.1, MAP relay.test 127.0.0.1"
	o.TrustedSPKIs = []string{front.spki}
	b, err := browser.StartWith(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	page, err := b.Open(ctx, courseURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(page.Close)
	return b, page, ctx
}

// attachFrame waits for the course page's frame at urlPrefix.
func attachFrame(t *testing.T, ctx context.Context, page *browser.Page, urlPrefix string, p *platform) *browser.Page {
	t.Helper()
	frame, err := page.Frame(ctx, urlPrefix)
	if err != nil {
		t.Fatalf("%v\nplatform: %+v\n%s", err, p.Stats(), strings.Join(page.Log(), "\n"))
	}
	t.Cleanup(frame.Close)
	return frame
}

// showsLaunch waits until LiveProctor shows the fields, as the component
// renders the session.
func showsLaunch(t *testing.T, ctx context.Context, page *browser.Page, p *platform, fields map[string]string) {
	t.Helper()
	shown, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	for field, want := range fields {
		got, err := page.Text(shown, `#proctor [data-field="`+field+`"]`)
		if err != nil || got != want {
			var text string
			_ = page.Evaluate(ctx, "document.body ? document.body.innerText : ''", &text)
			t.Fatalf("LiveProctor shows %s %q (%v), want %q\nthe page: %s\nplatform: %+v\n%s",
				field, got, err, want, text, p.Stats(), strings.Join(page.Log(), "\n"))
		}
	}
}

// checkCookies checks what the browser lets the tool's frame keep: its
// unpartitioned cookies (document.hasStorageAccess), and cookies at all
// (a Partitioned cookie the frame sets and reads back), so that each case
// shows what it claims to.
func checkCookies(t *testing.T, ctx context.Context, frame *browser.Page, unpartitioned, cookies bool) {
	t.Helper()
	var got struct {
		Access  bool `json:"access"`
		Enabled bool `json:"enabled"`
	}
	const check = `document.hasStorageAccess().then(a => {
		document.cookie = 'lti_e2e_check=1; Path=/; Max-Age=60; Secure; SameSite=None; Partitioned';
		return {access: a, enabled: document.cookie.split('; ').includes('lti_e2e_check=1')};
	})`
	if err := frame.Evaluate(ctx, check, &got); err != nil {
		t.Fatal(err)
	}
	if got.Access != unpartitioned || got.Enabled != cookies {
		t.Fatalf("the tool's frame: unpartitioned cookies %v, cookies %v; want %v, %v", got.Access, got.Enabled, unpartitioned, cookies)
	}
}

// waitVisible waits until the element of id is shown (its hidden
// attribute gone).
func waitVisible(ctx context.Context, page *browser.Page, id string) error {
	for {
		var shown bool
		err := page.Evaluate(ctx, fmt.Sprintf("(() => { const e = document.getElementById(%q); return !!e && !e.hidden; })()", id), &shown)
		switch {
		case err != nil:
			return err
		case shown:
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("#%s is not shown: %w", id, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// twoSites is a TLS front on one loopback port for host names of several
// sites (tool.test, platform.test, relay.test), with a certificate of the
// test's own that the browser trusts by its key (spki).
type twoSites struct {
	ln   net.Listener
	port string
	spki string // base64 SHA-256 of the certificate's SubjectPublicKeyInfo
}

// listenTwoSites listens, so that the tool's URL is known before its stack
// starts; serve starts answering.
func listenTwoSites(t *testing.T) *twoSites {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "tool.test"},
		DNSNames:  []string{"tool.test", "platform.test", "relay.test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}})
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return &twoSites{ln: ln, port: port, spki: base64.StdEncoding.EncodeToString(sum[:])}
}

// url is the https URL of host on the front.
func (f *twoSites) url(host string) string { return "https://" + host + ":" + f.port }

// serve proxies each host name to its backend URL (http) until the test
// ends; the Host header stays the browser's.
func (f *twoSites) serve(t *testing.T, backends map[string]string) {
	t.Helper()
	proxies := map[string]*httputil.ReverseProxy{}
	for host, backend := range backends {
		u, err := url.Parse(backend)
		if err != nil {
			t.Fatal(err)
		}
		proxies[host] = &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(u)
			r.Out.Host = r.In.Host
		}}
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.Host)
		if p, ok := proxies[host]; ok {
			p.ServeHTTP(w, r)
			return
		}
		http.Error(w, "no such site here", http.StatusMisdirectedRequest)
	})}
	go func() {
		if err := srv.Serve(f.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("the TLS front: %v", err)
		}
	}()
	t.Cleanup(func() { _ = srv.Close() })
}

// startStorageStack starts a stack of the test's own whose tool URLs
// (PUBLIC_BASE_URL) are tool, and which may reach the insecure hosts
// (host:port, comma-separated) over http.
func startStorageStack(t *testing.T, tool, insecure string) *stack.Stack {
	t.Helper()
	return startOwnStack(t, "PUBLIC_BASE_URL="+tool, "LTI_ALLOW_INSECURE_HOSTS="+insecure)
}
