package app

import (
	"testing"

	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
)

// The operations are the contract's methods, each with a rule chosen for
// it: a new method is listed here rather than falling to the zero rule
// unseen, and a removed one does not linger.
func TestOperationsAreTheContractsMethods(t *testing.T) {
	methods := map[string]bool{}
	for _, m := range workspacev1.WorkspaceService_ServiceDesc.Methods {
		methods[m.MethodName] = true
		if _, ok := operations[m.MethodName]; !ok {
			t.Errorf("method %s has no rule in operations", m.MethodName)
		}
	}
	for op := range operations {
		if !methods[op] {
			t.Errorf("operation %s is no method of the contract", op)
		}
	}
}
