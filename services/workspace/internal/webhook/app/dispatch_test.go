package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/liveproctor/workspaces/pkg/outbound"
	"github.com/liveproctor/workspaces/pkg/testenv"
	"github.com/liveproctor/workspaces/pkg/webhook"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/mongoconn/mongotest"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/mongostore"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/secretbox"
	"github.com/liveproctor/workspaces/services/workspace/internal/app"
	"github.com/liveproctor/workspaces/services/workspace/internal/app/apptest"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
	"github.com/liveproctor/workspaces/services/workspace/internal/webhook/adapters/deliverystore"
	webhookapp "github.com/liveproctor/workspaces/services/workspace/internal/webhook/app"
)

// The dispatcher's tests run it as the service does: the workspace
// application publishing its audit trail into the workspace store and
// waking the deliveries, the delivery state in the delivery store, both on
// one FerretDB, and receivers on loopback that check each message's
// signature with the Standard Webhooks library. Only the endpoints'
// configuration is a stand-in (endpoints, below).
var env = mongotest.New(mongotest.Options{Name: "webhook-dispatch"})

func TestMain(m *testing.M) {
	os.Exit(env.Run(m))
}

// settle is the audit trail's settle window in these tests: an event is
// delivered about this long after it is recorded.
const settle = 500 * time.Millisecond

// within bounds every wait of these tests.
const within = 30 * time.Second

// endpoints stands in for the endpoints' configuration (the workspace
// document's, in the service), recording what delivery decided.
type endpoints struct {
	mu        sync.Mutex
	targets   map[string]webhookapp.Target
	disabled  map[string]string // the reasons, by endpoint
	exhausted []string          // the events given up on
	misses    int
}

func (e *endpoints) Target(_ context.Context, _, endpointID string) (webhookapp.Target, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	t, ok := e.targets[endpointID]
	if !ok {
		e.misses++
		return webhookapp.Target{}, webhookapp.ErrEndpointGone
	}
	return t, nil
}

// missed is how often an endpoint was asked for and not found.
func (e *endpoints) missed() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.misses
}

func (e *endpoints) Disable(_ context.Context, _, endpointID, reason string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	t := e.targets[endpointID]
	t.Enabled = false
	e.targets[endpointID] = t
	e.disabled[endpointID] = reason
	return nil
}

func (e *endpoints) AttemptsExhausted(_ context.Context, _, _, eventID string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.exhausted = append(e.exhausted, eventID)
	return nil
}

func (e *endpoints) reason(endpointID string) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.disabled[endpointID]
}

func (e *endpoints) gaveUpOn() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.exhausted)
}

// message is what the test encoder puts in a delivery's body.
type message struct {
	ID          string `json:"id"`
	Type        string `json:"type"`
	WorkspaceID string `json:"workspaceId"`
}

func encode(e domain.Event) ([]byte, error) {
	return json.Marshal(message{ID: e.ID, Type: string(e.Type), WorkspaceID: e.WorkspaceID})
}

// received is one request a receiver got.
type received struct {
	id   string // webhook-id
	body message
}

// receiver is an endpoint's HTTP server on loopback. answer says the
// status of its nth request (from 0); it may block.
type receiver struct {
	t      *testing.T
	srv    *httptest.Server
	secret webhook.Secret
	answer func(n int, r *http.Request) int
	mu     sync.Mutex
	got    []received
}

