package server_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestBodiesMustBeJSON(t *testing.T) {
	e := newEnv(t, options{})
	e.workspaces.workspace = sampleWorkspace()
	tests := []struct {
		contentType string
		want        int
	}{
		{"", http.StatusOK},
		{"application/json", http.StatusOK},
		{"application/json; charset=utf-8", http.StatusOK},
		{"Application/JSON", http.StatusOK},
		{"application/merge-patch+json", http.StatusOK},
		{"text/plain", http.StatusUnsupportedMediaType},
		{"application/x-www-form-urlencoded", http.StatusUnsupportedMediaType},
		{"multipart/form-data; boundary=x", http.StatusUnsupportedMediaType},
		{"text/json", http.StatusUnsupportedMediaType},
		{"application/json; =broken", http.StatusUnsupportedMediaType},
	}
	for _, tt := range tests {
		header := map[string]string{}
		if tt.contentType != "" {
			header["Content-Type"] = tt.contentType
		}
		resp, body := e.do(t, http.MethodPut, "/api/workspace/w1", strings.NewReader(`{"name":"n"}`), header)
		if tt.want == http.StatusOK {
			if resp.StatusCode != http.StatusOK {
				t.Errorf("Content-Type %q: %d %s", tt.contentType, resp.StatusCode, body)
			}
			continue
		}
		checkError(t, resp, body, tt.want, "INVALID_ARGUMENT")
	}

	// Whatever the transfer: a chunked body is a body.
	req, err := http.NewRequest(http.MethodPost, e.url+"/api/login/sdk", unsized{strings.NewReader(`{"email":"a@b.c","workspaceId":"w1"}`)})
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "text/plain")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	checkError(t, resp, body, http.StatusUnsupportedMediaType, "INVALID_ARGUMENT")

	// Without a body the type says nothing.
	resp, body = e.do(t, http.MethodPut, "/api/workspace/w1", nil, map[string]string{"Content-Type": "text/plain"})
	if resp.StatusCode != http.StatusOK {
		t.Errorf("an empty body declared as text: %d %s", resp.StatusCode, body)
	}
	e.auth.mu.Lock()
	defer e.auth.mu.Unlock()
	if e.auth.req != nil {
		t.Errorf("a text body reached the service: %v", e.auth.req)
	}
}
