package platformags_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/outbound"
	"github.com/liveproctor/workspaces/services/workspace/internal/lti/adapters/platformags"
	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// platform answers every call as answer says.
func platform(t *testing.T, answer http.HandlerFunc) (*platformags.Client, string) {
	t.Helper()
	srv := httptest.NewServer(answer)
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	client := outbound.NewClient(outbound.Policy{InsecureHosts: []string{outbound.HostPort(u)}}, 5*time.Second)
	return platformags.New(client, nil), srv.URL
}

func TestPostScore(t *testing.T) {
	var got map[string]any
	c, base := platform(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/li/4/scores" || r.URL.RawQuery != "type_id=7" ||
			r.Header.Get("Content-Type") != ltidomain.ScoreMediaType || r.Header.Get("Authorization") != "Bearer tok" {
			http.Error(w, "unexpected "+r.Method+" "+r.URL.String(), http.StatusBadRequest)
			return
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &got)
		w.WriteHeader(http.StatusNoContent)
	})
	err := c.PostScore(context.Background(), base+"/li/4/scores?type_id=7", "tok", map[string]any{"userId": "u-1", "scoreGiven": 3.0})
	if err != nil || got["userId"] != "u-1" || got["scoreGiven"] != 3.0 {
		t.Fatalf("%v, %v", err, got)
	}
}

// What the delivery does with an answer rests on its kind: a 401 asks for
// a new token, a 429 or 5xx (or no answer) for a retry after the
// platform's Retry-After, anything else gives up with the platform's words.
func TestPostScoreRefusals(t *testing.T) {
	for _, c := range []struct {
		name   string
		answer http.HandlerFunc
		kind   fault.Kind
		retry  time.Duration
		says   string
	}{
		{"token refused", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusUnauthorized) }, fault.Internal, 0, ""},
		{"throttled", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(http.StatusTooManyRequests)
		}, fault.Unavailable, 7 * time.Second, "HTTP 429"},
		{"down", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) }, fault.Unavailable, 0, "HTTP 503"},
		{"refused in JSON", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"error":{"message":"user not in course"}}`))
		}, fault.BadGateway, 0, "HTTP 400: user not in course"},
		{"refused in text", func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, strings.Repeat("no ", 200), http.StatusForbidden)
		}, fault.BadGateway, 0, "HTTP 403: no no"},
		{"refused", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNotFound) }, fault.BadGateway, 0, "HTTP 404."},
	} {
		t.Run(c.name, func(t *testing.T) {
			client, base := platform(t, c.answer)
			err := client.PostScore(context.Background(), base+"/li/scores", "tok", map[string]any{})
			if c.kind == fault.Internal {
				if !errors.Is(err, ltiapp.ErrTokenRefused) {
					t.Fatalf("got %v", err)
				}
				return
			}
			f, ok := fault.As(err)
			if !ok || f.Kind != c.kind || f.RetryAfter != c.retry || !strings.Contains(f.Message, c.says) || len([]rune(f.Message)) > 400 {
				t.Fatalf("got %#v", err)
			}
			if strings.Contains(err.Error(), "tok") {
				t.Fatalf("the token is in the error: %v", err)
			}
		})
	}
	client := platformags.New(outbound.NewClient(outbound.Policy{}, time.Second), nil)
	if err := client.PostScore(context.Background(), "http://lms.example.edu/li/scores", "tok", nil); fault.KindOf(err) != fault.BadGateway {
		t.Fatalf("a URL the outbound rule refuses: %v", err)
	}
}

// A line item is found by its resource link and resource id, held to
// them whatever the platform's filter did, and made when there is none.
func TestFindAndCreateLineItem(t *testing.T) {
	var made map[string]any
	c, base := platform(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/c/9/lineitems":
			q := r.URL.Query()
			if q.Get("type_id") != "7" || q.Get("resource_link_id") != "link-1" || r.Header.Get("Accept") != platformags.LineItemContainerMediaType {
				http.Error(w, "bad query "+r.URL.RawQuery, http.StatusBadRequest)
				return
			}
			items := `[{"id":"https://x/li/1","resourceLinkId":"link-2","resourceId":"exam"}`
			if q.Get("resource_id") == "exam" {
				items += `,{"id":"https://x/li/2","resourceLinkId":"link-1","resourceId":"exam"}`
			}
			_, _ = w.Write([]byte(items + "]"))
		case r.Method == http.MethodPost && r.URL.Path == "/c/9/lineitems" && r.URL.RawQuery == "type_id=7" &&
			r.Header.Get("Content-Type") == platformags.LineItemMediaType:
			body, _ := io.ReadAll(r.Body)
			_ = json.Unmarshal(body, &made)
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write([]byte(`{"id":"https://x/li/3?type_id=7","label":"Exam"}`))
		default:
			http.Error(w, "unexpected", http.StatusBadRequest)
		}
	})
	ctx := context.Background()
	items := base + "/c/9/lineitems?type_id=7"
	got, ok, err := c.FindLineItem(ctx, items, "tok", "link-1", "exam")
	if err != nil || !ok || got != "https://x/li/2" {
		t.Fatalf("found %q, %v, %v", got, ok, err)
	}
	if got, ok, err := c.FindLineItem(ctx, items, "tok", "link-1", "other"); err != nil || ok {
		t.Fatalf("found %q, %v, %v for another resource", got, ok, err)
	}
	got, err = c.CreateLineItem(ctx, items, "tok", ltiapp.LineItem{Label: "Exam", ScoreMaximum: 20, ResourceLinkID: "link-1", ResourceID: "exam"})
	if err != nil || got != "https://x/li/3?type_id=7" || made["label"] != "Exam" || made["scoreMaximum"] != 20.0 ||
		made["resourceLinkId"] != "link-1" || made["resourceId"] != "exam" {
		t.Fatalf("made %q, %v: %v", got, err, made)
	}
}
