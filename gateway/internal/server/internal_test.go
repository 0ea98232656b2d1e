package server

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	restv1 "github.com/liveproctor/workspaces/pkg/gen/rest/v1"
)

func TestPanicBecomesInternalError(t *testing.T) {
	var logs strings.Builder
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	h := withRequestID(accessLog(logger, nil, recoverPanics(logger, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("boom")
	}))))
	ts := httptest.NewServer(h)
	defer ts.Close()
	resp, err := http.Get(ts.URL + "/x")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var got restv1.ErrorBody
	if err := protojson.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	id := resp.Header.Get(RequestIDHeader)
	if resp.StatusCode != 500 || got.GetError().GetStatus() != "INTERNAL" || got.GetError().GetMessage() != msgInternal ||
		id == "" || got.GetError().GetRequestId() != id || !strings.Contains(string(body), `"details":[]`) {
		t.Errorf("got %d %s", resp.StatusCode, body)
	}
	if !strings.Contains(logs.String(), "panic serving request") || !strings.Contains(logs.String(), "status=500") {
		t.Errorf("logs: %s", logs.String())
	}
}

func TestValidRequestID(t *testing.T) {
	for id, want := range map[string]bool{
		"a": true, "A-z_0.9:x": true, strings.Repeat("x", 128): true,
		"": false, strings.Repeat("x", 129): false, "a b": false, "a/b": false, "a\nb": false,
	} {
		if got := validRequestID(id); got != want {
			t.Errorf("validRequestID(%q) = %v", id, got)
		}
	}
}
