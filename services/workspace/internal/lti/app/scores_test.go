package app_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/testenv"
	"github.com/liveproctor/workspaces/services/workspace/internal/app"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	"github.com/liveproctor/workspaces/services/workspace/internal/lti/adapters/ltistate"
	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

const (
	lineItemsURL = "https://lms.test/mod/lti/services.php/7/lineitems?type_id=2"
	lineItemURL  = "https://lms.test/mod/lti/services.php/7/lineitems/4/lineitem?type_id=2"
)

// memoryScores is ltiapp.ScoreStore in memory, its queues in slices.
type memoryScores struct {
	mu     sync.Mutex
	scores map[string]ltiapp.ScoreRecord
	queues map[string]*memoryQueue
	leases int
}

type memoryQueue struct {
	pending       []string
	heldUntil     time.Time
	token         string
	lastTimestamp time.Time
	lineItem      string
}

func newMemoryScores() *memoryScores {
	return &memoryScores{scores: map[string]ltiapp.ScoreRecord{}, queues: map[string]*memoryQueue{}}
}

func (m *memoryScores) Add(_ context.Context, r ltiapp.ScoreRecord) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	q := m.queues[r.Queue]
	if q == nil {
		q = &memoryQueue{}
		m.queues[r.Queue] = q
	}
	if len(q.pending) >= ltiapp.ScoreBacklogMax {
		return ltiapp.ErrScoreBacklog
	}
	m.scores[r.ID] = r
	q.pending = append(q.pending, r.ID)
	return nil
}

func (m *memoryScores) Get(_ context.Context, workspaceID, id string) (ltiapp.ScoreRecord, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.scores[id]
	if !ok || r.WorkspaceID != workspaceID {
		return ltiapp.ScoreRecord{}, false, nil
	}
	return r, true, nil
}

func (m *memoryScores) Score(_ context.Context, id string) (ltiapp.ScoreRecord, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.scores[id]
	return r, ok, nil
}

func (m *memoryScores) Progress(_ context.Context, id string, p ltiapp.ScoreProgress) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.scores[id]
	if !ok || r.Status != ltiapp.ScorePending {
		return nil
	}
	r.Status, r.Attempts, r.UpdatedAt = p.Status, p.Attempts, p.At
	if p.Reason != "" {
		r.Reason = p.Reason
	}
	if !p.Timestamp.IsZero() {
		r.Timestamp = p.Timestamp
	}
	m.scores[id] = r
	return nil
}

func (m *memoryScores) Claim(_ context.Context, owner string, now, until time.Time) (ltiapp.ScoreQueue, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for id, q := range m.queues {
		if len(q.pending) == 0 || q.heldUntil.After(now) {
			continue
		}
		m.leases++
		q.heldUntil, q.token = until, fmt.Sprint("lease-", m.leases)
		return ltiapp.ScoreQueue{ID: id, Head: q.pending[0], LastTimestamp: q.lastTimestamp, LineItem: q.lineItem,
			Lease: ltiapp.Lease{Owner: owner, Token: q.token, Until: until}}, true, nil
	}
	return ltiapp.ScoreQueue{}, false, nil
}

func (m *memoryScores) Settle(_ context.Context, sq ltiapp.ScoreQueue, s ltiapp.ScoreSettlement, now time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	q := m.queues[sq.ID]
	if q == nil || q.token != sq.Lease.Token {
		return false, nil
	}
	if s.Done && len(q.pending) > 0 && q.pending[0] == sq.Head {
		q.pending = q.pending[1:]
	}
	q.heldUntil = now
	if !s.Done && s.RetryAt.After(now) {
		q.heldUntil = s.RetryAt
	}
	if s.LastTimestamp.After(q.lastTimestamp) {
		q.lastTimestamp = s.LastTimestamp
	}
	if s.LineItem != "" {
		q.lineItem = s.LineItem
	}
	return true, nil
}

func (m *memoryScores) record(id string) ltiapp.ScoreRecord {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.scores[id]
}

// memoryLineItems is ltiapp.LineItemClaims in memory.
type memoryLineItems struct {
	mu    sync.Mutex
	items map[string]*struct {
		url, token string
		until      time.Time
	}
}

