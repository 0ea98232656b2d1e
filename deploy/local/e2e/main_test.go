// Package e2e tests the service from outside, as its users meet it: the real
// gateway, workspace and auth binaries, built from this checkout, on
// loopback ports, over an embedded FerretDB and a real redis-server.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/liveproctor/workspaces/deploy/local/stack"
	restv1 "github.com/liveproctor/workspaces/pkg/gen/rest/v1"
)

const (
	rootKey    = "3b0c6c1e-7d4f-4c59-9a43-2f8e5d6b1a70"
	rootSecret = "c4e1a9b2-58d3-4f6a-8e07-91b2c3d4e5f6"
)

// The stack every test talks to, the binaries it runs, and the settings
// it runs them with (a test may start a stack of its own with them). Every
// test calls from 127.0.0.1, so the limits are off but where a test of
// them starts its own stack with them on.
var (
	env      *stack.Stack
	binDir   string
	stackEnv = append(append(stack.ThrowawayEnv(rootKey, rootSecret),
		"BOOTSTRAP_PRODUCTS=pub/math,pub/ela",
		"MONGODB_TIMEOUT=1s",
		"WORKSPACE_CALL_TIMEOUT=4s",
		"REQUEST_TIMEOUT=6s",
	), stack.LimitsOffEnv()...)
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	root, err := stack.RepoRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	tmp, err := os.MkdirTemp("", "e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	binDir = filepath.Join(tmp, "bin")
	if err := stack.Build(ctx, root, binDir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var logs bytes.Buffer
	env, err = stack.Start(ctx, stack.Options{
		BinDir:  binDir,
		DataDir: filepath.Join(tmp, "data"),
		Env:     stackEnv,
		Output:  &logs,
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "start the stack: %v\n%s", err, logs.String())
		return 1
	}
	code := 1
	if apiDoc, err = loadServedDocument(ctx, env.GatewayURL); err != nil {
		fmt.Fprintln(os.Stderr, "the served OpenAPI document:", err)
	} else {
		code = m.Run()
	}
	if err := env.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "stop the stack:", err)
	}
	if code != 0 || testing.Verbose() {
		fmt.Fprintf(os.Stderr, "--- stack output ---\n%s", logs.String())
	}
	return code
}

// startOwnStack starts a stack only this test uses, with extra settings:
// for a test that stops a part of it or needs other settings.
func startOwnStack(t *testing.T, extra ...string) *stack.Stack {
	t.Helper()
	return startOwnStackAt(t, "", extra...)
}

// startOwnStackAt is startOwnStack with the gateway listening on
// gatewayAddr (empty: a free port), for tests whose tool URLs
// (PUBLIC_BASE_URL) must name the gateway's address before it starts.
func startOwnStackAt(t *testing.T, gatewayAddr string, extra ...string) *stack.Stack {
	t.Helper()
	return startOwnStackWith(t, stack.Options{GatewayAddr: gatewayAddr}, extra...)
}

// startOwnStackWith is startOwnStack with further options (replicas, a
// gateway address); it fills in the binaries, the data folder, the output
// and the settings.
func startOwnStackWith(t *testing.T, opts stack.Options, extra ...string) *stack.Stack {
	t.Helper()
	var logs bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	opts.BinDir, opts.DataDir, opts.Output = binDir, t.TempDir(), &logs
	opts.Env = append(append([]string(nil), stackEnv...), extra...)
	s, err := stack.Start(ctx, opts)
	if err != nil {
		t.Fatalf("start a stack: %v\n%s", err, logs.String())
	}
	t.Cleanup(func() {
		_ = s.Close()
		if t.Failed() {
			t.Logf("stack output:\n%s", logs.String())
		}
	})
	return s
}

// client calls the REST API with one key pair (or none), on the shared
// stack or, after on, on another.
type client struct {
	t           *testing.T
	key, secret string
	gateway     string // the gateway's URL; empty: the shared stack's
	source      string // the loopback address to call from; empty: any
}

// from returns c calling from the loopback address ip (127.0.0.2), which
// the gateway sees as the client's address.
func (c client) from(ip string) client { c.source = ip; return c }

// on returns c calling the gateway of s.
func (c client) on(s *stack.Stack) client { c.gateway = s.GatewayURL; return c }

func asRoot(t *testing.T) client                      { return client{t: t, key: rootKey, secret: rootSecret} }
func as(t *testing.T, key, secret string) client      { return client{t: t, key: key, secret: secret} }
func anonymous(t *testing.T) client                   { return client{t: t} }
func (c client) withT(t *testing.T) client            { c.t = t; return c }
func (c client) get(path string) *response            { return c.do(http.MethodGet, path, nil) }
func (c client) post(path string, body any) *response { return c.do(http.MethodPost, path, body) }
func (c client) put(path string, body any) *response  { return c.do(http.MethodPut, path, body) }
func (c client) delete(path string) *response         { return c.do(http.MethodDelete, path, nil) }

// do sends body as JSON (a string or []byte is sent as is) with extra
// headers given as name, value pairs.
func (c client) do(method, path string, body any, headers ...string) *response {
	c.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	case []byte:
		r = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			c.t.Fatal(err)
		}
		r = bytes.NewReader(data)
	}
	gateway := c.gateway
	if gateway == "" {
		gateway = env.GatewayURL
	}
	req, err := http.NewRequest(method, gateway+path, r)
	if err != nil {
		c.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.key != "" {
		req.SetBasicAuth(c.key, c.secret)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	httpClient := &http.Client{Timeout: 30 * time.Second}
	if c.source != "" {
		dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(c.source)}}
		httpClient.Transport = &http.Transport{DialContext: dialer.DialContext, DisableKeepAlives: true}
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	apiDoc.check(c.t, req, resp.StatusCode, resp.Header, data)
	return &response{t: c.t, what: method + " " + path, status: resp.StatusCode, header: resp.Header, body: data}
}