func newReceiver(t *testing.T, tls bool, answer func(n int, r *http.Request) int) *receiver {
	rc := &receiver{t: t, secret: webhook.NewSecret(), answer: answer}
	verifier, err := standardwebhooks.NewWebhook(rc.secret.Reveal())
	if err != nil {
		t.Fatal(err)
	}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body bytes.Buffer
		_, _ = body.ReadFrom(r.Body)
		if err := verifier.Verify(body.Bytes(), r.Header); err != nil {
			t.Errorf("a message's signature does not verify: %v", err)
		}
		var m message
		if err := json.Unmarshal(body.Bytes(), &m); err != nil || m.ID == "" {
			t.Errorf("a message's body %q: %v", body.String(), err)
		}
		rc.mu.Lock()
		n := len(rc.got)
		rc.got = append(rc.got, received{id: r.Header.Get(webhook.HeaderID), body: m})
		rc.mu.Unlock()
		w.WriteHeader(rc.answer(n, r))
	})
	if tls {
		rc.srv = httptest.NewTLSServer(handler)
	} else {
		rc.srv = httptest.NewServer(handler)
	}
	t.Cleanup(rc.srv.Close)
	return rc
}

// always answers status to every request.
func always(status int) func(int, *http.Request) int {
	return func(int, *http.Request) int { return status }
}

// requests returns the webhook-ids of the requests so far.
func (rc *receiver) requests() []string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	ids := make([]string, len(rc.got))
	for i, r := range rc.got {
		if r.id != r.body.ID {
			rc.t.Errorf("webhook-id %s on the message of %s", r.id, r.body.ID)
		}
		ids[i] = r.id
	}
	return ids
}

// waitFor waits until the receiver got n requests, and returns their
// webhook-ids.
func (rc *receiver) waitFor(n int) []string {
	rc.t.Helper()
	testenv.Eventually(rc.t, within, func() error {
		if got := rc.requests(); len(got) < n {
			return fmt.Errorf("%d requests: %v", len(got), got)
		}
		return nil
	}, "%d requests", n)
	return rc.requests()
}

type fixture struct {
	t          *testing.T
	app        *app.App
	root       domain.Caller
	deliveries *deliverystore.Store
	endpoints  *endpoints
	// insecure are the receivers' host:port, which the dispatchers may
	// call over http on loopback.
	insecure []string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	db := env.Database(t)
	ctx := context.Background()
	repo := mongostore.New(db)
	deliveries := deliverystore.New(db)
	for _, prepare := range []func(context.Context) error{repo.Prepare, deliveries.Prepare} {
		if err := prepare(ctx); err != nil {
			t.Fatal(err)
		}
	}
	box, err := secretbox.New(bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32))
	if err != nil {
		t.Fatal(err)
	}
	a := app.New(repo, box, app.Settings{LTIToolURLs: ltidomain.NewToolURLs("https://lti.test")},
		app.WithEventLog(repo, app.EventSettings{Settle: settle}), app.WithDeliveryWaker(deliveries))
	const key, secret = "00000000-0000-4000-8000-000000000001", "00000000-0000-4000-8000-000000000002"
	if _, err := a.Bootstrap(ctx, app.BootstrapConfig{WorkspaceID: "root", Name: "Root", AppKey: key, AppSecret: secret}); err != nil {
		t.Fatal(err)
	}
	root, err := a.Authenticate(ctx, key, secret)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, app: a, root: root, deliveries: deliveries,
		endpoints: &endpoints{targets: map[string]webhookapp.Target{}, disabled: map[string]string{}}}
}

// endpoint adds an endpoint of the root workspace, which sees every
// workspace's events, delivering what is recorded from now on to rc (at
// rawURL when given) and starts its live cursor.
func (f *fixture) endpoint(id string, rc *receiver, rawURL string, types ...string) {
	f.t.Helper()
	if rawURL == "" {
		rawURL = rc.srv.URL + "/hook"
		u, _ := url.Parse(rc.srv.URL)
		f.insecure = append(f.insecure, u.Host)
	}
	from := domain.EventIDFloor(time.Now())
	if err := f.deliveries.Start(context.Background(), "root", id, from); err != nil {
		f.t.Fatal(err)
	}
	f.store(webhookapp.Target{WorkspaceID: "root", EndpointID: id, URL: rawURL, EventTypes: types,
		Enabled: true, From: from, Secrets: []string{rc.secret.Reveal()}})
}