func (m *memoryLineItems) Claim(_ context.Context, key, owner string, now, until time.Time) (string, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.items == nil {
		m.items = map[string]*struct {
			url, token string
			until      time.Time
		}{}
	}
	it := m.items[key]
	switch {
	case it == nil:
		it = &struct {
			url, token string
			until      time.Time
		}{}
		m.items[key] = it
	case it.url != "":
		return it.url, "", nil
	case it.until.After(now):
		return "", "", nil
	}
	it.token, it.until = owner+"/"+now.String(), until
	return "", it.token, nil
}

func (m *memoryLineItems) Release(_ context.Context, key, token string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if it := m.items[key]; it != nil && it.token == token && it.url == "" {
		it.until = time.Time{}
	}
	return nil
}

func (m *memoryLineItems) Record(_ context.Context, key, token, url string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if it := m.items[key]; it != nil && it.token == token {
		it.url = url
	}
	return nil
}

// post is a score a gradebook took.
type post struct {
	url, token string
	payload    map[string]any
}

// gradebook is a platform's AGS: it takes scores, answering a score of
// scoreGiven x the errors in fail[x] first, refuses the tokens in refused,
// and finds or makes line items.
type gradebook struct {
	mu      sync.Mutex
	posts   []post
	fail    map[float64][]error
	refused map[string]bool
	made    int               // guarded by mu
	items   map[string]string // resource link id -> line item
	// findFail are the errors the next line item searches answer.
	findFail []error
}

func (g *gradebook) PostScore(_ context.Context, scoresURL, token string, payload map[string]any) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.refused[token] {
		return ltiapp.ErrTokenRefused
	}
	if given, _ := payload["scoreGiven"].(float64); len(g.fail[given]) > 0 {
		err := g.fail[given][0]
		g.fail[given] = g.fail[given][1:]
		return err
	}
	g.posts = append(g.posts, post{url: scoresURL, token: token, payload: payload})
	return nil
}

func (g *gradebook) FindLineItem(_ context.Context, _, _, resourceLinkID, _ string) (string, bool, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.findFail) > 0 {
		err := g.findFail[0]
		g.findFail = g.findFail[1:]
		return "", false, err
	}
	u, ok := g.items[resourceLinkID]
	return u, ok, nil
}

func (g *gradebook) CreateLineItem(_ context.Context, _, _ string, item ltiapp.LineItem) (string, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.made++
	u := fmt.Sprintf("https://lms.test/lineitems/%d?type_id=2", g.made)
	if g.items == nil {
		g.items = map[string]string{}
	}
	g.items[item.ResourceLinkID] = u
	return u, nil
}

func (g *gradebook) madeCount() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.made
}

func (g *gradebook) taken() []post {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.posts)
}

// scoresFixture is a workspace with a registration, launches of learners
// (a, b: a line item each; c, d: none, but line items to manage; e: no
// gradebook), the scores' use cases and a delivery over them.
type scoresFixture struct {
	t         *testing.T
	f         *fixture
	clock     *clock
	grades    *ltiapp.Grades
	delivery  *ltiapp.ScoreDelivery
	scores    *memoryScores
	gradebook *gradebook
	tokens    *grantor
	caller    domain.Caller
}

