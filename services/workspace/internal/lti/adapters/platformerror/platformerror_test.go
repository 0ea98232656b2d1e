package platformerror_test

import (
	"net/http"
	"testing"

	"github.com/liveproctor/workspaces/pkg/outbound"
	"github.com/liveproctor/workspaces/services/workspace/internal/lti/adapters/platformerror"
)

func TestMessage(t *testing.T) {
	for _, c := range []struct {
		name, contentType, body, want string
	}{
		{"OAuth-style error", "application/json", `{"error":"invalid_request","error_description":"no such user"}`, "invalid_request: no such user"},
		{"an error object's message", "application/json", `{"error":{"code":4,"message":"user not in course"}}`, "user not in course"},
		{"all three, in order", "application/json", `{"error":"e","message":"m","error_description":"d"}`, "e: m: d"},
		{"a message alone", "application/json", `{"message":"context closed"}`, "context closed"},
		{"blank words dropped, the rest trimmed", "application/json", `{"error":"  ","message":" m ","error_description":""}`, "m"},
		{"an error of another type", "application/json", `{"error":42}`, ""},
		{"JSON whatever its media type", "text/html", `{"error":"e"}`, "e"},
		{"JSON without words", "application/json", `{"id":"x"}`, ""},
		{"not JSON, though it says so", "application/json", `<p>no</p>`, ""},
		{"plain text", "text/plain", "  no such context\n", "no such context"},
		{"plain text with a charset", "text/plain; charset=utf-8", "no", "no"},
		{"HTML", "text/html", "<p>no</p>", ""},
		{"nothing", "", "", ""},
	} {
		resp := outbound.Response{Header: http.Header{}, Body: []byte(c.body)}
		if c.contentType != "" {
			resp.Header.Set("Content-Type", c.contentType)
		}
		if got := platformerror.Message(resp); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