type response struct {
	t      *testing.T
	what   string
	status int
	header http.Header
	body   []byte
}

// ok fails the test unless the status is 200, and decodes the body into v.
func (r *response) ok(v any) *response {
	r.t.Helper()
	r.wantStatus(http.StatusOK)
	if v != nil {
		r.decode(v)
	}
	return r
}

func (r *response) wantStatus(status int) *response {
	r.t.Helper()
	if r.status != status {
		r.t.Fatalf("%s: status %d, want %d; body: %s", r.what, r.status, status, r.body)
	}
	return r
}

func (r *response) decode(v any) {
	r.t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		r.t.Fatalf("%s: decode %s: %v", r.what, r.body, err)
	}
}

// object decodes the body as a JSON object.
func (r *response) object() map[string]any {
	r.t.Helper()
	var m map[string]any
	r.decode(&m)
	return m
}

// wantError checks status, the error shape and, when field is not empty,
// that a detail names that field (or a field below it).
func (r *response) wantError(status int, grpcStatus, field string) *restv1.ErrorBody {
	r.t.Helper()
	r.wantStatus(status)
	var e restv1.ErrorBody
	if err := protojson.Unmarshal(r.body, &e); err != nil {
		r.t.Fatalf("%s: decode the error body %s: %v", r.what, r.body, err)
	}
	if e.GetError().GetCode() != int32(status) || e.GetError().GetStatus() != grpcStatus || e.GetError().GetMessage() == "" {
		r.t.Fatalf("%s: error body %s, want code %d status %s and a message", r.what, r.body, status, grpcStatus)
	}
	if id := e.GetError().GetRequestId(); id == "" || id != r.header.Get("X-Request-Id") {
		r.t.Fatalf("%s: requestId %q, X-Request-Id %q: want equal and set", r.what, id, r.header.Get("X-Request-Id"))
	}
	if field != "" {
		found := false
		for _, d := range e.GetError().GetDetails() {
			f := d.GetField()
			found = found || f == field || strings.HasPrefix(f, field+".") || strings.HasPrefix(f, field+"[")
		}
		if !found {
			r.t.Fatalf("%s: no detail names %q: %s", r.what, field, r.body)
		}
	}
	return &e
}

// createResult is the create route's answer.
type createResult struct {
	WorkspaceID       string `json:"workspaceId"`
	Type              string `json:"type"`
	Name              string `json:"name"`
	RegistrationCodes []struct {
		Code string `json:"code"`
	} `json:"registrationCodes"`
	AppKeys struct {
		LTI struct {
			ConsumerKey      string `json:"consumerKey"`
			SharedSecret     string `json:"sharedSecret"`
			ConfigurationURL string `json:"configurationUrl"`
			LaunchURL        string `json:"launchUrl"`
		} `json:"lti"`
		Server struct {
			ConsumerKey  string `json:"consumerKey"`
			SharedSecret string `json:"sharedSecret"`
		} `json:"server"`
	} `json:"appKeys"`
}

// server returns a client using the created workspace's server key pair.
func (c createResult) server(t *testing.T) client {
	return as(t, c.AppKeys.Server.ConsumerKey, c.AppKeys.Server.SharedSecret)
}

// create makes a workspace as c and returns the create result.
func (c client) create(id string, extra map[string]any) createResult {
	c.t.Helper()
	body := map[string]any{"id": id, "name": "Workspace " + id, "type": "DISTRICT"}
	for k, v := range extra {
		body[k] = v
	}
	var res createResult
	c.post("/api/workspace", body).ok(&res)
	if res.WorkspaceID != id {
		c.t.Fatalf("create %s: workspaceId %q", id, res.WorkspaceID)
	}
	return res
}

// workspace is the Workspace JSON of the seed.
type workspace struct {
	Typename          string  `json:"__typename"`
	ID                string  `json:"id"`
	WorkspaceID       string  `json:"workspaceId"`
	Name              string  `json:"name"`
	Type              string  `json:"type"`
	ParentWorkspaceID *string `json:"parentWorkspaceId"`
	Address           struct {
		City    string `json:"city"`
		State   string `json:"state"`
		Country string `json:"country"`
	} `json:"address"`
	Products []struct {
		Bank struct {
			ID string `json:"id"`
		} `json:"bank"`
	} `json:"products"`
	ObjectiveDocuments []string `json:"objectiveDocuments"`
	CreatedAt          string   `json:"createdAt"`
	UpdatedAt          string   `json:"updatedAt"`
	DeletedAt          *string  `json:"deletedAt"`
	Etag               string   `json:"etag"`
}

func (w workspace) productIDs() []string {
	out := []string{}
	for _, p := range w.Products {
		out = append(out, p.Bank.ID)
	}
	return out
}

// unique returns an id no other test uses.
func unique(t *testing.T, suffix string) string {
	name := strings.NewReplacer("/", "-", "_", "-").Replace(strings.ToLower(t.Name()))
	return fmt.Sprintf("%s-%s-%d", name, suffix, time.Now().UnixNano()%1_000_000)
}
