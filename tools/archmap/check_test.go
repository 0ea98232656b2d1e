package archmap_test

import (
	"strings"
	"testing"

	"github.com/liveproctor/workspaces/tools/archmap"
)

// The fixture tree under testdata/repo declares one thing of each kind.
func TestCheck(t *testing.T) {
	const app, domain = "services/demo/internal/app", "services/demo/internal/domain"
	tests := []struct {
		name     string
		places   []string
		declared bool
	}{
		{"App.Run", []string{app}, true},                       // a method
		{"App.cache", []string{app}, true},                     // a struct field
		{"Loader.Get", []string{app}, true},                    // a generic receiver
		{"Get", []string{app}, true},                           // a method, named alone
		{"Notifier.Notify", []string{app}, true},               // an interface's method
		{"helper", []string{app + "/app.go"}, true},            // a function, in a file
		{"limit", []string{app}, true},                         // a constant
		{"operations", []string{app}, true},                    // a variable
		{"app.helper", []string{app}, true},                    // qualified by the place's package
		{"app.App.Run", []string{app}, true},                   // and a method so
		{"domain.Lookup", []string{app, domain}, true},         // in the second place
		{"App.Missing", []string{app}, false},                  // no such method or field
		{"App.helper", []string{app}, false},                   // a function, not App's method
		{"cache", []string{app}, false},                        // a field is named with its type
		{"testOnly", []string{app}, false},                     // tests do not count
		{"domain.Lookup", []string{app}, false},                // not in the row's places
		{"Lookup", []string{app, domain + "/domain.go"}, true}, // any of the places
	}
	for _, tt := range tests {
		problems := archmap.Check("testdata/repo", []archmap.Row{{Rule: "r", Places: tt.places, Names: []string{tt.name}}})
		if declared := len(problems) == 0; declared != tt.declared {
			t.Errorf("%s in %v: declared %v, want %v (%v)", tt.name, tt.places, declared, tt.declared, problems)
		}
	}
}

func TestCheckNamesTheRowTheNameAndWhereItLooked(t *testing.T) {
	problems := archmap.Check("testdata/repo", []archmap.Row{{
		Rule:       "a rule",
		Places:     []string{"services/demo/internal/app", "services/demo/internal/app/gone.go"},
		Names:      []string{"App.Gone"},
		Unresolved: []string{"app/c.go: a relative path with no services/<svc>/ path before it in the row"},
	}})
	want := []string{
		`row "a rule": app/c.go: a relative path`,
		`row "a rule": services/demo/internal/app/gone.go: file does not exist`,
		`row "a rule": App.Gone is not declared in services/demo/internal/app, services/demo/internal/app/gone.go`,
	}
	if len(problems) != len(want) {
		t.Fatalf("problems %q, want %d", problems, len(want))
	}
	for i, p := range problems {
		if !strings.HasPrefix(p, want[i]) {
			t.Errorf("problem %q, want it to start %q", p, want[i])
		}
	}
}
