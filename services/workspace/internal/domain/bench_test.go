package domain_test

import (
	"testing"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// BenchmarkValidateCreate runs every check a create body goes through.
func BenchmarkValidateCreate(b *testing.B) {
	b.ReportAllocs()
	d := domain.Details{
		Name:               "  Springfield District ",
		Type:               domain.TypeDistrict,
		Address:            domain.Address{City: "Springfield", State: "US-IL", Country: "US"},
		Products:           []string{"pub/math", "pub/ela"},
		ObjectiveDocuments: []string{"CCSS#Math#Grade5:2010"},
	}
	for b.Loop() {
		if _, err := domain.CheckNewWorkspace("springfield-district", d); err != nil {
			b.Fatal(err)
		}
	}
}
