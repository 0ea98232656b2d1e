package app_test

import (
	"bytes"
	"context"
	"crypto/rsa"
	"sync"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/memstore"
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/secretbox"
	"github.com/liveproctor/workspaces/services/workspace/internal/app"
	"github.com/liveproctor/workspaces/services/workspace/internal/app/apptest"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	"github.com/liveproctor/workspaces/services/workspace/internal/lti/adapters/ltistate"
	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

const (
	rootKey    = "00000000-0000-4000-8000-000000000001"
	rootSecret = "00000000-0000-4000-8000-000000000002"
)

// deps are what a fixture's use cases are built with; what is left unset
// is a memory store, or a stand-in that is never reached.
type deps struct {
	repo      domain.Repository
	now       func() time.Time
	policy    ltidomain.URLPolicy
	limits    ltiapp.FailureLimits
	nonces    ltiapp.NonceStore
	logins    ltiapp.LTI13LoginStore
	keys      ltiapp.PlatformKeys
	deepLinks ltiapp.LTI13DeepLinkStore
	records   ltiapp.LTI13LaunchStore
	health    ltiapp.LaunchHealthStore
	links     ltiapp.RegistrationLinkStore
	registrar ltiapp.PlatformRegistrar
	toolKeys  ltidomain.ToolKeyStore
	// eventLog keeps the audit trail in repo (a memstore), settled at once.
	eventLog bool
}

// fixture is the workspace application, bootstrapped with a root
// workspace, and the LTI use cases over it.
type fixture struct {
	t    testing.TB
	app  *app.App
	root domain.Caller

	regs        *ltiapp.Registrations
	launches11  *ltiapp.LTI11Launches
	logins13    *ltiapp.LTI13Logins
	launches13  *ltiapp.LTI13Launches
	launches    *ltiapp.Launches
	deepLinking *ltiapp.DeepLinking
	dynamic     *ltiapp.DynamicRegistration
	toolKeys    *ltiapp.ToolKeys
}

func newFixture(t testing.TB, d deps) *fixture {
	t.Helper()
	if d.repo == nil {
		d.repo = memstore.New()
	}
	if d.now == nil {
		d.now = time.Now
	}
	if d.limits == nil {
		d.limits = noLimits{}
	}
	if d.nonces == nil {
		d.nonces = ltistate.NewMemoryNonces(1000, d.now)
	}
	if d.logins == nil {
		d.logins = ltistate.NewMemoryLogins(100, d.now)
	}
	if d.keys == nil {
		d.keys = noPlatformKeys{}
	}
	if d.deepLinks == nil {
		d.deepLinks = ltistate.NewMemoryDeepLinks(100, d.now)
	}
	if d.records == nil {
		d.records = &memoryLaunches{}
	}
	if d.health == nil {
		d.health = &memoryHealth{}
	}
	if d.links == nil {
		d.links = ltistate.NewMemoryRegistrationLinks(10, d.now)
	}
	if d.registrar == nil {
		d.registrar = &fakePlatform{}
	}
	if d.toolKeys == nil {
		d.toolKeys = &memstore.ToolKeys{}
	}
	box, err := secretbox.New(bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32))
	if err != nil {
		t.Fatal(err)
	}
	urls := ltidomain.NewToolURLs("https://lti.test")
	opts := []app.Option{app.WithClock(d.now)}
	if d.eventLog {
		opts = append(opts, app.WithEventLog(d.repo.(app.EventLog), app.EventSettings{Settle: time.Nanosecond}))
	}
	a := app.New(d.repo, box, app.Settings{LTIToolURLs: urls}, opts...)
	ctx := context.Background()
	if _, err := a.Bootstrap(ctx, app.BootstrapConfig{
		WorkspaceID: "root", Name: "Root", Products: []string{"pub/math", "pub/ela"},
		AppKey: rootKey, AppSecret: rootSecret,
	}); err != nil {
		t.Fatal(err)
	}
	root, err := a.Authenticate(ctx, rootKey, rootSecret)
	if err != nil {
		t.Fatal(err)
	}
	ws := app.NewLTIPort(a)
	s := ltiapp.Settings{URLs: urls, Policy: d.policy, Now: d.now}
	toolKeys := ltiapp.NewToolKeys(d.toolKeys, box, ltidomain.DefaultToolKeyRotation, d.now)
	return &fixture{
		t: t, app: a, root: root,
		regs:        ltiapp.NewRegistrations(ws, d.health, s),
		launches11:  ltiapp.NewLTI11Launches(ws, d.nonces, d.limits, s),
		logins13:    ltiapp.NewLTI13Logins(ws, d.logins, d.health, s),
		launches13:  ltiapp.NewLTI13Launches(ws, d.logins, d.keys, d.deepLinks, d.records, d.limits, d.health, s),
		launches:    ltiapp.NewLaunches(ws, d.records),
		deepLinking: ltiapp.NewDeepLinking(ws, d.deepLinks, toolKeys, s),
		dynamic:     ltiapp.NewDynamicRegistration(ws, d.links, d.registrar, s),
		toolKeys:    toolKeys,
	}
}

