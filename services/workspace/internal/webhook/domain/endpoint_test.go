package domain_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/outbound"
	webhookdomain "github.com/liveproctor/workspaces/services/workspace/internal/webhook/domain"
)

var (
	t0    = time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	rules = webhookdomain.Rules{EventTypes: []string{"workspace.created", "workspace.updated", "keyPair.rotated"}}
)

// violated lists the fields err names, with their descriptions.
func violated(err error) map[string]string {
	out := map[string]string{}
	if e, ok := fault.As(err); ok {
		for _, f := range e.Fields {
			out[f.Field] = f.Description
		}
	}
	return out
}

func valid() webhookdomain.NewEndpoint {
	return webhookdomain.NewEndpoint{URL: "https://hooks.example.com/in?src=ws", EventTypes: []string{"keyPair.rotated"}, Description: "the vendor's back end"}
}

func TestCheckNewEndpoint(t *testing.T) {
	if err := webhookdomain.CheckNewEndpoint(valid(), rules); err != nil {
		t.Fatalf("a valid endpoint: %v", err)
	}
	every := webhookdomain.NewEndpoint{URL: "https://8.8.8.8/"}
	if err := webhookdomain.CheckNewEndpoint(every, rules); err != nil {
		t.Fatalf("every type, no description: %v", err)
	}
	cases := []struct {
		name  string
		in    webhookdomain.NewEndpoint
		field string
		want  string // a prefix of the description
	}{
		{"no URL", webhookdomain.NewEndpoint{}, "url", "is required"},
		{"http", webhookdomain.NewEndpoint{URL: "http://hooks.example.com/"}, "url",
			outbound.PublicURLRule + ": http is allowed only for hosts named in WEBHOOK_ALLOW_INSECURE_HOSTS"},
		{"a private address", webhookdomain.NewEndpoint{URL: "https://10.0.0.1/"}, "url", outbound.PublicURLRule + ": the host is localhost"},
		{"loopback", webhookdomain.NewEndpoint{URL: "https://127.0.0.1/"}, "url", outbound.PublicURLRule + ": the host is localhost"},
		{"localhost", webhookdomain.NewEndpoint{URL: "https://localhost:8443/"}, "url", outbound.PublicURLRule + ": the host is localhost"},
		{"a fragment", webhookdomain.NewEndpoint{URL: "https://a.test/#x"}, "url", "must be an absolute http(s) URL"},
		{"an unknown type", webhookdomain.NewEndpoint{URL: "https://a.test/", EventTypes: []string{"keyPair.rotated", "nope"}},
			"eventTypes[1]", "must be one of workspace.created, workspace.updated, keyPair.rotated"},
		{"a type twice", webhookdomain.NewEndpoint{URL: "https://a.test/", EventTypes: []string{"keyPair.rotated", "workspace.created", "keyPair.rotated"}},
			"eventTypes[2]", "duplicate of eventTypes[0]"},
		{"more types than there are", webhookdomain.NewEndpoint{URL: "https://a.test/", EventTypes: slices.Repeat([]string{"keyPair.rotated"}, 4)},
			"eventTypes", "must have at most 3 elements"},
		{"a long description", webhookdomain.NewEndpoint{URL: "https://a.test/", Description: strings.Repeat("é", webhookdomain.MaxDescriptionLength+1)},
			"description", "must be at most 256 characters"},
		{"a control character", webhookdomain.NewEndpoint{URL: "https://a.test/", Description: "a\nb"}, "description", "must not contain control characters"},
	}
	for _, c := range cases {
		err := webhookdomain.CheckNewEndpoint(c.in, rules)
		got := violated(err)
		if fault.KindOf(err) != fault.Invalid || len(got) != 1 || !strings.HasPrefix(got[c.field], c.want) {
			t.Errorf("%s: %v, want %s: %q", c.name, err, c.field, c.want)
		}
	}
	if err := webhookdomain.CheckNewEndpoint(webhookdomain.NewEndpoint{Description: strings.Repeat("é", webhookdomain.MaxDescriptionLength)}, rules); len(violated(err)) != 1 {
		t.Errorf("256 characters (512 bytes) are allowed; only the URL is wrong: %v", err)
	}
	// A test's receiver on loopback, named in the setting.
	policy, err := outbound.ParsePolicy("127.0.0.1:8443")
	if err != nil {
		t.Fatal(err)
	}
	if err := webhookdomain.CheckNewEndpoint(webhookdomain.NewEndpoint{URL: "http://127.0.0.1:8443/hook"}, webhookdomain.Rules{URLs: policy}); err != nil {
		t.Errorf("a named insecure host: %v", err)
	}
}

