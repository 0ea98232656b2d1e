package portalstate_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/ident"
	"github.com/liveproctor/workspaces/pkg/testenv"
	"github.com/liveproctor/workspaces/services/workspace/internal/portal/adapters/portalstate"
	portalapp "github.com/liveproctor/workspaces/services/workspace/internal/portal/app"
	portaldomain "github.com/liveproctor/workspaces/services/workspace/internal/portal/domain"
)

// newLink is a link made now (the store's expiries are real time in
// Redis).
func newLink(t *testing.T, now time.Time) portaldomain.Link {
	t.Helper()
	l, err := portaldomain.NewLink(ident.NewUUID(), "school", "https://vendor.example/back", now.Add(-24*time.Hour), now)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// storeContract is what every portalapp.Store does: a secret leads to its
// link once, however many callers race for it; a link is read and changed
// whole, no change lost to a concurrent one; a session's token leads to
// its link.
func storeContract(t *testing.T, s portalapp.Store) {
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Millisecond)
	l, secret := newLink(t, now), ident.NewSecret()
	if err := s.Add(ctx, l, secret); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := s.Link(ctx, l.ID); err != nil || !ok || got != l {
		t.Fatalf("Link = %+v, %v, %v; want %+v", got, ok, err, l)
	}
	if _, ok, err := s.Link(ctx, ident.NewUUID()); ok || err != nil {
		t.Fatalf("Link of an unknown id = %v, %v", ok, err)
	}
	if _, ok, err := s.Spend(ctx, ident.NewSecret()); ok || err != nil {
		t.Fatalf("Spend of an unknown secret = %v, %v", ok, err)
	}
	if id, ok, err := s.Spend(ctx, secret); err != nil || !ok || id != l.ID {
		t.Fatalf("Spend = %q, %v, %v; want %q", id, ok, err, l.ID)
	}
	if _, ok, err := s.Spend(ctx, secret); ok || err != nil {
		t.Fatalf("a second Spend = %v, %v; want nothing", ok, err)
	}

	// Of twenty openings of one link at once, one gets it.
	raced, racedSecret := newLink(t, now), ident.NewSecret()
	if err := s.Add(ctx, raced, racedSecret); err != nil {
		t.Fatal(err)
	}
	var wins atomic.Int32
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if _, ok, err := s.Spend(ctx, racedSecret); err == nil && ok {
				wins.Add(1)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d of 20 concurrent spends of one secret won, want 1", wins.Load())
	}

	// Twenty sessions started at once on one link: the link admits one,
	// and the store keeps exactly that one.
	var opened atomic.Int32
	tokens := make([]string, 20)
	for i := range tokens {
		tokens[i] = ident.NewSecret()
		wg.Go(func() {
			_, ok, err := s.Update(ctx, raced.ID, func(l *portaldomain.Link) (bool, error) {
				return true, l.Open(portaldomain.Digest(tokens[i]), now)
			})
			switch {
			case err == nil && ok:
				opened.Add(1)
			case !errors.Is(err, portaldomain.ErrLinkUnusable):
				t.Errorf("Update = %v, %v; want ErrLinkUnusable for all but one", ok, err)
			}
		})
	}
	wg.Wait()
	got, ok, err := s.Link(ctx, raced.ID)
	if err != nil || !ok || opened.Load() != 1 {
		t.Fatalf("%d of 20 openings won (%v, %v), want 1", opened.Load(), ok, err)
	}
	admitted := 0
	for _, token := range tokens {
		if got.Admits(portaldomain.Digest(token), now) {
			admitted++
		}
	}
	if admitted != 1 {
		t.Fatalf("the link admits %d of the sessions, want the winner's", admitted)
	}

	// An apply that changes nothing, or fails, stores nothing.
	refusal := errors.New("refused")
	for _, apply := range []func(*portaldomain.Link) (bool, error){
		func(l *portaldomain.Link) (bool, error) { l.ReturnURL = "unchanged"; return false, nil },
		func(l *portaldomain.Link) (bool, error) { l.ReturnURL = "refused"; return true, refusal },
	} {
		if _, _, err := s.Update(ctx, l.ID, apply); err != nil && !errors.Is(err, refusal) {
			t.Fatal(err)
		}
	}
	if stored, _, _ := s.Link(ctx, l.ID); stored != l {
		t.Fatalf("after refused changes the link is %+v, want %+v", stored, l)
	}
	if _, ok, err := s.Update(ctx, ident.NewUUID(), func(*portaldomain.Link) (bool, error) { return true, nil }); ok || err != nil {
		t.Fatalf("Update of an unknown id = %v, %v", ok, err)
	}

	// A session's token leads to its link; no other token does.
	token := ident.NewSecret()
	if err := s.StartSession(ctx, token, l.ID, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if id, ok, err := s.SessionLink(ctx, token); err != nil || !ok || id != l.ID {
		t.Fatalf("SessionLink = %q, %v, %v; want %q", id, ok, err, l.ID)
	}
	if _, ok, err := s.SessionLink(ctx, ident.NewSecret()); ok || err != nil {
		t.Fatalf("SessionLink of an unknown token = %v, %v", ok, err)
	}

	// Links made are counted per workspace and window, concurrent counts
	// none lost.
	window := portaldomain.Window(now)
	ws := "school-" + ident.NewUUID()
	var counting sync.WaitGroup
	for range 20 {
		counting.Go(func() {
			if _, err := s.CountMade(ctx, ws, window); err != nil {
				t.Error(err)
			}
		})
	}
	counting.Wait()
	if n, err := s.CountMade(ctx, ws, window); err != nil || n != 21 {
		t.Fatalf("CountMade after 20 = %d, %v; want 21", n, err)
	}
	if n, err := s.CountMade(ctx, ws, window.Add(portaldomain.LinkWindow)); err != nil || n != 1 {
		t.Fatalf("CountMade in the next window = %d, %v; want 1", n, err)
	}
	if n, err := s.CountMade(ctx, "other-"+ws, window); err != nil || n != 1 {
		t.Fatalf("CountMade of another workspace = %d, %v; want 1", n, err)
	}
}

func TestMemoryStore(t *testing.T) {
	storeContract(t, portalstate.NewMemoryStore(1000, nil))
}

// The memory store forgets what expires, on its clock, and refuses a link
// rather than forget one in use.
func TestMemoryStoreExpiresAndBounds(t *testing.T) {
	now := time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC)
	s := portalstate.NewMemoryStore(2, func() time.Time { return now })
	ctx := context.Background()
	a, b, c := newLink(t, now), newLink(t, now), newLink(t, now)
	secretA, token := ident.NewSecret(), ident.NewSecret()
	for _, l := range []portaldomain.Link{a, b} {
		secret := ident.NewSecret()
		if l == a {
			secret = secretA
		}
		if err := s.Add(ctx, l, secret); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Add(ctx, c, ident.NewSecret()); fault.KindOf(err) != fault.Unavailable {
		t.Fatalf("Add to a full store = %v, want Unavailable", err)
	}
	if err := s.StartSession(ctx, token, a.ID, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	now = a.ExpiresAt
	if _, ok, _ := s.Spend(ctx, secretA); ok {
		t.Error("an expired link's secret still leads to it")
	}
	if _, ok, _ := s.Link(ctx, a.ID); !ok {
		t.Error("a link is forgotten before its ForgetAt")
	}
	now = a.ForgetAt()
	if _, ok, _ := s.Link(ctx, a.ID); ok {
		t.Error("a link is remembered past its ForgetAt")
	}
	if _, ok, _ := s.SessionLink(ctx, token); ok {
		t.Error("a session's token leads to its link past the session's end")
	}
	if err := s.Add(ctx, c, ident.NewSecret()); err != nil {
		t.Fatalf("Add once the others expired = %v", err)
	}
}

func startRedis(t *testing.T) (*testenv.Server, redis.UniversalClient) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	srv, err := testenv.StartRedis(ctx, testenv.RedisOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: []string{srv.Addr()}, MaxRetries: -1,
		DialTimeout: 500 * time.Millisecond, ReadTimeout: 500 * time.Millisecond, WriteTimeout: 500 * time.Millisecond})
	t.Cleanup(func() { _ = rdb.Close() })
	return srv, rdb
}

