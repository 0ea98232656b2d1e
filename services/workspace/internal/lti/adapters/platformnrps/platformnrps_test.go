package platformnrps_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/outbound"
	"github.com/liveproctor/workspaces/services/workspace/internal/lti/adapters/platformnrps"
	ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"
)

func TestNextLink(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values []string
		want   string
	}{
		{"quoted rel", []string{`<https://lms.example/Members/Page/2?Cursor=Ab>; rel="next"`}, "https://lms.example/Members/Page/2?Cursor=Ab"},
		{"bare rel, any case", []string{`<https://lms.example/p2>;REL=Next`}, "https://lms.example/p2"},
		{"several links in a value", []string{`<https://lms.example/p1>; rel="first", <https://lms.example/p3>; rel="next", <https://lms.example/p9>; rel="last"`}, "https://lms.example/p3"},
		{"several values", []string{`<https://lms.example/p1>; rel=prev`, `<https://lms.example/p3>; rel="next"`}, "https://lms.example/p3"},
		{"several relation types", []string{`<https://lms.example/p3>; rel="last next"`}, "https://lms.example/p3"},
		{"a comma and a semicolon inside a quoted parameter", []string{`<https://lms.example/p1>; title="a, b; rel=next", <https://lms.example/p2>; rel=next`}, "https://lms.example/p2"},
		{"a comma in the target", []string{`<https://lms.example/p?ids=1,2>; rel="next"`}, "https://lms.example/p?ids=1,2"},
		{"the first rel counts", []string{`<https://lms.example/p2>; rel="prev"; rel="next"`}, ""},
		{"other relations only", []string{`<https://lms.example/p1>; rel="prev", <https://lms.example/p9>; rel="last"`}, ""},
		{"no rel", []string{`<https://lms.example/p2>; title="next"`}, ""},
		{"not a link", []string{`https://lms.example/p2; rel="next"`}, ""},
		{"none", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := platformnrps.NextLink(tc.values)
			if got != tc.want || ok != (tc.want != "") {
				t.Fatalf("NextLink = %q, %v; want %q", got, ok, tc.want)
			}
		})
	}
}

// platform serves one membership page as answer says.
func platform(t *testing.T, answer http.HandlerFunc) (*platformnrps.Client, string) {
	t.Helper()
	srv := httptest.NewServer(answer)
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	client := outbound.NewClient(outbound.Policy{InsecureHosts: []string{outbound.HostPort(u)}}, 5*time.Second)
	return platformnrps.New(client, nil), srv.URL
}

func TestMembers(t *testing.T) {
	c, base := platform(t, func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept") != platformnrps.MediaType || r.Header.Get("Authorization") != "Bearer tok" {
			http.Error(w, "bad request headers", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", platformnrps.MediaType)
		w.Header().Add("Link", `<`+"/Course/7/Members?Page=2&Cursor=XyZ"+`>; rel="next"`)
		_, _ = w.Write([]byte(`{"id":"x","members":[{"user_id":"u1","name":"Ada","roles":["R"]},{"user_id":"u2","status":"Inactive","roles":[]}]}`))
	})
	page, err := c.Members(context.Background(), base+"/course/7/members?limit=2", "tok")
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Members) != 2 || page.Members[0].Status != "Active" || page.Members[1].Status != "Inactive" || page.Members[0].Name != "Ada" {
		t.Fatalf("members: %+v", page.Members)
	}
	if page.Next != base+"/Course/7/Members?Page=2&Cursor=XyZ" {
		t.Fatalf("next: %q", page.Next)
	}
}

func TestMembersErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		header map[string]string
		body   string
		kind   fault.Kind
		retry  time.Duration
		msg    string
	}{
		{"expired token", 401, nil, "", 0, 0, ""},
		{"throttled", 429, map[string]string{"Retry-After": "7"}, "", fault.Unavailable, 7 * time.Second, "HTTP 429"},
		{"down, no Retry-After", 503, nil, "", fault.Unavailable, 5 * time.Second, "HTTP 503"},
		{"throttled until a date past", 429, map[string]string{"Retry-After": "Mon, 02 Jan 2006 15:04:05 GMT"}, "", fault.Unavailable, time.Second, "HTTP 429"},
		{"refused, JSON", 403, map[string]string{"Content-Type": "application/json"}, `{"error":"` + strings.Repeat("no ", 100) + `"}`, fault.BadGateway, 0, "HTTP 403: no no"},
		{"refused, text", 404, map[string]string{"Content-Type": "text/plain"}, "no such context", fault.BadGateway, 0, "HTTP 404: no such context"},
		{"not a container", 200, map[string]string{"Content-Type": platformnrps.MediaType}, `{"id":"x"}`, fault.BadGateway, 0, "not a membership container"},
		{"not JSON", 200, map[string]string{"Content-Type": "text/html"}, `<p>`, fault.BadGateway, 0, "text/html"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, base := platform(t, func(w http.ResponseWriter, _ *http.Request) {
				for k, v := range tc.header {
					w.Header().Set(k, v)
				}
				w.WriteHeader(tc.status)
				_, _ = w.Write([]byte(tc.body))
			})
			_, err := c.Members(context.Background(), base+"/m", "secret-token")
			if tc.status == 401 {
				if !errors.Is(err, ltiapp.ErrTokenRefused) {
					t.Fatalf("a 401: %v", err)
				}
				return
			}
			f, ok := fault.As(err)
			if !ok || f.Kind != tc.kind || f.RetryAfter != tc.retry || !strings.Contains(f.Message, tc.msg) || len([]rune(f.Message)) > 300 {
				t.Fatalf("error: %#v", err)
			}
			if strings.Contains(err.Error(), "secret-token") {
				t.Fatal("the token is in the error")
			}
		})
	}
}
