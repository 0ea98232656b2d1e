package domain

import (
	"maps"
	"slices"
	"testing"

	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/pkg/restrules"
)

// The document's enum of address.country (the proto's rest.v1 option) is
// the list the service checks, plus the empty string: a client generated
// from the document offers exactly the codes the service takes.
func TestCountriesAreTheDocumentsEnum(t *testing.T) {
	fd := (&workspacev1.Address{}).ProtoReflect().Descriptor().Fields().ByName("country")
	documented := restrules.Field(fd).GetEnum()
	want := append([]string{""}, slices.Sorted(maps.Keys(countries))...)
	if !slices.Equal(documented, want) {
		t.Fatalf("the document's countries (%d) differ from the service's (%d)", len(documented), len(want))
	}
}
