package restcheck

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
)

// protojson's own words (line and column, "proto:") never reach a message,
// and the value it quotes is bounded.
func TestNewDecodeError(t *testing.T) {
	long := strings.Repeat("9", 5000)
	err := protojson.Unmarshal([]byte(`{"pageSize":`+long+`}`), &workspacev1.ListWorkspacesRequest{})
	if err == nil {
		t.Fatal("protojson took an integer out of range")
	}
	de := newDecodeError(err)
	if de.field != "pageSize" || len(de.description) > 120 || strings.Contains(de.message, long[:100]) ||
		strings.Contains(de.message, "proto") || strings.Contains(de.message, "line") {
		t.Errorf("got %+v", de)
	}
	for _, text := range []string{
		"proto: (line 1:2): unexpected token",
		"proto: syntax error (line 1:9): invalid UTF-8 in string",
		"proto: (line 1:3): invalid value for int32 field \x00x y: 1",
	} {
		de := newDecodeError(errors.New(text))
		if de.field != "" || de.message != "invalid request body: a value is not valid" {
			t.Errorf("%q: got %+v", text, de)
		}
	}
}

// The caller's text is in the detail, once; the message names the field
// only when it is a published name.
func TestFieldDecodeError(t *testing.T) {
	unknown := fieldDecodeError("invalid request body", strings.Repeat("x", 1000), false, "unknown field", "")
	if unknown.field != strings.Repeat("x", 64)+"…" || strings.Contains(unknown.message, "x") {
		t.Errorf("unknown: %+v", unknown)
	}
	known := fieldDecodeError("invalid query parameter", "pageSize", true, "expected an integer", `"`+strings.Repeat("y", 1000)+`"`)
	if known.message != "invalid query parameter: pageSize: expected an integer" ||
		known.description != `expected an integer, got "`+strings.Repeat("y", 63)+"…" {
		t.Errorf("known: %+v", known)
	}
}
