package platformreg_test

import (
	"context"
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
	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/platformreg"
)

// newRegistrar returns a registrar allowed to call srv over http on
// loopback, as LTI_ALLOW_INSECURE_HOSTS allows tests.
func newRegistrar(t *testing.T, srv *httptest.Server, timeout time.Duration) *platformreg.Registrar {
	t.Helper()
	u, _ := url.Parse(srv.URL)
	policy, err := outbound.ParsePolicy(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	return platformreg.New(outbound.NewClient(policy, timeout))
}

func TestRegistrarCalls(t *testing.T) {
	var gotAuth, gotType, gotBody string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/config":
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			_, _ = w.Write([]byte(`{"issuer":"x"}`))
		case "/register":
			gotAuth, gotType = r.Header.Get("Authorization"), r.Header.Get("Content-Type")
			b := new(strings.Builder)
			_, _ = io.Copy(b, r.Body)
			gotBody = b.String()
			w.Header().Set("Content-Type", "application/vnd.ims.lti.v1.tool+json")
			_, _ = w.Write([]byte(`{"client_id":"c"}`))
		}
	}))
	defer srv.Close()
	r := newRegistrar(t, srv, 5*time.Second)
	ctx := context.Background()
	if body, err := r.Configuration(ctx, srv.URL+"/config"); err != nil || string(body) != `{"issuer":"x"}` {
		t.Fatalf("Configuration = %s, %v", body, err)
	}
	body, err := r.Register(ctx, srv.URL+"/register", "tok", []byte(`{"a":1}`))
	if err != nil || string(body) != `{"client_id":"c"}` || gotAuth != "Bearer tok" || gotType != "application/json" || gotBody != `{"a":1}` {
		t.Fatalf("Register = %s, %v; the platform saw %q %q %q", body, err, gotAuth, gotType, gotBody)
	}
}

// Every way a platform can fail the call is BadGateway, saying how; a URL
// the outbound rule refuses is returned as the rule's error.
func TestRegistrarRefusals(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/500":
			http.Error(w, "boom", http.StatusInternalServerError)
		case "/html":
			w.Header().Set("Content-Type", "text/html")
			_, _ = w.Write([]byte("<p>login</p>"))
		case "/big":
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`"` + strings.Repeat("x", platformreg.MaxBody) + `"`))
		case "/slow":
			<-r.Context().Done() // answers nothing until the client gives up
		case "/redirect":
			http.Redirect(w, r, "http://169.254.169.254/", http.StatusFound)
		}
	}))
	defer srv.Close()
	r := newRegistrar(t, srv, 100*time.Millisecond)
	ctx := context.Background()
	for path, says := range map[string]string{
		"/500": "with HTTP 500", "/html": "not JSON", "/big": "over 64 KiB", "/slow": "in time", "/redirect": "with HTTP 302",
	} {
		_, err := r.Configuration(ctx, srv.URL+path)
		if e, ok := fault.As(err); !ok || e.Kind != fault.BadGateway || !strings.Contains(e.Message, says) {
			t.Errorf("%s: err = %v, want BadGateway saying %q", path, err, says)
		}
	}
	for _, u := range []string{"https://169.254.169.254/x", "http://lms.example.org/x", "https://10.1.2.3/x"} {
		if _, err := r.Configuration(ctx, u); !errors.Is(err, outbound.ErrNotPublic) && !errors.Is(err, outbound.ErrNotHTTPS) {
			t.Errorf("%s: err = %v, want the outbound rule's refusal", u, err)
		}
	}
}
