package grpcport

import (
	"context"
	"strconv"
	"strings"

	"google.golang.org/grpc/metadata"

	"github.com/liveproctor/workspaces/services/workspace/internal/app"
)

// etag is the entity tag of a workspace revision, quoted as HTTP writes it.
func etag(revision int64) string {
	return `"` + strconv.FormatInt(revision, 10) + `"`
}

// precondition is the caller's If-Match as the application takes it: the
// request's etag field, or else the if-match metadata the gateway forwards
// from the HTTP header.
func precondition(ctx context.Context, etagField string) app.Precondition {
	if etagField != "" {
		return parseIfMatch(etagField)
	}
	md, _ := metadata.FromIncomingContext(ctx)
	return parseIfMatch(strings.Join(md.Get("if-match"), ","))
}

// parseIfMatch reads an If-Match value. Empty or "*" sets no condition;
// otherwise the change applies at the revision any listed tag names. Weak
// tags (W/"3") compare by value and an unquoted tag is tolerated; a tag
// that is not an etag this service sends names no revision.
func parseIfMatch(value string) app.Precondition {
	value = strings.TrimSpace(value)
	if value == "" || value == "*" {
		return app.Precondition{}
	}
	var revisions []int64
	for _, tag := range strings.Split(value, ",") {
		tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
		if !strings.HasPrefix(tag, `"`) {
			tag = `"` + tag + `"`
		}
		digits := strings.TrimSuffix(strings.TrimPrefix(tag, `"`), `"`)
		if revision, err := strconv.ParseInt(digits, 10, 64); err == nil && etag(revision) == tag {
			revisions = append(revisions, revision)
		}
	}
	return app.IfRevision(revisions...)
}
