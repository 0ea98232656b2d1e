package main

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/liveproctor/workspaces/deploy/local/loadgen"
	"github.com/liveproctor/workspaces/deploy/local/stack"
	"github.com/liveproctor/workspaces/pkg/basicauth"
)

const (
	// floodHeadroom is what the flood stack's Redis may grow by after
	// seeding: its maxmemory is the used memory then plus this, so a flood
	// that fills Redis fills 64 MiB, not the machine.
	floodHeadroom = 64 << 20
	// floodCallers is the flood's concurrency.
	floodCallers = 64
	// floodSDKRate is the SDK logins a second beside the flood: few
	// enough that their tokens hardly move the memory figures.
	floodSDKRate = 50
	// maxFloodAddresses is how many client addresses floodAddress names.
	maxFloodAddresses = 256 * 250
	// floodIssuer is the LMS the flood's logins claim to come from.
	floodIssuer   = "https://lms.bench-flood.example.edu"
	floodClientID = "bench-flood"
	// lti13LoginPattern matches the login states the workspace service
	// keeps in Redis.
	lti13LoginPattern = "lti13:login:*"
)

// ltiFlood is what the ltiflood scenario saw.
type ltiFlood struct {
	Logins, Addresses int
	MaxMemory         int64 // Redis's maxmemory during the flood
	// Answers counts the flood's answers by HTTP status; 0 counts the
	// requests that got none.
	Answers map[int]int
	Took    time.Duration
	// MemoryBefore, MemoryAfter and MemoryPeak are Redis's used_memory
	// before and after the flood, and its used_memory_peak after.
	MemoryBefore, MemoryAfter, MemoryPeak int64
	KeysLeft                              int64 // lti13:login:* keys after the flood, less those before
	OneKeyUsage                           int64 // MEMORY USAGE of one of them
	OOMErrors                             int64 // Redis's OOM errors during the flood (INFO errorstats)
	// SDKBefore and SDKDuring are the SDK logins before and during the
	// flood, at floodSDKRate a second.
	SDKBefore, SDKDuring pacedRun
}

// BytesPerLogin is Redis's used_memory growth over the flood per login
// state it left.
func (f *ltiFlood) BytesPerLogin() float64 {
	if f.KeysLeft <= 0 {
		return 0
	}
	return float64(f.MemoryAfter-f.MemoryBefore) / float64(f.KeysLeft)
}

// measureLTIFlood starts a stack of its own whose Redis refuses writes
// (noeviction) past a fixed headroom over what seeding left, registers an
// LTI 1.3 platform with a workspace, and sends cfg.FloodLogins login
// initiations from cfg.FloodAddresses client addresses (X-Forwarded-For,
// which the gateway trusts from loopback) while SDK logins go on beside
// them. The scenario fails when an SDK login fails: a flood of anonymous
// requests must not cost the signed-in users their logins.
func measureLTIFlood(ctx context.Context, cfg config, e *env, rep *report) error {
	if cfg.FloodAddresses < 1 || cfg.FloodAddresses > maxFloodAddresses {
		return fmt.Errorf("-flood-addresses %d: want 1 to %d", cfg.FloodAddresses, maxFloodAddresses)
	}
	progress("starting a stack for the LTI 1.3 login flood")
	var logs bytes.Buffer
	s, err := stack.Start(ctx, stack.Options{
		BinDir: filepath.Join(e.tmp, "bin"), DataDir: filepath.Join(e.tmp, "ltiflood"),
		Env: stackEnv(cfg), Output: &logs,
		ServiceEnv: map[string][]string{"gateway": {"TRUSTED_PROXIES=127.0.0.1/32"}},
	})
	if err != nil {
		return fmt.Errorf("start the flood's stack: %w\n%s", err, logs.String())
	}
	defer func() {
		if err := s.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "stop the flood's stack:", err)
		}
	}()
	rdb := redis.NewClient(&redis.Options{Addr: s.RedisAddr, Protocol: 2})
	defer rdb.Close()

	initiation, err := seedLTIPlatform(ctx, e, s.GatewayURL)
	if err != nil {
		return err
	}
	used, err := redisInfoInt(ctx, rdb, "memory", "used_memory")
	if err != nil {
		return err
	}
	f := &ltiFlood{Logins: cfg.FloodLogins, Addresses: cfg.FloodAddresses, MaxMemory: used + floodHeadroom}
	rep.LTIFlood = f
	if err := rdb.ConfigSet(ctx, "maxmemory-policy", "noeviction").Err(); err != nil {
		return fmt.Errorf("set the flood Redis's policy: %w", err)
	}
	if err := rdb.ConfigSet(ctx, "maxmemory", strconv.FormatInt(f.MaxMemory, 10)).Err(); err != nil {
		return fmt.Errorf("set the flood Redis's maxmemory: %w", err)
	}

	login := loadgen.HTTPRequest{Client: e.http, Method: http.MethodPost, URL: s.GatewayURL + "/api/login/sdk", Header: e.basic, Bodies: loginBodies}.Op()
	progress("  SDK logins, %d/s for %s, before the flood", floodSDKRate, cfg.Round)
	beforeCtx, stopBefore := context.WithTimeout(ctx, cfg.Round)
	f.SDKBefore = pacedCalls(beforeCtx, ctx, floodSDKRate, login)
	stopBefore()
	if err := ctx.Err(); err != nil {
		return err
	}

	keysBefore, err := countKeys(ctx, rdb, lti13LoginPattern)
	if err != nil {
		return err
	}
	oomBefore, err := redisOOMErrors(ctx, rdb)
	if err != nil {
		return err
	}
	if f.MemoryBefore, err = redisInfoInt(ctx, rdb, "memory", "used_memory"); err != nil {
		return err
	}

	progress("  %d login initiations from %d addresses at %d callers, SDK logins beside them", cfg.FloodLogins, cfg.FloodAddresses, floodCallers)
	sdkCtx, stopSDK := context.WithCancel(ctx)
	sdkDone := make(chan pacedRun, 1)
	go func() { sdkDone <- pacedCalls(sdkCtx, ctx, floodSDKRate, login) }()
	answers := &statusCounts{}
	res, floodErr := loadgen.Run(ctx, loadgen.Options{Workers: floodCallers, Calls: cfg.FloodLogins},
		floodOp(initiation, cfg.FloodAddresses, answers))
	stopSDK()
	f.SDKDuring = <-sdkDone
	if floodErr != nil {
		return floodErr
	}
	f.Answers, f.Took = answers.snapshot(), res.Elapsed

	if f.MemoryAfter, err = redisInfoInt(ctx, rdb, "memory", "used_memory"); err != nil {
		return err
	}
	if f.MemoryPeak, err = redisInfoInt(ctx, rdb, "memory", "used_memory_peak"); err != nil {
		return err
	}
	oomAfter, err := redisOOMErrors(ctx, rdb)
	if err != nil {
		return err
	}
	f.OOMErrors = oomAfter - oomBefore
	keysAfter, err := countKeys(ctx, rdb, lti13LoginPattern)
	if err != nil {
		return err
	}
	f.KeysLeft = keysAfter - keysBefore
	if f.OneKeyUsage, err = oneKeyUsage(ctx, rdb, lti13LoginPattern); err != nil {
		return err
	}

	if n := f.SDKBefore.Errors + f.SDKDuring.Errors; n > 0 {
		return fmt.Errorf("%d SDK logins failed before the flood and %d during it (by status: %v, %v; first: %v)",
			f.SDKBefore.Errors, f.SDKDuring.Errors, f.SDKBefore.Failures, f.SDKDuring.Failures,
			cmp.Or(f.SDKDuring.FirstError, f.SDKBefore.FirstError))
	}
	return nil
}