// store stores an endpoint's configuration, as its create does after
// starting its cursor.
func (f *fixture) store(t webhookapp.Target) {
	f.endpoints.mu.Lock()
	defer f.endpoints.mu.Unlock()
	f.endpoints.targets[t.EndpointID] = t
}

// settings are a dispatcher's in these tests: a quick poll, a short
// lease, and a retry schedule of milliseconds that gives up after the
// third attempt. Idle cursors wait a minute: deliveries rest on the wakes.
func settings() webhookapp.DispatcherSettings {
	return webhookapp.DispatcherSettings{
		Workers:     2,
		Lease:       2 * time.Second,
		IdleRecheck: time.Minute,
		Poll:        20 * time.Millisecond,
		Retry: func(_ webhook.Outcome, attempt int, _ func() float64) (time.Duration, bool) {
			return 10 * time.Millisecond, attempt < 3
		},
	}
}

// dispatch runs a dispatcher named replica until the test ends, or until
// the function it returns is called, which returns once Run has.
func (f *fixture) dispatch(replica string, s webhookapp.DispatcherSettings, sendTimeout time.Duration) (stop func()) {
	policy := outbound.Policy{InsecureHosts: f.insecure}
	sender := webhook.NewSender(outbound.NewClient(policy, webhook.Timeout), webhook.WithTimeout(sendTimeout))
	d := webhookapp.NewDispatcher(f.deliveries, f.endpoints, app.NewWebhookEvents(f.app), encode, sender, replica, s)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.Run(ctx)
	}()
	stop = sync.OnceFunc(func() {
		cancel()
		<-done
	})
	f.t.Cleanup(stop)
	return stop
}

// create makes a workspace under the root: a workspace.created event.
func (f *fixture) create(id string) {
	f.t.Helper()
	apptest.CreateWorkspace(f.t, f.app, f.root, app.CreateInput{ID: id})
}

// trail waits for n events of the root's audit trail since the endpoint's
// start to settle, and returns their ids, as the dispatcher reads them.
func (f *fixture) trail(endpointID string, n int) []string {
	f.t.Helper()
	target, _ := f.endpoints.Target(context.Background(), "root", endpointID)
	var events []domain.Event
	testenv.Eventually(f.t, within, func() error {
		var err error
		if events, err = app.NewWebhookEvents(f.app).Next(context.Background(), "root", target.From, nil, 100); err == nil && len(events) != n {
			err = fmt.Errorf("%d events", len(events))
		}
		return err
	}, "%d events settled", n)
	ids := make([]string, len(events))
	for i, e := range events {
		ids[i] = e.ID
	}
	return ids
}

// attempts lists the endpoint's attempts, newest first.
func (f *fixture) attempts(endpointID string) []webhookapp.Attempt {
	f.t.Helper()
	page, _, err := f.deliveries.Attempts(context.Background(), endpointID, "", 100)
	if err != nil {
		f.t.Fatal(err)
	}
	return page
}

func statuses(attempts []webhookapp.Attempt) []string {
	out := make([]string, len(attempts))
	for i, a := range attempts {
		out[i] = fmt.Sprintf("%s:%d", a.EventID, a.Status)
	}
	return out
}