func TestRedisStore(t *testing.T) {
	_, rdb := startRedis(t)
	s := portalstate.NewRedisStore(rdb)
	storeContract(t, s)

	// The keys name the link's id and the digests of the secret and the
	// token, never either; the link's value holds neither; each key
	// expires when what it leads to stops mattering.
	ctx := context.Background()
	if err := rdb.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	l, secret, token := newLink(t, now), ident.NewSecret(), ident.NewSecret()
	if err := s.Add(ctx, l, secret); err != nil {
		t.Fatal(err)
	}
	if err := s.StartSession(ctx, token, l.ID, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	keys, err := rdb.Keys(ctx, "*").Result()
	if err != nil || len(keys) != 3 {
		t.Fatalf("keys %q, %v; want a link, its secret's way and its token's", keys, err)
	}
	for key, until := range map[string]time.Time{
		portalstate.LinkKey(l.ID):     l.ForgetAt(),
		portalstate.OpenKey(secret):   l.ExpiresAt,
		portalstate.SessionKey(token): now.Add(time.Hour),
	} {
		if strings.Contains(key, secret) || strings.Contains(key, token) {
			t.Errorf("key %q holds a secret", key)
		}
		at, err := rdb.PExpireTime(ctx, key).Result()
		if err != nil || at != time.Duration(until.UnixMilli())*time.Millisecond {
			t.Errorf("%s expires at %v (%v), want %v", key, at, err, until.UnixMilli())
		}
	}
	raw, err := rdb.Get(ctx, portalstate.LinkKey(l.ID)).Result()
	var stored map[string]any
	if err != nil || json.Unmarshal([]byte(raw), &stored) != nil || stored["workspaceId"] != "school" ||
		strings.Contains(raw, secret) || strings.Contains(raw, token) {
		t.Fatalf("stored link %s, %v", raw, err)
	}

	// Opening the link makes it last as long as its session.
	opened := now.Add(time.Minute)
	l, _, err = s.Update(ctx, l.ID, func(l *portaldomain.Link) (bool, error) {
		return true, l.Open(portaldomain.Digest(token), opened)
	})
	if err != nil {
		t.Fatal(err)
	}
	if at, err := rdb.PExpireTime(ctx, portalstate.LinkKey(l.ID)).Result(); err != nil || at != time.Duration(l.SessionEnd().UnixMilli())*time.Millisecond {
		t.Errorf("the opened link expires at %v (%v), want its session's end %v", at, err, l.SessionEnd())
	}
}

// With Redis down the portal answers Unavailable, with nothing of the
// secret in the message.
func TestRedisDownIsUnavailable(t *testing.T) {
	srv, rdb := startRedis(t)
	s := portalstate.NewRedisStore(rdb)
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	secret := ident.NewSecret()
	_, _, spendErr := s.Spend(ctx, secret)
	_, _, sessionErr := s.SessionLink(ctx, secret)
	_, countErr := s.CountMade(ctx, "school", portaldomain.Window(time.Now()))
	for name, err := range map[string]error{
		"Add":         s.Add(ctx, newLink(t, time.Now()), secret),
		"Spend":       spendErr,
		"SessionLink": sessionErr,
		"CountMade":   countErr,
	} {
		e, ok := fault.As(err)
		if !ok || e.Kind != fault.Unavailable || strings.Contains(e.Message, secret) {
			t.Errorf("%s with Redis down = %v, want Unavailable", name, err)
		}
	}
}

// On a 3-master Cluster every command names one key: the store works as
// on one server.
func TestRedisStoreOnCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cluster, err := testenv.StartRedisCluster(ctx, t.TempDir(), 3)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Stop() })
	rdb := redis.NewUniversalClient(&redis.UniversalOptions{Addrs: cluster.Addrs(),
		DialTimeout: 500 * time.Millisecond, ReadTimeout: 500 * time.Millisecond, WriteTimeout: 500 * time.Millisecond})
	t.Cleanup(func() { _ = rdb.Close() })
	// The client learns the slots on its own time: wait until keys spread
	// over the masters can be written.
	testenv.Eventually(t, 30*time.Second, func() error {
		for range 16 {
			if err := rdb.Set(ctx, portalstate.LinkKey(ident.NewUUID()), 1, time.Minute).Err(); err != nil {
				return err
			}
		}
		return nil
	}, "every master of the cluster takes writes")
	storeContract(t, portalstate.NewRedisStore(rdb))
}