func newScoresFixture(t *testing.T, retry func(int, func() float64) (time.Duration, bool)) *scoresFixture {
	t.Helper()
	c := &clock{now: time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)}
	records := &memoryLaunches{}
	f := newFixture(t, deps{records: records, now: c.Now, eventLog: true})
	ctx := context.Background()
	_, self := f.create(f.root, app.CreateInput{ID: "w"})
	in := canvas("100", "1:a")
	tokenURL := "https://sso.canvaslms.com/login/oauth2/token"
	in.AuthTokenURL = &tokenURL
	reg, err := f.regs.Create(ctx, self, "w", in)
	if err != nil {
		t.Fatal(err)
	}
	score := []string{ltiapp.ScopeScore}
	manage := []string{ltiapp.ScopeLineItem, ltiapp.ScopeScore}
	for _, l := range []struct {
		id, sub, link string
		ags           ltidomain.LTI13Services
	}{
		{"a", "u-a", "link-1", ltidomain.LTI13Services{LineItem: lineItemURL, LineItems: lineItemsURL, Scopes: score}},
		{"b", "u-b", "link-1", ltidomain.LTI13Services{LineItem: lineItemURL, Scopes: score}},
		{"c", "u-c", "link-2", ltidomain.LTI13Services{LineItems: lineItemsURL, Scopes: manage}},
		{"d", "u-d", "link-2", ltidomain.LTI13Services{LineItems: lineItemsURL, Scopes: manage}},
		{"e", "u-e", "link-3", ltidomain.LTI13Services{LineItems: lineItemsURL, Scopes: score}},
	} {
		_ = records.Put(ctx, ltiapp.LTI13LaunchRecord{
			ID: launchID(l.id), WorkspaceID: "w", RegistrationID: reg.ID, ContextID: "course-7", ResourceLinkID: l.link,
			Subject: l.sub, Services: l.ags, ExamConfigID: examConfig,
		})
	}
	g := &grantor{}
	tokens := ltiapp.NewPlatformTokens(g, ltistate.NewMemoryPlatformTokens(10, c.Now), fixedAssertion{}, 0, ltiapp.Settings{Now: c.Now})
	scores := newMemoryScores()
	book := &gradebook{refused: map[string]bool{}}
	ws := app.NewLTIPort(f.app)
	return &scoresFixture{
		t: t, f: f, clock: c, scores: scores, gradebook: book, tokens: g, caller: self,
		grades: ltiapp.NewGrades(ws, records, scores, c.Now),
		delivery: ltiapp.NewScoreDelivery(ws, scores, &memoryLineItems{}, tokens, book, "replica-a", ltiapp.ScoreDeliverySettings{
			Poll: time.Millisecond, Now: c.Now, Random: func() float64 { return 0.5 }, Retry: retry,
		}),
	}
}

func (s *scoresFixture) submit(launch string, given float64) ltiapp.ScoreRecord {
	s.t.Helper()
	r, err := s.grades.Submit(context.Background(), s.caller, "w", launchID(launch), ltidomain.ScoreInput{
		ScoreGiven: &given, ScoreMaximum: ptr(10), ActivityProgress: "Completed", GradingProgress: "FullyGraded",
	})
	if err != nil {
		s.t.Fatal(err)
	}
	return r
}

// run delivers until ctx ends; stop waits for it.
func (s *scoresFixture) run() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.delivery.Run(ctx); close(done) }()
	return func() { cancel(); <-done }
}

// waitStatus waits until score id has status.
func (s *scoresFixture) waitStatus(id string, status ltiapp.ScoreStatus) ltiapp.ScoreRecord {
	s.t.Helper()
	waitUntil(s.t, fmt.Sprintf("score %s %s", id, status), func() bool { return s.scores.record(id).Status == status })
	return s.scores.record(id)
}

// events are the workspace's events of the scores.
func (s *scoresFixture) events() []domain.Event {
	s.clock.Add(time.Millisecond) // settled
	res, err := s.f.app.ListWorkspaceEvents(context.Background(), s.caller, app.EventsInput{
		WorkspaceID: "w", Types: []string{string(domain.EventLTIScoreDelivered), string(domain.EventLTIScoreFailed)},
	})
	if err != nil {
		s.t.Fatal(err)
	}
	return res.Events
}

// A score is checked, kept pending for a launch of the caller's workspace
// that has a gradebook, and read back by its id in that workspace only.
func TestSubmitScore(t *testing.T) {
	s := newScoresFixture(t, nil)
	ctx := context.Background()
	r := s.submit("a", 7)
	if r.Status != ltiapp.ScorePending || r.LaunchID != launchID("a") || r.UserID != "u-a" || r.LineItem != lineItemURL ||
		r.ResourceID != examConfig || !r.CreatedAt.Equal(s.clock.Now()) {
		t.Fatalf("%+v", r)
	}
	got, err := s.grades.Get(ctx, s.caller, "w", r.ID)
	if err != nil || got.ID != r.ID || got.Status != ltiapp.ScorePending {
		t.Fatalf("%+v, %v", got, err)
	}
	_, other := s.f.create(s.f.root, app.CreateInput{ID: "v"})
	for _, c := range []struct {
		name   string
		caller domain.Caller
		id     string
		launch string
		in     ltidomain.ScoreInput
		kind   fault.Kind
	}{
		{"invalid", s.caller, "w", launchID("a"), ltidomain.ScoreInput{ScoreGiven: ptr(-1)}, fault.Invalid},
		{"unknown launch", s.caller, "w", launchID("z"), validScore(), fault.NotFound},
		{"not a launch id", s.caller, "w", "nope", validScore(), fault.NotFound},
		{"another workspace's", other, "v", launchID("a"), validScore(), fault.NotFound},
		{"not the caller's workspace", other, "w", launchID("a"), validScore(), fault.NotFound},
		{"no gradebook", s.caller, "w", launchID("e"), validScore(), fault.FailedPrecondition},
	} {
		if _, err := s.grades.Submit(ctx, c.caller, c.id, c.launch, c.in); fault.KindOf(err) != c.kind {
			t.Errorf("%s: %v, want %v", c.name, err, c.kind)
		}
	}
	for _, id := range []string{launchID("z"), "nope"} {
		if _, err := s.grades.Get(ctx, s.caller, "w", id); fault.KindOf(err) != fault.NotFound {
			t.Errorf("score %s: %v", id, err)
		}
	}
	if _, err := s.grades.Get(ctx, other, "v", r.ID); fault.KindOf(err) != fault.NotFound {
		t.Errorf("another workspace's score: %v", err)
	}
}

