package grpcport

import (
	"context"

	"google.golang.org/grpc/metadata"
)

// authorization returns the call's Authorization metadata as sent, for the
// application to read: Basic credentials, which the workspace service
// checks when the application asks it about the workspace, or a Bearer
// token.
func authorization(ctx context.Context) string {
	if v := metadata.ValueFromIncomingContext(ctx, "authorization"); len(v) == 1 {
		return v[0]
	}
	return ""
}
