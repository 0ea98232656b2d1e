package service

import (
	"strings"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// bootstrapVariables names the variable each field of a bootstrap error
// comes from (see ConfigFromEnv): the application names them in its own
// words.
var bootstrapVariables = map[string]string{
	"id":        "BOOTSTRAP_WORKSPACE_ID",
	"name":      "BOOTSTRAP_WORKSPACE_NAME",
	"products":  "BOOTSTRAP_PRODUCTS",
	"appKey":    "BOOTSTRAP_APP_KEY",
	"appSecret": "BOOTSTRAP_APP_SECRET",
}

// bootstrapError names the fields of a bootstrap error by their variables;
// an index ([2] of BOOTSTRAP_PRODUCTS) is kept.
func bootstrapError(err error) error {
	return domain.RenameFields(err, func(field string) string {
		name, index := field, ""
		if i := strings.IndexByte(field, '['); i >= 0 {
			name, index = field[:i], field[i:]
		}
		if variable, ok := bootstrapVariables[name]; ok {
			return variable + index
		}
		return field
	})
}
