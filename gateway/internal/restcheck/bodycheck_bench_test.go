package restcheck

import (
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	authv1 "github.com/liveproctor/workspaces/pkg/gen/auth/v1"
)

// loginBody is a login's request body, the gateway's most frequent.
var loginBody = []byte(`{"email":"ada@school.example","workspaceId":"springfield-district"}`)

// What the gateway spends holding a login's body to the document (checkBody)
// and decoding it: the figures deploy/local/docvalidation compares a
// general OpenAPI validator with.
func BenchmarkCheckBodyLogin(b *testing.B) {
	md := (&authv1.CreateSdkTokenRequest{}).ProtoReflect().Descriptor()
	b.ReportAllocs()
	for b.Loop() {
		if _, de := checkBody(loginBody, md, nil); de != nil {
			b.Fatal(de)
		}
	}
}

func BenchmarkCheckAndDecodeLogin(b *testing.B) {
	md := (&authv1.CreateSdkTokenRequest{}).ProtoReflect().Descriptor()
	b.ReportAllocs()
	for b.Loop() {
		if _, de := checkBody(loginBody, md, nil); de != nil {
			b.Fatal(de)
		}
		var req authv1.CreateSdkTokenRequest
		if err := protojson.Unmarshal(loginBody, &req); err != nil {
			b.Fatal(err)
		}
	}
}
