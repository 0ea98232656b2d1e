package app

import (
	"strconv"
	"strings"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// ETag is the entity tag of a workspace's current revision, quoted as HTTP
// writes it.
func ETag(w *domain.Workspace) string {
	return `"` + strconv.FormatInt(w.Revision, 10) + `"`
}

var errStaleETag = fault.New(fault.PreconditionFailed,
	"the workspace has changed since it was read (etag mismatch): read it again and retry")

// checkETag compares an If-Match value with the workspace's etag. Empty means
// no condition; "*" matches any; weak tags (W/"3") compare by value.
func checkETag(ifMatch string, w *domain.Workspace) error {
	ifMatch = strings.TrimSpace(ifMatch)
	if ifMatch == "" || ifMatch == "*" {
		return nil
	}
	current := ETag(w)
	for _, tag := range strings.Split(ifMatch, ",") {
		tag = strings.TrimPrefix(strings.TrimSpace(tag), "W/")
		if !strings.HasPrefix(tag, `"`) {
			tag = `"` + tag + `"` // tolerate an unquoted tag
		}
		if tag == current {
			return nil
		}
	}
	return errStaleETag
}
