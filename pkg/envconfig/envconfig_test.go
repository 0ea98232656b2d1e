package envconfig_test

import (
	"strings"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/envconfig"
)

func TestDefaultsAndValues(t *testing.T) {
	r := envconfig.FromMap(map[string]string{
		"ADDR": "127.0.0.1:9000", "TIMEOUT": "250ms", "SIZE": "42", "LIST": " a, ,b ",
		"KEY": "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
	})
	if got := r.Addr("ADDR", ":1"); got != "127.0.0.1:9000" {
		t.Errorf("Addr = %q", got)
	}
	if got := r.Addr("UNSET_ADDR", ":9090"); got != ":9090" {
		t.Errorf("Addr default = %q", got)
	}
	if got := r.Duration("TIMEOUT", time.Second); got != 250*time.Millisecond {
		t.Errorf("Duration = %v", got)
	}
	if got := r.Int("SIZE", 1, 1, 100); got != 42 {
		t.Errorf("Int = %d", got)
	}
	if got := r.List("LIST"); strings.Join(got, "|") != "a|b" {
		t.Errorf("List = %q", got)
	}
	if got := r.Key("KEY", 32); len(got) != 32 || got[31] != 31 {
		t.Errorf("Key = %v", got)
	}
	if err := r.Err(); err != nil {
		t.Fatalf("Err = %v", err)
	}
}

func TestBadValuesNameTheirVariable(t *testing.T) {
	r := envconfig.FromMap(map[string]string{
		"ADDR": "nope", "TIMEOUT": "-1s", "SIZE": "1000", "KEY": "c2VjcmV0LXNob3J0", // "secret-short"
	})
	r.Addr("ADDR", ":1")
	r.Duration("TIMEOUT", time.Second)
	r.Int("SIZE", 1, 1, 100)
	r.Key("KEY", 32)
	r.Required("MISSING")
	err := r.Err()
	if err == nil {
		t.Fatal("Err = nil, want errors")
	}
	for _, name := range []string{"ADDR", "TIMEOUT", "SIZE", "KEY", "MISSING: is required"} {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error %q does not name %s", err, name)
		}
	}
	if strings.Contains(err.Error(), "c2VjcmV0LXNob3J0") {
		t.Error("error echoes a secret value")
	}
}

func TestOptionalAddr(t *testing.T) {
	r := envconfig.FromMap(map[string]string{"OFF": "", "ON": "127.0.0.1:9464", "BAD": "nope"})
	if got := r.OptionalAddr("OFF", ":1"); got != "" {
		t.Errorf("empty: %q", got)
	}
	if got := r.OptionalAddr("UNSET", ":1"); got != ":1" {
		t.Errorf("unset: %q", got)
	}
	if got := r.OptionalAddr("ON", ":1"); got != "127.0.0.1:9464" {
		t.Errorf("set: %q", got)
	}
	r.OptionalAddr("BAD", ":1")
	if err := r.Err(); err == nil || !strings.Contains(err.Error(), "BAD") {
		t.Errorf("bad value: %v", err)
	}
}

func TestPair(t *testing.T) {
	r := envconfig.FromMap(map[string]string{"KEY": "k", "SECRET": "s", "LONE_KEY": "k"})
	if k, s, ok := r.Pair("KEY", "SECRET"); !ok || k != "k" || s != "s" {
		t.Errorf("set: %q %q %v", k, s, ok)
	}
	if _, _, ok := r.Pair("UNSET_KEY", "UNSET_SECRET"); ok {
		t.Error("unset: reported set")
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if k, _, ok := r.Pair("LONE_KEY", "LONE_SECRET"); !ok || k != "k" {
		t.Error("half set: reported unset")
	}
	if err := r.Err(); err == nil || !strings.Contains(err.Error(), "LONE_SECRET: is required with LONE_KEY") {
		t.Errorf("half set: %v", err)
	}
}
