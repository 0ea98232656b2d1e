package grpcport

import (
	"context"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/grpc/metadata"

	"github.com/liveproctor/workspaces/services/workspace/internal/app"
)

// An If-Match value sets no condition exactly when it is empty or "*";
// otherwise it names only revisions whose etags it lists (so a tag this
// service never sent matches nothing, 412), as the header or as the etag
// field alike. Every etag the service sends, strong or weak, alone or in a
// list, names its revision.
func FuzzIfMatch(f *testing.F) {
	for _, seed := range []string{
		"", " ", "*", ` * `, `"3"`, `W/"3"`, `3`, ` "3" , W/"5",7`, `*, "4"`, `"03"`, `"+3"`, `"3`, `3"`, `w/"3"`,
		`W/ "3"`, `"abc"`, `,`, `"99999999999999999999"`, `"-1"`, `"9223372036854775807"`, `""`, `W/`, "\"3\"\x00", `"٣"`,
	} {
		f.Add(seed, int64(3), int64(5))
	}
	f.Fuzz(func(t *testing.T, value string, a, b int64) {
		got := parseIfMatch(value)
		ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs("if-match", value))
		if fromHeader := precondition(ctx, ""); !reflect.DeepEqual(fromHeader, got) {
			t.Fatalf("If-Match %q gives %+v as a header, %+v as the etag field", value, fromHeader, got)
		}
		if trimmed := strings.TrimSpace(value); trimmed == "" || trimmed == "*" {
			if !reflect.DeepEqual(got, app.Precondition{}) {
				t.Fatalf("parseIfMatch(%q) = %+v, want no condition", value, got)
			}
		} else {
			revisions := revisionsOf(got)
			if reflect.DeepEqual(got, app.Precondition{}) || len(revisions) > strings.Count(value, ",")+1 {
				t.Fatalf("parseIfMatch(%q) = %+v", value, got)
			}
			for _, r := range revisions {
				if !strings.Contains(value, strconv.FormatInt(r, 10)) {
					t.Fatalf("parseIfMatch(%q) names the revision %d, which it does not list", value, r)
				}
			}
		}

		if got := parseIfMatch(etag(a)); !reflect.DeepEqual(got, app.IfRevision(a)) {
			t.Fatalf("parseIfMatch(%s) = %+v", etag(a), got)
		}
		list := "W/" + etag(a) + " ," + etag(b)
		if got := parseIfMatch(list); !reflect.DeepEqual(got, app.IfRevision(a, b)) {
			t.Fatalf("parseIfMatch(%s) = %+v", list, got)
		}
	})
}

// revisionsOf reads the revisions a precondition names; app keeps them to
// itself, as nothing but the check needs them.
func revisionsOf(p app.Precondition) []int64 {
	v := reflect.ValueOf(p).FieldByName("revisions")
	out := make([]int64, v.Len())
	for i := range out {
		out[i] = v.Index(i).Int()
	}
	return out
}