func validScore() ltidomain.ScoreInput {
	return ltidomain.ScoreInput{ScoreGiven: ptr(1), ScoreMaximum: ptr(2), ActivityProgress: "Submitted", GradingProgress: "Pending"}
}

func ptr(v float64) *float64 { return &v }

// Each user's scores reach the line item's scores URL (its query after
// the path) in the order they came, stamped strictly later each, with one
// token for all; each is delivered once, with its event.
func TestDeliverScoresInOrder(t *testing.T) {
	s := newScoresFixture(t, nil)
	var sent []ltiapp.ScoreRecord
	for i := range 5 {
		sent = append(sent, s.submit("a", float64(i)), s.submit("b", float64(i)))
	}
	defer s.run()()
	for _, r := range sent {
		s.waitStatus(r.ID, ltiapp.ScoreDelivered)
	}
	posts := s.gradebook.taken()
	if len(posts) != len(sent) {
		t.Fatalf("%d posts for %d scores", len(posts), len(sent))
	}
	last := map[string]string{}
	given := map[string]float64{}
	for _, p := range posts {
		user, stamp := p.payload["userId"].(string), p.payload["timestamp"].(string)
		if p.url != "https://lms.test/mod/lti/services.php/7/lineitems/4/lineitem/scores?type_id=2" || p.token != "tok-1" {
			t.Fatalf("posted to %s with %s", p.url, p.token)
		}
		if stamp <= last[user] || p.payload["scoreGiven"].(float64) != given[user] {
			t.Fatalf("%s's scores out of order: %v after %s", user, p.payload, last[user])
		}
		last[user], given[user] = stamp, given[user]+1
	}
	waitUntil(t, "every score's event", func() bool { return len(s.events()) == len(sent) })
	if s.tokens.count() != 1 {
		t.Fatalf("%d tokens", s.tokens.count())
	}
	if r := s.scores.record(sent[0].ID); r.Attempts != 1 || r.Timestamp.IsZero() {
		t.Fatalf("%+v", r)
	}
}

// A platform throttling is retried after its Retry-After, with the same
// stamp; a refused token is dropped and asked for again once; another
// refusal fails the score with the platform's words, and the queue goes
// on.
func TestDeliverScoreRetries(t *testing.T) {
	s := newScoresFixture(t, nil)
	s.gradebook.fail = map[float64][]error{
		1: {&fault.Error{Kind: fault.Unavailable, Message: "The platform's scores service answered HTTP 429.", RetryAfter: time.Minute}},
		2: {fault.New(fault.BadGateway, "The platform's scores service answered HTTP 400: user not enrolled")},
	}
	s.gradebook.refused["tok-1"] = true
	first, second, third := s.submit("a", 1), s.submit("a", 2), s.submit("a", 3)
	stop := s.run()
	waitUntil(t, "the first attempt", func() bool { return s.scores.record(first.ID).Attempts == 1 })
	r := s.scores.record(first.ID)
	if r.Status != ltiapp.ScorePending || r.Reason != "The platform's scores service answered HTTP 429." || s.tokens.count() != 2 {
		t.Fatalf("after a 429: %+v; %d tokens", r, s.tokens.count())
	}
	stop()
	if got := s.scores.record(second.ID); got.Attempts != 0 {
		t.Fatalf("the next score went before the first: %+v", got)
	}
	s.clock.Add(time.Minute)
	defer s.run()()
	delivered := s.waitStatus(first.ID, ltiapp.ScoreDelivered)
	if delivered.Attempts != 2 || !delivered.Timestamp.Equal(r.Timestamp) {
		t.Fatalf("delivered %+v after %+v", delivered, r)
	}
	failed := s.waitStatus(second.ID, ltiapp.ScoreFailed)
	if failed.Reason != "The platform's scores service answered HTTP 400: user not enrolled" || failed.Attempts != 1 {
		t.Fatalf("%+v", failed)
	}
	s.waitStatus(third.ID, ltiapp.ScoreDelivered)
	waitUntil(t, "the events", func() bool { return len(s.events()) == 3 })
	events := s.events()
	if len(events) != 3 || events[1].Type != domain.EventLTIScoreFailed || events[1].Reason != failed.Reason ||
		events[1].Target != (domain.Target{Type: domain.TargetLTIScore, ID: second.ID}) || !events[1].Actor.System {
		t.Fatalf("%+v", events)
	}
	posts := s.gradebook.taken()
	if len(posts) != 2 || posts[0].token != "tok-2" {
		t.Fatalf("%+v", posts)
	}
}