// A receiver answering 500, 500, then 200 gets the event three times with
// one webhook-id, and the next event only after it: an endpoint's events
// arrive in the order they were recorded, one at a time.
func TestRetriedUntilDeliveredInOrder(t *testing.T) {
	f := newFixture(t)
	rc := newReceiver(t, false, func(n int, _ *http.Request) int {
		if n < 2 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	f.endpoint("ep", rc, "")
	f.dispatch("replica-a", settings(), time.Second)
	f.create("w1")
	f.create("w2")
	got := rc.waitFor(4)
	trail := f.trail("ep", 2)
	if want := []string{trail[0], trail[0], trail[0], trail[1]}; !slices.Equal(got, want) {
		t.Fatalf("requests %v, want %v (the trail: %v)", got, want, trail)
	}
	testenv.Eventually(t, within, func() error {
		got := statuses(f.attempts("ep"))
		if want := []string{trail[1] + ":200", trail[0] + ":200", trail[0] + ":500", trail[0] + ":500"}; !slices.Equal(got, want) {
			return fmt.Errorf("attempts %v, want %v", got, want)
		}
		return nil
	}, "every attempt recorded")
}

// A 410 disables the endpoint, with the reason.
func TestGoneDisablesTheEndpoint(t *testing.T) {
	f := newFixture(t)
	rc := newReceiver(t, false, always(http.StatusGone))
	f.endpoint("ep", rc, "")
	f.dispatch("replica-a", settings(), time.Second)
	f.create("w1")
	testenv.Eventually(t, within, func() error {
		if reason := f.endpoints.reason("ep"); reason != "the endpoint answered 410 Gone" {
			return fmt.Errorf("disabled for %q", reason)
		}
		return nil
	}, "the endpoint disabled")
	if got := rc.requests(); len(got) != 1 {
		t.Fatalf("requests %v, want one", got)
	}
}

// A receiver slower than the attempt's timeout is retried, with the same
// webhook-id; the attempt that timed out is recorded without a status.
func TestSlowReceiverIsRetried(t *testing.T) {
	f := newFixture(t)
	rc := newReceiver(t, false, func(n int, r *http.Request) int {
		if n == 0 {
			<-r.Context().Done() // the sender gave up
		}
		return http.StatusOK
	})
	f.endpoint("ep", rc, "")
	f.dispatch("replica-a", settings(), 300*time.Millisecond)
	f.create("w1")
	got := rc.waitFor(2)
	if len(got) != 2 || got[0] != got[1] {
		t.Fatalf("requests %v, want one event twice", got)
	}
	testenv.Eventually(t, within, func() error {
		attempts := f.attempts("ep")
		if len(attempts) != 2 || attempts[0].Status != 200 || attempts[1].Status != 0 || attempts[1].Error != "no answer within the timeout" {
			return fmt.Errorf("attempts %+v", attempts)
		}
		return nil
	}, "both attempts recorded")
}

// After the last attempt, delivery gives up on the event (the endpoint
// records it) and goes on with the next.
func TestExhaustedAttemptsMoveOn(t *testing.T) {
	f := newFixture(t)
	rc := newReceiver(t, false, always(http.StatusServiceUnavailable))
	f.endpoint("ep", rc, "")
	f.dispatch("replica-a", settings(), time.Second)
	f.create("w1")
	f.create("w2")
	got := rc.waitFor(6)
	trail := f.trail("ep", 2)
	if want := []string{trail[0], trail[0], trail[0], trail[1], trail[1], trail[1]}; !slices.Equal(got[:6], want) {
		t.Fatalf("requests %v, want %v", got, want)
	}
	testenv.Eventually(t, within, func() error {
		if got := f.endpoints.gaveUpOn(); !slices.Equal(got, trail) {
			return fmt.Errorf("gave up on %v, want %v", got, trail)
		}
		return nil
	}, "both events given up on")
}

// An endpoint whose attempts all fail for DisableAfter is disabled, with
// the reason.
func TestFailingEndpointIsDisabled(t *testing.T) {
	f := newFixture(t)
	rc := newReceiver(t, false, always(http.StatusInternalServerError))
	f.endpoint("ep", rc, "")
	s := settings()
	s.DisableAfter = 100 * time.Millisecond
	s.Retry = func(webhook.Outcome, int, func() float64) (time.Duration, bool) { return 20 * time.Millisecond, true }
	f.dispatch("replica-a", s, time.Second)
	f.create("w1")
	testenv.Eventually(t, within, func() error {
		if reason := f.endpoints.reason("ep"); !strings.HasPrefix(reason, "every attempt has failed since ") {
			return fmt.Errorf("disabled for %q", reason)
		}
		return nil
	}, "the endpoint disabled")
}

// Only the events the endpoint's filter admits are delivered.
func TestFilter(t *testing.T) {
	f := newFixture(t)
	rc := newReceiver(t, false, always(http.StatusNoContent))
	f.endpoint("ep", rc, "", string(domain.EventWorkspaceDeleted))
	f.dispatch("replica-a", settings(), time.Second)
	for _, id := range []string{"w1", "w2"} {
		f.create(id)
		if _, err := f.app.DeleteWorkspace(context.Background(), f.root, id, app.Precondition{}); err != nil {
			t.Fatal(err)
		}
	}
	rc.waitFor(2)
	// One more event, admitted, after the others: once it arrives,
	// everything before it has been sent or skipped.
	f.create("w3")
	if _, err := f.app.DeleteWorkspace(context.Background(), f.root, "w3", app.Precondition{}); err != nil {
		t.Fatal(err)
	}
	rc.waitFor(3)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for i, want := range []string{"w1", "w2", "w3"} {
		if got := rc.got[i].body; got.Type != string(domain.EventWorkspaceDeleted) || got.WorkspaceID != want {
			t.Errorf("request %d: %+v, want the deletion of %s", i, got, want)
		}
	}
	if len(rc.got) != 3 {
		t.Errorf("%d requests, want 3", len(rc.got))
	}
}

// Two dispatchers (two replicas) on one store deliver every event to
// every endpoint once, in order.
func TestTwoDispatchersDeliverEachEventOnce(t *testing.T) {
	f := newFixture(t)
	receivers := make([]*receiver, 3)
	for i := range receivers {
		receivers[i] = newReceiver(t, false, always(http.StatusOK))
		f.endpoint(fmt.Sprintf("ep%d", i), receivers[i], "")
	}
	f.dispatch("replica-a", settings(), time.Second)
	f.dispatch("replica-b", settings(), time.Second)
	for i := range 6 {
		f.create(fmt.Sprintf("w%d", i))
	}
	trail := f.trail("ep0", 6)
	for _, rc := range receivers {
		rc.waitFor(len(trail))
	}
	// A last event: once it arrives, a second delivery of any before it
	// would have too.
	f.create("last")
	trail = f.trail("ep0", 7)
	for i, rc := range receivers {
		if got := rc.waitFor(len(trail)); !slices.Equal(got, trail) {
			t.Errorf("endpoint %d got %v, want %v", i, got, trail)
		}
	}
}

// A dispatcher stopped mid-attempt (its replica shut down or killed)
// records nothing and leaves its lease to expire; another dispatcher then
// sends the event again, with the same webhook-id.
func TestAnotherDispatcherTakesOverAfterTheLease(t *testing.T) {
	f := newFixture(t)
	arrived := make(chan struct{})
	rc := newReceiver(t, false, func(n int, r *http.Request) int {
		if n == 0 {
			close(arrived)
			<-r.Context().Done()
		}
		return http.StatusOK
	})
	f.endpoint("ep", rc, "")
	s := settings()
	s.StopGrace = 0
	stop := f.dispatch("replica-a", s, 10*time.Second)
	f.create("w1")
	select {
	case <-arrived:
	case <-time.After(within):
		t.Fatal("the first attempt never arrived")
	}
	stop()
	f.dispatch("replica-b", s, 10*time.Second)
	got := rc.waitFor(2)
	if got[0] != got[1] {
		t.Fatalf("requests %v, want one event twice", got)
	}
	testenv.Eventually(t, within, func() error {
		if attempts := statuses(f.attempts("ep")); !slices.Equal(attempts, []string{got[1] + ":200"}) {
			return fmt.Errorf("attempts %v, want the second one only", attempts)
		}
		return nil
	}, "the takeover's attempt recorded")
}

// A resend, a recovery and a test message are delivered beside the live
// feed: the one event, the events since the recovery's point in order,
// the test message with its own id.
func TestResendRecoverAndTest(t *testing.T) {
	f := newFixture(t)
	rc := newReceiver(t, false, always(http.StatusOK))
	f.endpoint("ep", rc, "")
	target, _ := f.endpoints.Target(context.Background(), "root", "ep")
	from := target.From
	f.dispatch("replica-a", settings(), time.Second)
	f.create("w1")
	f.create("w2")
	trail := f.trail("ep", 2)
	rc.waitFor(len(trail))
	ctx := context.Background()

	if err := f.deliveries.Resend(ctx, "root", "ep", trail[0]); err != nil {
		t.Fatal(err)
	}
	if got := rc.waitFor(len(trail) + 1); got[len(trail)] != trail[0] {
		t.Fatalf("after the resend: %v", got)
	}
	if err := f.deliveries.Recover(ctx, "root", "ep", from); err != nil {
		t.Fatal(err)
	}
	if got := rc.waitFor(2*len(trail) + 1); !slices.Equal(got[len(trail)+1:], trail) {
		t.Fatalf("after the recovery: %v, want the trail %v again", got, trail)
	}
	body, _ := json.Marshal(message{ID: "msg_test", Type: "webhook.test"})
	if err := f.deliveries.Test(ctx, "root", "ep", "msg_test", body); err != nil {
		t.Fatal(err)
	}
	if got := rc.waitFor(2*len(trail) + 2); got[len(got)-1] != "msg_test" {
		t.Fatalf("after the test message: %v", got)
	}
}

// A URL whose host resolves to a private address is refused when the
// connection is made (without WEBHOOK_ALLOW_INSECURE_HOSTS naming it):
// the attempt fails, and nothing reaches the host.
func TestPrivateAddressRefusedAtDial(t *testing.T) {
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	addrs, err := net.LookupHost(host)
	if err != nil || len(addrs) == 0 || outbound.Public(netip.MustParseAddr(addrs[0])) || strings.EqualFold(host, "localhost") {
		t.Skipf("this machine's name %q does not resolve to a private address (%v, %v)", host, addrs, err)
	}
	f := newFixture(t)
	rc := newReceiver(t, true, always(http.StatusOK))
	u, _ := url.Parse(rc.srv.URL)
	f.endpoint("ep", rc, "https://"+net.JoinHostPort(host, u.Port())+"/hook")
	f.dispatch("replica-a", settings(), time.Second)
	f.create("w1")
	testenv.Eventually(t, within, func() error {
		attempts := f.attempts("ep")
		if len(attempts) == 0 || attempts[0].Status != 0 || attempts[0].Error != "the host could not be reached" {
			return fmt.Errorf("attempts %+v", attempts)
		}
		return nil
	}, "the attempt refused at dial")
	if got := rc.requests(); len(got) != 0 {
		t.Fatalf("the private host got %v", got)
	}
}

// A live cursor is started before its endpoint is stored: a dispatcher
// that finds no endpoint for a new cursor keeps it (the request storing
// the endpoint may still be under way), and delivers once it is there.
func TestCursorStartedBeforeItsEndpointIsKept(t *testing.T) {
	f := newFixture(t)
	rc := newReceiver(t, false, always(http.StatusOK))
	f.endpoint("ep", rc, "")
	target, _ := f.endpoints.Target(context.Background(), "root", "ep")
	f.endpoints.mu.Lock()
	delete(f.endpoints.targets, "ep")
	f.endpoints.mu.Unlock()
	f.dispatch("replica-a", settings(), time.Second)
	f.create("w1")
	testenv.Eventually(t, within, func() error {
		if f.endpoints.missed() == 0 {
			return errors.New("the endpoint was not asked for")
		}
		return nil
	}, "the dispatcher looking for the endpoint")
	f.store(target)
	f.create("w2")
	if got, trail := rc.waitFor(2), f.trail("ep", 2); !slices.Equal(got, trail) {
		t.Fatalf("requests %v, want %v", got, trail)
	}
}