// seedLTIPlatform creates a workspace with the root pair, registers an LTI
// 1.3 platform with it using the workspace's own server pair, and returns
// the login initiation's URL without its login_hint (see floodOp).
func seedLTIPlatform(ctx context.Context, e *env, gateway string) (string, error) {
	var created struct {
		AppKeys struct {
			LTI struct {
				LaunchURL string `json:"launchUrl"`
			} `json:"lti"`
			Server struct {
				ConsumerKey  string `json:"consumerKey"`
				SharedSecret string `json:"sharedSecret"`
			} `json:"server"`
		} `json:"appKeys"`
	}
	const workspace = "bench-ltiflood"
	if err := postJSONAt(ctx, e.http, gateway, e.basic, "/api/workspace",
		`{"id":"`+workspace+`","name":"LTI flood","type":"DISTRICT"}`, &created); err != nil {
		return "", fmt.Errorf("create the flood's workspace: %w", err)
	}
	base, ok := strings.CutSuffix(created.AppKeys.LTI.LaunchURL, "/lti/v1/launch")
	if !ok {
		return "", fmt.Errorf("the workspace's LTI 1.1 launch URL %q", created.AppKeys.LTI.LaunchURL)
	}
	server := http.Header{
		"Authorization": {basicauth.Header(created.AppKeys.Server.ConsumerKey, created.AppKeys.Server.SharedSecret)},
		"Content-Type":  {"application/json"},
	}
	body := fmt.Sprintf(`{"issuer":%q,"clientId":%q,"deploymentIds":["1:bench"],"authLoginUrl":%q,"jwksUrl":%q}`,
		floodIssuer, floodClientID, floodIssuer+"/api/lti/authorize_redirect", floodIssuer+"/api/lti/security/jwks")
	var registered struct{}
	if err := postJSONAt(ctx, e.http, gateway, server, "/api/workspace/"+workspace+"/lti/registrations", body, &registered); err != nil {
		return "", fmt.Errorf("register the flood's platform: %w", err)
	}
	q := url.Values{"iss": {floodIssuer}, "target_link_uri": {base + "/lti/v1p3/launch"}, "client_id": {floodClientID}}
	return gateway + "/lti/v1p3/login?" + q.Encode(), nil
}

// floodOp sends one login initiation per call, as a browser would (no
// redirect followed), each with its own login_hint, from the next of
// addresses client addresses in turn, and counts the answers by status.
// Only a request without an answer fails.
func floodOp(initiation string, addresses int, answers *statusCounts) loadgen.Op {
	client := loadgen.NewHTTPClient(floodCallers)
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	var next atomic.Int64
	return func(ctx context.Context) error {
		i := next.Add(1) - 1
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, initiation+"&login_hint=learner-"+strconv.FormatInt(i, 10), nil)
		if err != nil {
			return err
		}
		req.Header.Set("X-Forwarded-For", floodAddress(int(i%int64(addresses))))
		resp, err := client.Do(req)
		if err != nil {
			answers.add(0)
			return err
		}
		defer resp.Body.Close()
		_, err = io.Copy(io.Discard, resp.Body)
		answers.add(resp.StatusCode)
		return err
	}
}

// floodAddress is the i-th flood client address (i below
// maxFloodAddresses): 10.1.0.1, …, 10.1.0.250, 10.1.1.1, …
func floodAddress(i int) string {
	return fmt.Sprintf("10.1.%d.%d", i/250, i%250+1)
}

// statusCounts counts answers by status, from many goroutines.
type statusCounts struct {
	mu sync.Mutex
	n  map[int]int
}

func (c *statusCounts) add(status int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[int]int{}
	}
	c.n[status]++
}

func (c *statusCounts) snapshot() map[int]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.n)
}
