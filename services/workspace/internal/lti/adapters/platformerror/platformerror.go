// Package platformerror reads what an LMS platform's service said when it
// refused a call, so that the refusal can be passed on in the platform's
// words. The names and roles (platformnrps) and the grades (platformags)
// clients read it; the token endpoint's refusal is an OAuth error of its
// own shape (platformtoken).
package platformerror

import (
	"encoding/json"
	"mime"
	"strings"

	"github.com/liveproctor/workspaces/pkg/outbound"
)

// Message is what resp's body says, unclipped: a JSON error's words (its
// error, as a string or an object's message, then its message and its
// error_description, joined by ": "), or a plain-text body; empty when it
// says neither.
func Message(resp outbound.Response) string {
	var e struct {
		Error       any    `json:"error"`
		Message     string `json:"message"`
		Description string `json:"error_description"`
	}
	var parts []string
	if json.Unmarshal(resp.Body, &e) == nil {
		switch v := e.Error.(type) {
		case string:
			parts = append(parts, v)
		case map[string]any:
			m, _ := v["message"].(string)
			parts = append(parts, m)
		}
		parts = append(parts, e.Message, e.Description)
	} else if media, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); media == "text/plain" {
		parts = append(parts, string(resp.Body))
	}
	var said []string
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			said = append(said, p)
		}
	}
	return strings.Join(said, ": ")
}
