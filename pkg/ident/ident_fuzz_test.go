package ident_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/liveproctor/workspaces/pkg/ident"
)

// workspaceIDRule is ident.WorkspaceIDRule as a regular expression: an
// independent statement of the rule the fuzzer holds ValidWorkspaceID to.
var workspaceIDRule = regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)

// ValidWorkspaceID accepts exactly what its documented rule says, so an id
// it admits is safe in a path segment, a Mongo key and a log line.
func FuzzValidWorkspaceID(f *testing.F) {
	for _, seed := range []string{
		"", "a", "root", "springfield-district", "A.b_C-9", "a:undelete", "a/b", "a b", "é", "\xff",
		"x%2Fkeys", "..", strings.Repeat("x", 128), strings.Repeat("x", 129), "a\x00", "İ",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, id string) {
		got, want := ident.ValidWorkspaceID(id), workspaceIDRule.MatchString(id)
		if got != want {
			t.Fatalf("ValidWorkspaceID(%q) = %v, the rule (%s) says %v", id, got, ident.WorkspaceIDRule, want)
		}
	})
}
