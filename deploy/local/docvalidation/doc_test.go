// Package docvalidation measures what holding a request to the OpenAPI
// document with a general validator would cost the gateway, beside what its
// own checks cost (gateway/internal/restcheck, BenchmarkCheckBodyLogin). It
// holds benchmarks only; `make bench` runs them.
package docvalidation

import (
	"os"
	"path/filepath"
	"testing"
)

// loginBody is a login's request body, the gateway's most frequent.
var loginBody = []byte(`{"email":"ada@school.example","workspaceId":"springfield-district"}`)

// document reads the OpenAPI document the gateway serves.
func document(b *testing.B) []byte {
	b.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "pkg", "gen", "openapi", "openapi.json"))
	if err != nil {
		b.Fatal(err)
	}
	return data
}
