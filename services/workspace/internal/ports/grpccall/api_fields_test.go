package grpccall

import (
	"strings"
	"testing"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

func TestAPIField(t *testing.T) {
	for domainName, api := range map[string]string{
		"id":                    "id",
		"name":                  "name",
		"parent":                "parentWorkspaceId",
		"address.state":         "address.state",
		"products":              "products",
		"products[2]":           "products[2].bank.id",
		"objectiveDocuments[0]": "objectiveDocuments[0]",
		"search":                "filter.search",
		"states":                "filter.address.state.include",
		"states[3]":             "filter.address.state.include[3]",
		"pageSize":              "pageSize",
		"pageToken":             "pageToken",
	} {
		if got := apiField(domainName); got != api {
			t.Errorf("apiField(%q) = %q, want %q", domainName, got, api)
		}
	}
}

// The answers callers get name the fields by the JSON paths the API
// documents, in the message as in the details.
func TestDomainErrorsNameAPIPaths(t *testing.T) {
	parent, products := "a b", []string{"pub/math", "nobank"}
	_, update := domain.Changes{ParentID: &parent, Products: &products}.Check()
	_, list := domain.CheckListQuery(strings.Repeat("s", 201), []string{""}, nil)
	tests := []struct {
		err     error
		message string
		fields  []string
	}{
		{update, "parentWorkspaceId: must be 1 to 128 characters of A-Z, a-z, 0-9, '.', '_' or '-' (and 1 more)",
			[]string{"parentWorkspaceId", "products[1].bank.id"}},
		{list, "filter.search: must be at most 200 characters (and 1 more)",
			[]string{"filter.search", "filter.address.state.include[0]"}},
	}
	for _, tt := range tests {
		e, ok := fault.As(Error(tt.err))
		if !ok || e.Message != tt.message || len(e.Fields) != len(tt.fields) {
			t.Fatalf("Error(%v) = %v, want %q", tt.err, e, tt.message)
		}
		for i, f := range e.Fields {
			if f.Field != tt.fields[i] {
				t.Errorf("field %d = %q, want %q", i, f.Field, tt.fields[i])
			}
		}
	}
}
