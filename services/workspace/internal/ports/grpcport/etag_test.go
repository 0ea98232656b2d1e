package grpcport

import (
	"context"
	"reflect"
	"testing"

	"google.golang.org/grpc/metadata"

	"github.com/liveproctor/workspaces/services/workspace/internal/app"
)

func TestParseIfMatch(t *testing.T) {
	tests := []struct {
		value string
		want  app.Precondition
	}{
		{"", app.Precondition{}},
		{"  ", app.Precondition{}},
		{"*", app.Precondition{}},
		{` * `, app.Precondition{}},
		{`"3"`, app.IfRevision(3)},
		{`W/"3"`, app.IfRevision(3)},
		{`3`, app.IfRevision(3)},
		{` "3" , W/"5",7`, app.IfRevision(3, 5, 7)},
		{`*, "4"`, app.IfRevision(4)},
		// Tags this service never sends name no revision.
		{`"03"`, app.IfRevision()},
		{`"+3"`, app.IfRevision()},
		{`"3`, app.IfRevision()},
		{`3"`, app.IfRevision()},
		{`w/"3"`, app.IfRevision()},
		{`W/ "3"`, app.IfRevision()},
		{`"abc"`, app.IfRevision()},
		{`,`, app.IfRevision()},
		{`"99999999999999999999"`, app.IfRevision()},
	}
	for _, tt := range tests {
		if got := parseIfMatch(tt.value); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("parseIfMatch(%q) = %+v, want %+v", tt.value, got, tt.want)
		}
	}
}

func TestPreconditionPrefersTheEtagField(t *testing.T) {
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs("if-match", `"2"`, "if-match", `"3"`))
	if got, want := precondition(ctx, ""), app.IfRevision(2, 3); !reflect.DeepEqual(got, want) {
		t.Errorf("from metadata: %+v, want %+v", got, want)
	}
	if got, want := precondition(ctx, `"5"`), app.IfRevision(5); !reflect.DeepEqual(got, want) {
		t.Errorf("with the etag field: %+v, want %+v", got, want)
	}
	if got := precondition(context.Background(), ""); !reflect.DeepEqual(got, app.Precondition{}) {
		t.Errorf("with neither: %+v, want none", got)
	}
}

func TestETagIsTheQuotedRevision(t *testing.T) {
	if got := etag(42); got != `"42"` {
		t.Errorf("etag(42) = %s", got)
	}
	if got := parseIfMatch(etag(42)); !reflect.DeepEqual(got, app.IfRevision(42)) {
		t.Errorf("an etag read back = %+v", got)
	}
}