// A score whose retries are spent fails with the last refusal.
func TestDeliverScoreGivesUp(t *testing.T) {
	s := newScoresFixture(t, func(attempt int, _ func() float64) (time.Duration, bool) { return time.Second, attempt < 2 })
	down := fault.New(fault.Unavailable, "The platform's scores service answered HTTP 503.")
	s.gradebook.fail = map[float64][]error{1: {down, down}}
	r := s.submit("a", 1)
	stop := s.run()
	waitUntil(t, "the first attempt", func() bool { return s.scores.record(r.ID).Attempts == 1 })
	stop()
	s.clock.Add(time.Second)
	defer s.run()()
	failed := s.waitStatus(r.ID, ltiapp.ScoreFailed)
	if failed.Attempts != 2 || failed.Reason != down.Message {
		t.Fatalf("%+v", failed)
	}
}

// Launches without a line item but allowed to manage them share the one
// found or made for their resource link (with the exam as its resource).
func TestDeliverScoreMakesTheLineItemOnce(t *testing.T) {
	s := newScoresFixture(t, nil)
	var sent []ltiapp.ScoreRecord
	for i := range 3 {
		sent = append(sent, s.submit("c", float64(i)), s.submit("d", float64(i)))
	}
	defer s.run()()
	// The other user's queue waits while the line item is made: time
	// passes for it.
	for _, r := range sent {
		waitUntil(t, "score "+r.ID+" delivered", func() bool {
			s.clock.Add(100 * time.Millisecond)
			return s.scores.record(r.ID).Status == ltiapp.ScoreDelivered
		})
	}
	if made := s.gradebook.madeCount(); made != 1 {
		t.Fatalf("%d line items made", made)
	}
	for _, p := range s.gradebook.taken() {
		if p.url != "https://lms.test/lineitems/1/scores?type_id=2" {
			t.Fatalf("posted to %s", p.url)
		}
	}
}

// waitUntil waits until cond holds.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testenv.Eventually(t, 5*time.Second, func() error {
		if cond() {
			return nil
		}
		return errors.New("not yet")
	}, "%s", what)
}

// count is how many tokens were granted.
func (g *grantor) count() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.grants
}

// A line item's search that fails gives its claim up: the next turn
// claims it at once, and the score goes out on its retry.
func TestDeliverScoreReleasesALineItemClaim(t *testing.T) {
	s := newScoresFixture(t, func(int, func() float64) (time.Duration, bool) { return time.Second, true })
	s.gradebook.findFail = []error{fault.New(fault.Unavailable, "The platform's line items service answered HTTP 503.")}
	r := s.submit("c", 1)
	stop := s.run()
	waitUntil(t, "the first attempt", func() bool { return s.scores.record(r.ID).Attempts == 1 })
	stop()
	if got := s.scores.record(r.ID); got.Status != ltiapp.ScorePending || got.Reason != "The platform's line items service answered HTTP 503." {
		t.Fatalf("%+v", got)
	}
	s.clock.Add(time.Second)
	defer s.run()()
	s.waitStatus(r.ID, ltiapp.ScoreDelivered)
	if made := s.gradebook.madeCount(); made != 1 {
		t.Fatalf("%d line items made", made)
	}
}
