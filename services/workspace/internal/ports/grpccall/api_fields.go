package grpccall

import (
	"strings"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// Error names the fields a domain error names as the API documents them,
// so REST callers find them in the error's details and gRPC callers in its
// field violations.
func Error(err error) error {
	return domain.RenameFields(err, apiField)
}

// apiField is the JSON path of the request field a domain field came from.
// An index after the name ([2]) is kept.
func apiField(field string) string {
	name, index := field, ""
	if i := strings.IndexByte(field, '['); i >= 0 {
		name, index = field[:i], field[i:]
	}
	switch name {
	case "parent":
		return "parentWorkspaceId" + index
	case "search":
		return "filter.search" + index
	case "states":
		return "filter.address.state.include" + index
	case "rateLimit.perSecond":
		return "rateLimit.requestsPerSecond"
	case "products":
		if index != "" {
			return field + ".bank.id" // a shared product is its bank's id
		}
	}
	return field
}
