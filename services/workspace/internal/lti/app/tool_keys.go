package app

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/liveproctor/workspaces/pkg/jose"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// toolKeyReread is how long a replica reuses the key set it read, at most.
// A successor another replica made is published a rotation's lead before it
// signs; NewToolKeys shortens the reuse to a quarter of the lead when that is
// less (the tests' schedules of seconds), so every replica reads the
// successor well inside its lead: it publishes it before it signs, and
// signs with it when due, not with its predecessor past the switch.
const toolKeyReread = time.Minute

// toolKeyBits is the size of the tool's RSA keys.
const toolKeyBits = 2048

// Sealer protects the tool's private keys at rest (the service's secret
// box), each bound to its kid, so a stored key cannot be moved to another.
type Sealer interface {
	Seal(kid, secret string) ([]byte, error)
	Open(kid string, sealed []byte) (string, error)
}

// ToolKeys are the use cases of the tool's LTI 1.3 keys: it brings them up
// to date (Rotate, which the service runs at start and every
// LTI_TOOL_KEY_CHECK_INTERVAL), publishes them (JWKS) and signs the tool's
// tokens with them (Sign). The set is stored (ltidomain.ToolKeyStore) and
// rotated by whichever replica finds it due; the revision-checked save
// makes one of them win.
type ToolKeys struct {
	store    ltidomain.ToolKeyStore
	secrets  Sealer
	rotation ltidomain.ToolKeyRotation
	reread   time.Duration // min(toolKeyReread, rotation.Lead/4)
	now      func() time.Time

	mu     sync.Mutex // one rotation, one read at a time
	set    ltidomain.ToolKeys
	readAt time.Time
	opened map[string]*rsa.PrivateKey // by kid, opened once
}

// NewToolKeys returns the tool keys' use cases over store, their private
// halves sealed by secrets, rotated by r on the clock now (time.Now when
// nil).
func NewToolKeys(store ltidomain.ToolKeyStore, secrets Sealer, r ltidomain.ToolKeyRotation, now func() time.Time) *ToolKeys {
	notNil(store, secrets)
	if now == nil {
		now = time.Now
	}
	return &ToolKeys{store: store, secrets: secrets, rotation: r, reread: min(toolKeyReread, r.Lead/4), now: now, opened: map[string]*rsa.PrivateKey{}}
}

// Rotate brings the stored set up to date (ltidomain.ToolKeys.Rotate): the
// first start makes the first key, later ones the successors. Another
// replica's concurrent rotation wins, and this one reads its result.
func (t *ToolKeys) Rotate(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for attempt := 0; ; attempt++ {
		set, err := t.store.ToolKeys(ctx)
		if err != nil {
			return err
		}
		changed, err := set.Rotate(ctx, t.now(), t.rotation, t.newKey)
		if err != nil {
			return err
		}
		if !changed {
			t.set, t.readAt = set, t.now()
			return nil
		}
		err = t.store.SaveToolKeys(ctx, set)
		if err == nil {
			set.Revision++
			t.set, t.readAt = set, t.now()
			return nil
		}
		if !errors.Is(err, domain.ErrRevisionChanged) || attempt == 2 {
			return fmt.Errorf("save the tool's keys: %w", err)
		}
	}
}

// current returns the set, read again when t.reread has passed.
func (t *ToolKeys) current(ctx context.Context) (ltidomain.ToolKeys, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.set.Revision == 0 || !t.now().Before(t.readAt.Add(t.reread)) {
		set, err := t.store.ToolKeys(ctx)
		if err != nil {
			return ltidomain.ToolKeys{}, err
		}
		t.set, t.readAt = set, t.now()
	}
	return t.set, nil
}

// JWKS is the tool's published key set, as platforms fetch it.
func (t *ToolKeys) JWKS(ctx context.Context) ([]byte, error) {
	set, err := t.current(ctx)
	if err != nil {
		return nil, err
	}
	published := set.Published()
	keys := make([]jose.PublicKey, len(published))
	for i, k := range published {
		keys[i] = jose.PublicKey{KID: k.KID, Key: k.Public}
	}
	return jose.MarshalKeySet(keys)
}

// Sign signs claims with the key that signs now.
func (t *ToolKeys) Sign(ctx context.Context, claims any) (string, error) {
	set, err := t.current(ctx)
	if err != nil {
		return "", err
	}
	k, err := set.Signing(t.now())
	if err != nil {
		return "", err
	}
	private, err := t.open(k)
	if err != nil {
		return "", err
	}
	return jose.Sign(claims, k.KID, private)
}

// open returns k's private key, opened from its seal once.
func (t *ToolKeys) open(k ltidomain.ToolKey) (*rsa.PrivateKey, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if p, ok := t.opened[k.KID]; ok {
		return p, nil
	}
	der, err := t.secrets.Open(k.KID, k.Sealed)
	if err != nil {
		return nil, fmt.Errorf("open LTI signing key %s: %w", k.KID, err)
	}
	parsed, err := x509.ParsePKCS8PrivateKey([]byte(der))
	private, ok := parsed.(*rsa.PrivateKey)
	if err != nil || !ok {
		return nil, fmt.Errorf("LTI signing key %s is not an RSA key", k.KID)
	}
	t.opened[k.KID] = private
	return private, nil
}

// newKey makes a key: 2048-bit RSA, a random kid (128 bits, base32), the private half sealed
// by the secret box, bound to the kid.
func (t *ToolKeys) newKey(context.Context) (ltidomain.ToolKey, error) {
	private, err := rsa.GenerateKey(rand.Reader, toolKeyBits)
	if err != nil {
		return ltidomain.ToolKey{}, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(private)
	if err != nil {
		return ltidomain.ToolKey{}, err
	}
	kid := rand.Text()
	sealed, err := t.secrets.Seal(kid, string(der))
	if err != nil {
		return ltidomain.ToolKey{}, err
	}
	return ltidomain.ToolKey{KID: kid, Public: &private.PublicKey, Sealed: sealed}, nil
}
