package app_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/memstore"
	"github.com/liveproctor/workspaces/services/workspace/internal/app"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// bus is an in-memory ChangeNotifier standing in for the Redis one: it
// records every change, and hands it at once to the replicas on it.
type bus struct {
	mu       sync.Mutex
	changes  []change
	replicas []*app.App
}

type change struct {
	kind        string // "keyPairs" or "workspace"
	workspaceID string
	appKeys     []string
}

func (b *bus) KeyPairsChanged(_ context.Context, workspaceID string, appKeys []string) {
	b.tell(change{"keyPairs", workspaceID, appKeys})
}

func (b *bus) WorkspaceChanged(_ context.Context, workspaceID string, appKeys []string) {
	b.tell(change{"workspace", workspaceID, appKeys})
}

func (b *bus) tell(c change) {
	b.mu.Lock()
	b.changes = append(b.changes, c)
	replicas := slices.Clone(b.replicas)
	b.mu.Unlock()
	for _, r := range replicas {
		r.ForgetCredentials(c.appKeys...)
	}
}

// heard reports whether a change of kind named appKey.
func (b *bus) heard(kind, appKey string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.ContainsFunc(b.changes, func(c change) bool { return c.kind == kind && slices.Contains(c.appKeys, appKey) })
}

// wantLast fails the test unless the last change is of kind, for
// workspaceID, naming exactly appKeys.
func (b *bus) wantLast(t *testing.T, kind, workspaceID string, appKeys ...string) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.changes) == 0 {
		t.Fatalf("no change told, want %s of %s", kind, workspaceID)
	}
	c := b.changes[len(b.changes)-1]
	if c.kind != kind || c.workspaceID != workspaceID || !sameKeys(c.appKeys, appKeys) {
		t.Fatalf("last change told %+v, want %s of %s naming %v", c, kind, workspaceID, appKeys)
	}
}

func sameKeys(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// Every change that a cached credential would hide is told, once stored,
// and another replica that holds the pair's credential acts on it at
// once: a new rate limit, a revocation, a rotation, a delete, an undelete.
func TestChangesReachTheOtherReplicas(t *testing.T) {
	repo := memstore.New()
	b := &bus{}
	here := newFixtureOn(t, repo, app.WithChangeNotifier(b))
	other := newFixtureOn(t, repo, app.WithChangeNotifier(b))
	b.replicas = []*app.App{here.app, other.app}
	ctx := context.Background()
	res, self := here.create(here.root, app.CreateInput{ID: "w"})
	ci, err := here.app.CreateWorkspaceKey(ctx, self, "w", domain.NewKey{Name: "ci", Tags: restTags})
	if err != nil {
		t.Fatal(err)
	}
	server, lti := res.Server, res.LTI
	authenticate := func(appKey, secret string) (domain.Caller, error) {
		return other.app.Authenticate(ctx, appKey, secret)
	}
	for _, p := range [][2]string{{server.ConsumerKey, server.SharedSecret}, {lti.ConsumerKey, lti.SharedSecret}, {ci.Key.AppKey, ci.Key.AppSecret}} {
		if _, err := authenticate(p[0], p[1]); err != nil { // cached there now
			t.Fatal(err)
		}
	}

	limit := domain.RateLimit{PerSecond: 5, Burst: 7}
	if _, err := here.app.UpdateWorkspace(ctx, here.root, app.UpdateInput{ID: "w", Changes: domain.Changes{RateLimit: &limit}}); err != nil {
		t.Fatal(err)
	}
	b.wantLast(t, "workspace", "w", server.ConsumerKey, lti.ConsumerKey, ci.Key.AppKey)
	if c, err := authenticate(server.ConsumerKey, server.SharedSecret); err != nil || c.RateLimit == nil || *c.RateLimit != limit {
		t.Fatalf("the other replica after a new rate limit: %+v, %v", c, err)
	}

	if _, err := here.app.RevokeWorkspaceKey(ctx, self, "w", ci.Key.AppKey); err != nil {
		t.Fatal(err)
	}
	b.wantLast(t, "keyPairs", "w", ci.Key.AppKey)
	if _, err := authenticate(ci.Key.AppKey, ci.Key.AppSecret); !errors.Is(err, app.ErrBadCredentials) {
		t.Fatalf("the other replica after a revocation: %v", err)
	}

	hour := time.Hour
	r, err := here.app.RotateWorkspaceKey(ctx, self, "w", lti.ConsumerKey, &hour)
	if err != nil {
		t.Fatal(err)
	}
	b.wantLast(t, "keyPairs", "w", lti.ConsumerKey)
	if c, err := authenticate(lti.ConsumerKey, lti.SharedSecret); err != nil || !c.KeyExpiresAt.Equal(r.Previous.ExpiresAt) {
		t.Fatalf("the other replica after a rotation: %+v, %v; want the old pair's expiresAt", c, err)
	}

	if _, err := here.app.DeleteWorkspace(ctx, here.root, "w", app.Precondition{}); err != nil {
		t.Fatal(err)
	}
	b.wantLast(t, "workspace", "w", server.ConsumerKey, lti.ConsumerKey, r.Successor.AppKey)
	if _, err := authenticate(server.ConsumerKey, server.SharedSecret); !errors.Is(err, app.ErrBadCredentials) {
		t.Fatalf("the other replica after a delete: %v", err)
	}

	// The other replica remembered "unknown"; the undelete drops that too.
	if _, err := here.app.UndeleteWorkspace(ctx, here.root, "w"); err != nil {
		t.Fatal(err)
	}
	b.wantLast(t, "workspace", "w", server.ConsumerKey, lti.ConsumerKey, r.Successor.AppKey)
	if _, err := authenticate(server.ConsumerKey, server.SharedSecret); err != nil {
		t.Fatalf("the other replica after an undelete: %v", err)
	}
}

// When changes may have been missed, every cached credential goes: a
// replica that heard nothing (no bus here) refuses a revoked pair once
// told to forget all.
func TestForgetAllCredentialsDropsWhatWasMissed(t *testing.T) {
	repo := memstore.New()
	here := newFixtureOn(t, repo)
	other := newFixtureOn(t, repo)
	ctx := context.Background()
	res, self := here.create(here.root, app.CreateInput{ID: "w"})
	lti := res.LTI
	if _, err := other.app.Authenticate(ctx, lti.ConsumerKey, lti.SharedSecret); err != nil {
		t.Fatal(err)
	}
	if _, err := here.app.RevokeWorkspaceKey(ctx, self, "w", lti.ConsumerKey); err != nil {
		t.Fatal(err)
	}
	if _, err := other.app.Authenticate(ctx, lti.ConsumerKey, lti.SharedSecret); err != nil {
		t.Fatalf("the untold replica's cached credential: %v, want still accepted within its TTL", err)
	}
	other.app.ForgetAllCredentials()
	if _, err := other.app.Authenticate(ctx, lti.ConsumerKey, lti.SharedSecret); !errors.Is(err, app.ErrBadCredentials) {
		t.Fatalf("after ForgetAllCredentials: %v", err)
	}
}
