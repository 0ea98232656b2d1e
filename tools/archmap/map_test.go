package archmap_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/liveproctor/workspaces/tools/archmap"
)

// The repository's own table, held to its code.
func TestArchitectureMapMatchesTheCode(t *testing.T) {
	root := filepath.Join("..", "..")
	doc, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := archmap.ReadTable(doc, "## Where each rule lives")
	if err != nil {
		t.Fatal(err)
	}
	for _, problem := range archmap.Check(root, rows) {
		t.Error(problem)
	}
}
