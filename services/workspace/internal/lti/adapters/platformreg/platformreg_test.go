package platformreg_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/outbound"
	"github.com/liveproctor/workspaces/services/workspace/internal/lti/adapters/platformreg"
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

// doer answers every request with err, as *outbound.Client's transport
// wraps a failed connection.
type doer struct{ err error }

func (d doer) Do(req *http.Request, _ int64) (outbound.Response, error) {
	return outbound.Response{}, &url.Error{Op: req.Method, URL: req.URL.String(), Err: &net.OpError{Op: "dial", Net: "tcp", Err: d.err}}
}

// A host whose name resolves to a non-public address is refused as one
// that cannot be reached (a name that does not resolve, a connection
// refused): the same kind, the same words, so a registration link's
// holder cannot map the service's network by trying names.
func TestRegistrarHidesWhatNamesResolveTo(t *testing.T) {
	ctx := context.Background()
	refusal := func(cause error) *fault.Error {
		t.Helper()
		_, err := platformreg.New(doer{cause}).Configuration(ctx, "https://lms.internal.example/.well-known/openid-configuration")
		e, ok := fault.As(err)
		if !ok {
			t.Fatalf("%v: not a fault", err)
		}
		return e
	}
	private := refusal(outbound.ErrAddressNotPublic)
	if private.Kind != fault.BadGateway || private.Message != "The platform could not be reached (reading its OpenID configuration)." {
		t.Fatalf("a name on a private address: %v %q", private.Kind, private.Message)
	}
	for name, cause := range map[string]error{
		"no such host":       &net.DNSError{Err: "no such host", Name: "lms.internal.example", IsNotFound: true},
		"connection refused": &os.SyscallError{Syscall: "connect", Err: syscall.ECONNREFUSED},
	} {
		if e := refusal(cause); e.Kind != private.Kind || e.Message != private.Message {
			t.Errorf("%s: %v %q; a name on a private address: %v %q", name, e.Kind, e.Message, private.Kind, private.Message)
		}
	}
}

// The same through the real outbound client: the machine's own name
// (which /etc/hosts maps to a loopback or private address on most hosts)
// is refused at the dialer, in the words of an unreachable host.
func TestRegistrarHidesWhatTheMachinesNameResolvesTo(t *testing.T) {
	host, err := os.Hostname()
	if err != nil {
		t.Skip("no host name:", err)
	}
	addrs, err := net.DefaultResolver.LookupNetIP(context.Background(), "ip", host)
	if err != nil || len(addrs) == 0 || slices.ContainsFunc(addrs, outbound.Public) {
		t.Skipf("%s resolves to %v, %v: not only to non-public addresses", host, addrs, err)
	}
	r := platformreg.New(outbound.NewClient(outbound.Policy{}, 5*time.Second))
	_, err = r.Configuration(context.Background(), "https://"+host+"/.well-known/openid-configuration")
	e, ok := fault.As(err)
	if !errors.Is(err, outbound.ErrAddressNotPublic) || !ok || e.Kind != fault.BadGateway ||
		e.Message != "The platform could not be reached (reading its OpenID configuration)." {
		t.Fatalf("%s (%v): %v, want the dialer's refusal, answered as an unreachable host", host, addrs, err)
	}
}
