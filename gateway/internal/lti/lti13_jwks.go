package lti

import (
	"context"
	"net/http"
	"strconv"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/liveproctor/workspaces/gateway/internal/httperr"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
)

// JWKSPath is where platforms read the tool's public keys, with which they
// verify the messages the tool signs (Deep Linking responses).
const JWKSPath = "/lti/v1p3/jwks.json"

// jwksCacheControl lets platforms and caches keep the keys an hour: a new
// key is published days before it signs (domain.ToolKeyRotation's lead),
// and a replaced one stays published days after.
const jwksCacheControl = "public, max-age=3600"

// ToolKeysReader is the call the route makes.
type ToolKeysReader interface {
	GetLtiToolKeys(ctx context.Context, in *workspacev1.GetLtiToolKeysRequest, opts ...grpc.CallOption) (*workspacev1.LtiToolKeys, error)
}

// ServeJWKS answers GET on JWKSPath: the tool's key set as the workspace
// service keeps it, or an error in the one error shape (503 while the
// service is down).
func ServeJWKS(client ToolKeysReader, errs *httperr.Handler, md Metadata) runtime.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request, _ map[string]string) {
		ctx := metadata.NewOutgoingContext(r.Context(), md(r.Context(), r))
		keys, err := client.GetLtiToolKeys(ctx, &workspacev1.GetLtiToolKeysRequest{})
		if err != nil {
			errs.WriteError(w, r, err)
			return
		}
		header := w.Header()
		header.Set("Content-Type", "application/json")
		header.Set("Cache-Control", jwksCacheControl)
		header.Set("X-Content-Type-Options", "nosniff")
		header.Set("Content-Length", strconv.Itoa(len(keys.GetJwks())))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(keys.GetJwks()))
	}
}
