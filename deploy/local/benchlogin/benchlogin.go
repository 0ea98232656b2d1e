// Package benchlogin is the login work the benchmark's two bare login
// servers share, benchref (one net/http process) and benchauth (the gRPC
// token service behind benchproxy): the same flags, the same constant-time
// check of one key pair, and the same token written the same way, so that
// the two differ only by the HTTP front and the gRPC hop.
package benchlogin

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/redis/go-redis/v9"
)

// TokenTTL is the life of a token, as in the auth service.
const TokenTTL = 8 * time.Hour

// Config is what the flags and environment set.
type Config struct {
	Listen, RedisAddr string
	AppKey, AppSecret string
}

// ParseFlags reads the command's flags, whose environment variables start
// with prefix (BENCHREF_, say).
func ParseFlags(prefix, defaultListen string) (Config, error) {
	var c Config
	flag.StringVar(&c.Listen, "listen", envOr(prefix+"ADDR", defaultListen), "listen address ("+prefix+"ADDR)")
	flag.StringVar(&c.RedisAddr, "redis", envOr("REDIS_ADDR", "127.0.0.1:6379"), "redis address (REDIS_ADDR)")
	flag.StringVar(&c.AppKey, "app-key", os.Getenv(prefix+"APP_KEY"), "the one accepted app key ("+prefix+"APP_KEY)")
	flag.StringVar(&c.AppSecret, "app-secret", os.Getenv(prefix+"APP_SECRET"), "its secret ("+prefix+"APP_SECRET)")
	flag.Parse()
	if c.AppKey == "" || c.AppSecret == "" {
		return c, fmt.Errorf("a key pair is required: -app-key and -app-secret (or %sAPP_KEY, %sAPP_SECRET)", prefix, prefix)
	}
	return c, nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// Issuer issues tokens for the one key pair it knows.
type Issuer struct {
	rdb         *redis.Client
	key, secret []byte
}

// Connect returns an Issuer on the configured Redis (go-redis's defaults),
// once Redis answers.
func Connect(ctx context.Context, c Config) (*Issuer, error) {
	rdb := redis.NewClient(&redis.Options{Addr: c.RedisAddr})
	if err := rdb.Ping(ctx).Err(); err != nil {
		rdb.Close()
		return nil, fmt.Errorf("reach redis at %s: %w", c.RedisAddr, err)
	}
	return &Issuer{rdb: rdb, key: []byte(c.AppKey), secret: []byte(c.AppSecret)}, nil
}

// Close closes the Redis client.
func (i *Issuer) Close() error { return i.rdb.Close() }

// Authorized compares Basic credentials with the configured pair in
// constant time (both halves are always compared); ok is whether there
// were credentials at all.
func (i *Issuer) Authorized(key, secret string, ok bool) bool {
	if !ok {
		return false
	}
	k := subtle.ConstantTimeCompare([]byte(key), i.key)
	s := subtle.ConstantTimeCompare([]byte(secret), i.secret)
	return k&s == 1
}

// session is the value stored under the token's digest.
type session struct {
	Email       string    `json:"email"`
	WorkspaceID string    `json:"workspaceId"`
	ExpiresAt   time.Time `json:"expiresAt"`
}

// ErrStore is the error of a token Redis did not take.
var ErrStore = errors.New("the token store is unavailable")

// Issue makes a token of 32 random bytes (standard Base64) and writes
//
//	SET <hex SHA-256 of the token> <json> EX 28800
//
// answering the token and its expiry as the API writes it.
func (i *Issuer) Issue(ctx context.Context, email, workspaceID string) (auth, expiresAt string, err error) {
	raw := make([]byte, 32)
	_, _ = rand.Read(raw) // never fails (crypto/rand panics on a broken source)
	token := base64.StdEncoding.EncodeToString(raw)
	digest := sha256.Sum256([]byte(token))
	expires := time.Now().Add(TokenTTL).UTC()
	value, err := json.Marshal(session{Email: email, WorkspaceID: workspaceID, ExpiresAt: expires})
	if err != nil {
		return "", "", err
	}
	if err := i.rdb.Set(ctx, hex.EncodeToString(digest[:]), value, TokenTTL).Err(); err != nil {
		return "", "", fmt.Errorf("%w: %v", ErrStore, err)
	}
	return token, expires.Format("2006-01-02T15:04:05.000Z"), nil
}