// create makes a workspace as caller and returns a caller for its server pair.
func (f *fixture) create(caller domain.Caller, in app.CreateInput) (app.CreateResult, domain.Caller) {
	f.t.Helper()
	return apptest.CreateWorkspace(f.t, f.app, caller, in)
}

// noLimits limits nothing and counts nothing.
type noLimits struct{}

func (noLimits) CheckFailures(context.Context, string) error { return nil }
func (noLimits) Failed(context.Context, string)              {}

// noPlatformKeys holds no platform's key.
type noPlatformKeys struct{}

func (noPlatformKeys) Key(context.Context, string, string, string) (*rsa.PublicKey, error) {
	return nil, ltiapp.ErrPlatformKeyNotFound
}

// clock is a settable clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// memoryLaunches is ltiapp.LTI13LaunchStore in memory, without expiry; or
// down, refusing every write.
type memoryLaunches struct {
	mu   sync.Mutex
	byID map[string]ltiapp.LTI13LaunchRecord
	down bool
}

func (m *memoryLaunches) Put(_ context.Context, r ltiapp.LTI13LaunchRecord) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return fault.New(fault.Unavailable, "the workspace store is unavailable; retry shortly")
	}
	if m.byID == nil {
		m.byID = map[string]ltiapp.LTI13LaunchRecord{}
	}
	m.byID[r.ID] = r
	return nil
}

func (m *memoryLaunches) Get(_ context.Context, workspaceID, id string) (ltiapp.LTI13LaunchRecord, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.byID[id]
	if !ok || r.WorkspaceID != workspaceID {
		return ltiapp.LTI13LaunchRecord{}, false, nil
	}
	return r, true, nil
}

func (m *memoryLaunches) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.byID)
}

// memoryHealth is ltiapp.LaunchHealthStore in memory, by the domain's
// rules (as the MongoDB adapter's writes are); or down, failing every
// call.
type memoryHealth struct {
	mu     sync.Mutex
	byID   map[string]memoryHealthRecord
	writes int
	down   bool
}

type memoryHealthRecord struct {
	workspaceID string
	health      ltidomain.LaunchHealth
}

var errHealthDown = fault.New(fault.Unavailable, "the workspace store is unavailable; retry shortly")

func (m *memoryHealth) change(workspaceID, registrationID string, apply func(ltidomain.LaunchHealth) ltidomain.LaunchHealth) {
	if m.byID == nil {
		m.byID = map[string]memoryHealthRecord{}
	}
	r := m.byID[registrationID]
	r.workspaceID, r.health = workspaceID, apply(r.health)
	m.byID[registrationID] = r
}

func (m *memoryHealth) Accepted(_ context.Context, workspaceID, registrationID string, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.writes++
	if m.down {
		return errHealthDown
	}
	m.change(workspaceID, registrationID, func(h ltidomain.LaunchHealth) ltidomain.LaunchHealth { return h.Accepted(at) })
	return nil
}

func (m *memoryHealth) Refused(_ context.Context, workspaceID string, registrationIDs []string, f ltidomain.LaunchFailure) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.writes++
	if m.down {
		return errHealthDown
	}
	for _, id := range registrationIDs {
		m.change(workspaceID, id, func(h ltidomain.LaunchHealth) ltidomain.LaunchHealth { return h.Refused(f) })
	}
	return nil
}

func (m *memoryHealth) Health(_ context.Context, workspaceID string, registrationIDs []string) (map[string]ltidomain.LaunchHealth, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return nil, errHealthDown
	}
	out := map[string]ltidomain.LaunchHealth{}
	for _, id := range registrationIDs {
		if r, ok := m.byID[id]; ok && r.workspaceID == workspaceID {
			out[id] = r.health
		}
	}
	return out, nil
}

func (m *memoryHealth) Forget(_ context.Context, workspaceID, registrationID string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return errHealthDown
	}
	if r, ok := m.byID[registrationID]; ok && r.workspaceID == workspaceID {
		delete(m.byID, registrationID)
	}
	return nil
}

// of is the health recorded of registrationID, whichever workspace's.
func (m *memoryHealth) of(registrationID string) ltidomain.LaunchHealth {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.byID[registrationID].health
}

// setDown makes every call fail, or succeed again.
func (m *memoryHealth) setDown(down bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.down = down
}

// writeCount is how many writes the store took.
func (m *memoryHealth) writeCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.writes
}
