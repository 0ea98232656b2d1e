package domain_test

import (
	"testing"

	"github.com/liveproctor/workspaces/services/auth/internal/domain"
)

// BenchmarkNewToken is token creation: 32 random bytes, Base64, digest.
func BenchmarkNewToken(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = domain.NewToken().Digest()
	}
}

// BenchmarkCheckLogin is the validation of a login body.
func BenchmarkCheckLogin(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if err := domain.CheckLogin("ada@example.com", "springfield-district"); err != nil {
			b.Fatal(err)
		}
	}
}
