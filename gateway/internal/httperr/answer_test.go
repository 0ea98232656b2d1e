package httperr

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/liveproctor/workspaces/gateway/internal/reqstate"
	"github.com/liveproctor/workspaces/pkg/fault"
	restv1 "github.com/liveproctor/workspaces/pkg/gen/rest/v1"
)

// Write writes the kind's status from the table, the gRPC name of
// the kind's code, the details and the headers the kind calls for.
func TestWriteKindError(t *testing.T) {
	tests := []struct {
		kind       fault.Kind
		details    []fault.FieldViolation
		wantHTTP   int
		wantStatus string
		header     string // Retry-After or WWW-Authenticate, when the kind has one
	}{
		{fault.UnsupportedMediaType, nil, 415, "INVALID_ARGUMENT", ""},
		{fault.Invalid, []fault.FieldViolation{{Field: "pageSize", Description: "unknown query parameter"}}, 400, "INVALID_ARGUMENT", ""},
		{fault.RequestTimeout, nil, 408, "DEADLINE_EXCEEDED", ""},
		{fault.Throttled, nil, 429, "RESOURCE_EXHAUSTED", "1"},
		{fault.Unauthenticated, nil, 401, "UNAUTHENTICATED", `Basic realm="workspaces"`},
	}
	for _, tt := range tests {
		t.Run(tt.kind.String(), func(t *testing.T) {
			w := httptest.NewRecorder()
			r := httptest.NewRequest(http.MethodPost, "/api/workspace", nil)
			r.Header.Set(reqstate.IDHeader, "req-1")
			reqstate.WithID(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				Write(w, r, tt.kind, "the message", tt.details...)
			})).ServeHTTP(w, r)

			var got restv1.ErrorBody
			if err := protojson.Unmarshal(w.Body.Bytes(), &got); err != nil {
				t.Fatalf("%s: %v", w.Body, err)
			}
			e := got.GetError()
			if w.Code != tt.wantHTTP || e.GetCode() != int32(tt.wantHTTP) || e.GetStatus() != tt.wantStatus ||
				e.GetMessage() != "the message" || e.GetRequestId() != "req-1" || w.Header().Get(reqstate.IDHeader) != "req-1" {
				t.Errorf("%d %s", w.Code, w.Body)
			}
			if len(e.GetDetails()) != len(tt.details) {
				t.Errorf("details %v", e.GetDetails())
			}
			for i, d := range tt.details {
				if e.GetDetails()[i].GetField() != d.Field || e.GetDetails()[i].GetDescription() != d.Description {
					t.Errorf("detail %d: %v", i, e.GetDetails()[i])
				}
			}
			if got := w.Header().Get("Retry-After") + w.Header().Get("WWW-Authenticate"); got != tt.header {
				t.Errorf("headers %v", w.Header())
			}
		})
	}
}
