// Package basicauth reads HTTP Basic credentials (RFC 7617) as both REST
// callers (the Authorization header) and gRPC callers (the authorization
// metadata) send them.
package basicauth

import (
	"context"
	"encoding/base64"
	"strings"

	"google.golang.org/grpc/metadata"
)

// Challenge is the WWW-Authenticate value answered with a 401.
const Challenge = `Basic realm="workspaces"`

// Parse splits an Authorization value "Basic base64(appKey:appSecret)".
// The scheme is case-insensitive; the app key may not contain ':'.
func Parse(header string) (appKey, appSecret string, ok bool) {
	scheme, encoded, found := strings.Cut(strings.TrimSpace(header), " ")
	if !found || !strings.EqualFold(scheme, "Basic") {
		return "", "", false
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(encoded))
	if err != nil {
		return "", "", false
	}
	appKey, appSecret, found = strings.Cut(string(raw), ":")
	if !found || appKey == "" || appSecret == "" {
		return "", "", false
	}
	return appKey, appSecret, true
}

// Header builds the Authorization value for a key pair.
func Header(appKey, appSecret string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(appKey+":"+appSecret))
}

// FromIncoming returns the credentials in a gRPC call's metadata.
func FromIncoming(ctx context.Context) (appKey, appSecret string, ok bool) {
	values := metadata.ValueFromIncomingContext(ctx, "authorization")
	if len(values) != 1 {
		return "", "", false
	}
	return Parse(values[0])
}
