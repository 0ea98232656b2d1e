package fault_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/liveproctor/workspaces/pkg/fault"
)

func TestKindOf(t *testing.T) {
	notFound := fault.New(fault.NotFound, "workspace %q not found", "a")
	tests := []struct {
		name string
		err  error
		want fault.Kind
	}{
		{"fault error", notFound, fault.NotFound},
		{"wrapped fault error", fmt.Errorf("get: %w", notFound), fault.NotFound},
		{"plain error", errors.New("boom"), fault.Internal},
		{"invalid field", fault.InvalidField("name", "must not be empty"), fault.Invalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := fault.KindOf(tt.err); got != tt.want {
				t.Errorf("KindOf() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSentinelMatching(t *testing.T) {
	sentinel := fault.New(fault.Conflict, "workspace already exists")
	err := fmt.Errorf("create: %w", fault.New(fault.Conflict, "workspace already exists"))
	if !errors.Is(err, sentinel) {
		t.Error("errors.Is does not match an equal fault.Error")
	}
	if errors.Is(err, fault.New(fault.Conflict, "something else")) {
		t.Error("errors.Is matched a different message")
	}
}

func TestInvalidFields(t *testing.T) {
	if err := fault.InvalidFields(nil); err != nil {
		t.Fatalf("InvalidFields(nil) = %v, want nil", err)
	}
	err := fault.InvalidFields([]fault.FieldViolation{
		{Field: "name", Description: "must not be empty"},
		{Field: "type", Description: "must be one of DISTRICT, CAMPUS"},
	})
	e, ok := fault.As(err)
	if !ok || e.Kind != fault.Invalid || len(e.Fields) != 2 {
		t.Fatalf("InvalidFields() = %#v", err)
	}
	if want := "name: must not be empty (and 1 more)"; e.Message != want {
		t.Errorf("message = %q, want %q", e.Message, want)
	}
}

func TestCauseStaysOutOfMessage(t *testing.T) {
	err := fault.Wrap(fault.Unavailable, errors.New("dial tcp 10.0.0.1: refused"), "the workspace store is unavailable")
	if err.Message != "the workspace store is unavailable" {
		t.Errorf("Message = %q", err.Message)
	}
	if !errors.Is(err, err.Cause) {
		t.Error("cause is not unwrapped")
	}
}
