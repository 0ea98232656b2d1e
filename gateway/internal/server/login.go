package server

import (
	"context"
	"errors"
	"io"
	"maps"
	"net"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/liveproctor/workspaces/gateway/internal/restcheck"
	authv1 "github.com/liveproctor/workspaces/pkg/gen/auth/v1"
)

// loginPath is POST /api/login/sdk, CreateSdkToken's route.
const loginPath = "/api/login/sdk"

// directLogin answers POST /api/login/sdk as grpc-gateway's generated
// handler does, with less work per request: it is the busiest route (a
// vendor logs in a whole class at the start of an exam), and the generic
// path costs the gateway about a tenth of its CPU per login in building
// metadata and rendering through protojson (docs/performance.md).
//
// It takes the same place in the mux (so the route's middlewares, the
// request checks and the error answers are the mux's), decodes the body
// with the same marshaler (so a refused body reads the same), sends the
// backend the same metadata and turns its answer into the same status,
// headers and body. login_test.go holds it to the generated handler,
// request for request.
//
// served counts the logins it answered, for that test.
func directLogin(mux *runtime.ServeMux, client authv1.AuthServiceClient, annotate func(context.Context, *http.Request) metadata.MD, served *atomic.Int64) runtime.HandlerFunc {
	marshaler := restcheck.NewJSONMarshaler()
	return func(w http.ResponseWriter, r *http.Request, _ map[string]string) {
		served.Add(1)
		ctx := r.Context()
		var req authv1.CreateSdkTokenRequest
		if err := marshaler.NewDecoder(r.Body).Decode(&req); err != nil && !errors.Is(err, io.EOF) {
			runtime.HTTPError(ctx, mux, marshaler, w, r, status.Errorf(codes.InvalidArgument, "%v", err))
			return
		}
		var answered runtime.ServerMetadata
		resp, err := client.CreateSdkToken(metadata.NewOutgoingContext(ctx, loginMetadata(ctx, r, annotate)), &req,
			grpc.Header(&answered.HeaderMD), grpc.Trailer(&answered.TrailerMD))
		if err != nil {
			runtime.HTTPError(runtime.NewServerMetadataContext(ctx, answered), mux, marshaler, w, r, err)
			return
		}
		for k, vs := range answered.HeaderMD {
			if h, ok := outgoingHeader(k); ok {
				for _, v := range vs {
					w.Header().Add(h, v)
				}
			}
		}
		if acceptsTrailers(r) {
			// What grpc-gateway does for such a request, though no
			// trailer is ever forwarded (dropHeader).
			w.Header().Set("Transfer-Encoding", "chunked")
		}
		w.Header().Set("Content-Type", marshaler.ContentType(resp))
		body, ok := appendLogin(make([]byte, 0, 128), resp)
		if !ok {
			if body, err = marshaler.Marshal(resp); err != nil {
				runtime.HTTPError(ctx, mux, marshaler, w, r, err)
				return
			}
		}
		_, _ = w.Write(body)
	}
}

// loginMetadata is the metadata grpc-gateway's AnnotateContext sends with
// the login: the Authorization header's values, the headers incomingHeader
// forwards, the host, the client's address, and then the gateway's own
// (requestMetadata), which replace any of those under the same keys.
func loginMetadata(ctx context.Context, r *http.Request, annotate func(context.Context, *http.Request) metadata.MD) metadata.MD {
	own := annotate(ctx, r)
	md := make(metadata.MD, len(own)+3)
	add := func(key, value string) {
		if validMetadataText(value) {
			md[key] = append(md[key], value)
		}
	}
	for _, v := range r.Header.Values("Authorization") {
		add("authorization", v)
	}
	for name, values := range r.Header {
		if key, ok := incomingHeader(name); ok {
			for _, v := range values {
				add(key, v)
			}
		}
	}
	if host := r.Header.Get("X-Forwarded-Host"); host != "" && validMetadataText(host) {
		add("x-forwarded-host", host)
	} else if r.Host != "" {
		add("x-forwarded-host", r.Host)
	}
	if _, ok := own["x-forwarded-for"]; !ok {
		addForwardedFor(md, r)
	}
	maps.Copy(md, own)
	return md
}

// addForwardedFor is grpc-gateway's x-forwarded-for, for a gateway whose
// annotator sends none (no client address could be found).
func addForwardedFor(md metadata.MD, r *http.Request) {
	var xff []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		if validMetadataText(v) {
			xff = append(xff, v)
		}
	}
	if ip, _, err := net.SplitHostPort(r.RemoteAddr); err == nil && validMetadataText(ip) {
		xff = append(xff, ip)
	}
	if len(xff) > 0 {
		md["x-forwarded-for"] = []string{strings.Join(xff, ", ")}
	}
}

// validMetadataText reports whether v may be sent as a gRPC metadata text
// value: printable ASCII and spaces, as grpc-gateway checks.
func validMetadataText(v string) bool {
	for i := range len(v) {
		if v[i] < 0x20 || v[i] > 0x7E {
			return false
		}
	}
	return true
}

// acceptsTrailers reports whether the request's TE header accepts
// trailers.
func acceptsTrailers(r *http.Request) bool {
	return strings.Contains(strings.ToLower(r.Header.Get("TE")), "trailers")
}

// appendLogin renders resp as the marshaler would (both fields, set or
// not, under their JSON names), when its strings need no escaping; false
// otherwise, and the caller renders it with the marshaler.
func appendLogin(b []byte, resp *authv1.CreateSdkTokenResponse) ([]byte, bool) {
	auth, expiresAt := resp.GetAuth(), resp.GetExpiresAt()
	if !plainJSONText(auth) || !plainJSONText(expiresAt) {
		return nil, false
	}
	b = append(b, `{"auth":"`...)
	b = append(b, auth...)
	b = append(b, `","expiresAt":"`...)
	b = append(b, expiresAt...)
	return append(b, `"}`...), true
}

// plainJSONText reports whether s is printable ASCII with no character a
// JSON string must escape (and none protojson escapes: <, > and &).
func plainJSONText(s string) bool {
	for i := range len(s) {
		switch c := s[i]; {
		case c < 0x20 || c > 0x7E, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}
