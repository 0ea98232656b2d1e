package archmap_test

import (
	"reflect"
	"testing"

	"github.com/liveproctor/workspaces/tools/archmap"
)

const fixture = "# A map\n\n## Where each rule lives\n\n" +
	"| rule | file | function or table |\n" +
	"|---|---|---|\n" +
	"| names and prose | `services/demo/internal/app/a.go`; `mongostore/m.go`, `scripts.go` | `App.Run`, `helper`; `CREDENTIAL_CACHE_TTL`, `lti13:pending`, `updateOne({_id, revision})`, `GETDEL`, `If-Match`, `rest.v1`, `idempotency_level`, `LTI_TOOL_KEY_*`, `GET /lti/v1p3/jwks.json`, `fault.Kind`, `a.b.C`; in `app/b.go` `lti13_state.go` |\n" +
	"| rooms (`a|b` in the rule) | `pkg/x`; `services/demo/internal/domain`; `internal/adapters/limits`, `adapters/changebus`, `service/s.go`, `proto/*/v1/*.proto` | `Guard` |\n" +
	"| nothing to resolve against | `pkg/x`; `app/c.go` | |\n" +
	"\nAfter the table.\n\n| another | table |\n|---|---|\n| not | read |\n"

func TestReadTable(t *testing.T) {
	rows, err := archmap.ReadTable([]byte(fixture), "## Where each rule lives")
	if err != nil {
		t.Fatal(err)
	}
	want := []archmap.Row{{
		Rule: "names and prose",
		Places: []string{
			"services/demo/internal/app/a.go",
			"services/demo/internal/adapters/mongostore/m.go",
			"services/demo/internal/adapters/mongostore/scripts.go",
			"services/demo/internal/app/b.go",
			"services/demo/internal/app/lti13_state.go",
		},
		Names: []string{"App.Run", "helper", "fault.Kind", "a.b.C"},
	}, {
		Rule: "rooms (`a|b` in the rule)",
		Places: []string{
			"pkg/x",
			"services/demo/internal/domain",
			"services/demo/internal/adapters/limits",
			"services/demo/internal/adapters/changebus",
			"services/demo/internal/service/s.go",
			"proto/*/v1/*.proto",
		},
		Names: []string{"Guard"},
	}, {
		Rule:       "nothing to resolve against",
		Places:     []string{"pkg/x"},
		Unresolved: []string{"app/c.go: a relative path with no services/<svc>/ path before it in the row"},
	}}
	if !reflect.DeepEqual(rows, want) {
		t.Errorf("got  %#v\nwant %#v", rows, want)
	}
}

func TestReadTableWithoutTheHeading(t *testing.T) {
	if _, err := archmap.ReadTable([]byte(fixture), "## Somewhere else"); err == nil {
		t.Error("no error for a document without the heading")
	}
}
