package domain_test

import (
	"testing"

	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// BenchmarkValidateCreate runs every check a create body goes through.
func BenchmarkValidateCreate(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		var v domain.Violations
		domain.CheckID(&v, "id", "springfield-district")
		domain.CheckName(&v, "name", "  Springfield District ")
		domain.CheckType(&v, "type", "DISTRICT")
		domain.CheckAddress(&v, "address", domain.Address{City: "Springfield", State: "US-IL", Country: "US"})
		domain.CheckProducts(&v, "products", []string{"pub/math", "pub/ela"})
		domain.CheckObjectiveDocuments(&v, "objectiveDocuments", []string{"CCSS#Math#Grade5:2010"})
		if err := v.Err(); err != nil {
			b.Fatal(err)
		}
	}
}
