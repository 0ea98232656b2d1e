package basicauth_test

import (
	"context"
	"testing"

	"google.golang.org/grpc/metadata"

	"github.com/liveproctor/workspaces/pkg/basicauth"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name, header, key, secret string
		ok                        bool
	}{
		{"round trip", basicauth.Header("k1", "s:with:colons"), "k1", "s:with:colons", true},
		{"scheme case", "basic " + basicauth.Header("k", "s")[6:], "k", "s", true},
		{"bearer", "Bearer abc", "", "", false},
		{"bad base64", "Basic !!!", "", "", false},
		{"no colon", "Basic a2V5", "", "", false},
		{"empty secret", basicauth.Header("k", ""), "", "", false},
		{"empty", "", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key, secret, ok := basicauth.Parse(tt.header)
			if key != tt.key || secret != tt.secret || ok != tt.ok {
				t.Errorf("Parse(%q) = %q, %q, %v", tt.header, key, secret, ok)
			}
		})
	}
}

func TestFromIncoming(t *testing.T) {
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs("authorization", basicauth.Header("k", "s")))
	if key, secret, ok := basicauth.FromIncoming(ctx); !ok || key != "k" || secret != "s" {
		t.Errorf("FromIncoming = %q %q %v", key, secret, ok)
	}
	if _, _, ok := basicauth.FromIncoming(context.Background()); ok {
		t.Error("FromIncoming without metadata succeeded")
	}
}