func TestEndpointsBound(t *testing.T) {
	var es webhookdomain.Endpoints
	for i := range webhookdomain.MaxEndpoints {
		if _, err := es.Add(fmt.Sprint("e", i), valid(), []byte("sealed"), rules, t0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := es.Add("e-x", valid(), []byte("sealed"), rules, t0); !errors.Is(err, webhookdomain.ErrTooManyEndpoints) || fault.KindOf(err) != fault.FailedPrecondition {
		t.Fatalf("a 21st endpoint: %v", err)
	}
	if _, err := es.Remove("e3"); err != nil {
		t.Fatal(err)
	}
	if _, err := es.Add("e-x", valid(), []byte("sealed"), rules, t0); err != nil {
		t.Fatalf("after a delete: %v", err)
	}
}

func TestEndpointLife(t *testing.T) {
	var es webhookdomain.Endpoints
	e, err := es.Add("e1", webhookdomain.NewEndpoint{URL: "https://a.test/"}, []byte("s1"), rules, t0)
	if err != nil {
		t.Fatal(err)
	}
	if !e.Enabled || !e.EnabledAt.Equal(t0) || !e.CreatedAt.Equal(t0) || e.EventTypes == nil || len(e.EventTypes) != 0 {
		t.Fatalf("added: %+v", e)
	}
	kept := es // a copy shares nothing a change reaches
	t1 := t0.Add(time.Hour)
	url, types, off := "https://b.test/", []string{"workspace.updated"}, false
	e, changed, err := es.Update("e1", webhookdomain.Changes{URL: &url, EventTypes: &types, Enabled: &off}, rules, t1)
	if err != nil || !slices.Equal(changed, []string{"url", "eventTypes", "enabled"}) || e.Enabled || e.URL != url || !e.UpdatedAt.Equal(t1) || !e.EnabledAt.Equal(t0) {
		t.Fatalf("update: %+v, %v, %v", e, changed, err)
	}
	if old, _ := kept.Get("e1"); old.URL != "https://a.test/" || !old.Enabled {
		t.Fatalf("the copy changed: %+v", old)
	}
	// The same values again change nothing.
	if _, changed, err := es.Update("e1", webhookdomain.Changes{URL: &url, Enabled: &off}, rules, t1.Add(time.Minute)); err != nil || changed != nil {
		t.Fatalf("no change: %v, %v", changed, err)
	}
	// Delivery turns it off with a reason only when it is on.
	if off, err := es.Disable("e1", "410 Gone", t1); err != nil || off {
		t.Fatalf("disable an endpoint that is off: %v, %v", off, err)
	}
	// Turned back on: the live feed starts anew, the reason goes.
	t2 := t1.Add(time.Hour)
	on := true
	if e, _, err = es.Update("e1", webhookdomain.Changes{Enabled: &on}, rules, t2); err != nil || !e.Enabled || !e.EnabledAt.Equal(t2) {
		t.Fatalf("re-enable: %+v, %v", e, err)
	}
	if off, err := es.Disable("e1", "failing for 5 days", t2); err != nil || !off {
		t.Fatalf("disable: %v, %v", off, err)
	}
	if e, _ = es.Get("e1"); e.Enabled || e.DisabledReason != "failing for 5 days" {
		t.Fatalf("disabled: %+v", e)
	}
	if e, _, _ = es.Update("e1", webhookdomain.Changes{Enabled: &on}, rules, t2); e.DisabledReason != "" {
		t.Fatalf("re-enabled keeps the reason: %+v", e)
	}
	// Every type again: an empty list.
	none := []string{}
	if e, changed, err = es.Update("e1", webhookdomain.Changes{EventTypes: &none}, rules, t2); err != nil || len(e.EventTypes) != 0 || !slices.Equal(changed, []string{"eventTypes"}) {
		t.Fatalf("clear the types: %+v, %v, %v", e, changed, err)
	}
	bad := "http://b.test/"
	if _, _, err := es.Update("e1", webhookdomain.Changes{URL: &bad}, rules, t2); violated(err)["url"] == "" {
		t.Fatalf("an http URL: %v", err)
	}
	for _, err := range []error{
		func() error { _, _, err := es.Update("nope", webhookdomain.Changes{}, rules, t2); return err }(),
		func() error { _, err := es.Disable("nope", "x", t2); return err }(),
		func() error { _, err := es.RotateSecret("nope", []byte("s"), 0, t2); return err }(),
		func() error { _, err := es.Remove("nope"); return err }(),
	} {
		if !errors.Is(err, webhookdomain.ErrEndpointNotFound) {
			t.Errorf("an unknown endpoint: %v", err)
		}
	}
}

func TestSecretRotationOverlap(t *testing.T) {
	var es webhookdomain.Endpoints
	if _, err := es.Add("e1", valid(), []byte("s1"), rules, t0); err != nil {
		t.Fatal(err)
	}
	secrets := func(e webhookdomain.Endpoint, at time.Time) string { return fmt.Sprintf("%s", e.SealedSecrets(at)) }
	if e, _ := es.Get("e1"); secrets(e, t0) != "[s1]" {
		t.Fatalf("before a rotation: %s", secrets(e, t0))
	}
	e, err := es.RotateSecret("e1", []byte("s2"), 24*time.Hour, t0)
	if err != nil || !e.PreviousUntil.Equal(t0.Add(24*time.Hour)) {
		t.Fatalf("rotate: %+v, %v", e, err)
	}
	// The new one first, the old one while the overlap lasts.
	if got := secrets(e, t0.Add(time.Hour)); got != "[s2 s1]" {
		t.Errorf("within the overlap: %s", got)
	}
	if got := secrets(e, t0.Add(24*time.Hour)); got != "[s2]" {
		t.Errorf("at its end: %s", got)
	}
	// A second rotation within the overlap drops the older previous one.
	if e, _ = es.RotateSecret("e1", []byte("s3"), time.Hour, t0.Add(time.Hour)); secrets(e, t0.Add(90*time.Minute)) != "[s3 s2]" {
		t.Errorf("a second rotation: %s", secrets(e, t0.Add(90*time.Minute)))
	}
	// No overlap: the old one stops at once.
	if e, _ = es.RotateSecret("e1", []byte("s4"), 0, t0.Add(2*time.Hour)); secrets(e, t0.Add(2*time.Hour)) != "[s4]" || e.SealedPreviousSecret != nil {
		t.Errorf("without an overlap: %s", secrets(e, t0.Add(2*time.Hour)))
	}
	for _, d := range []time.Duration{-time.Second, webhookdomain.MaxSecretOverlap + time.Second} {
		if _, err := es.RotateSecret("e1", []byte("s5"), d, t0); violated(err)["overlap"] != "must be between 0s and 604800s (7 days)" {
			t.Errorf("overlap %v: %v", d, err)
		}
	}
	if _, err := es.RotateSecret("e1", []byte("s5"), webhookdomain.MaxSecretOverlap, t0); err != nil {
		t.Errorf("7 days: %v", err)
	}
}
