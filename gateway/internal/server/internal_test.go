package server

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/liveproctor/workspaces/pkg/restapi"
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
	var got restapi.ErrorBody
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	id := resp.Header.Get(RequestIDHeader)
	if resp.StatusCode != 500 || got.Error.Status != "INTERNAL" || got.Error.Message != msgInternal ||
		id == "" || got.Error.RequestID != id || got.Error.Details == nil {
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
