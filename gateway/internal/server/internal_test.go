package server

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/liveproctor/workspaces/gateway/internal/httperr"
	"github.com/liveproctor/workspaces/gateway/internal/reqstate"
	restv1 "github.com/liveproctor/workspaces/pkg/gen/rest/v1"
)

func TestPanicBecomesInternalError(t *testing.T) {
	var logs strings.Builder
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	h := reqstate.WithID(accessLog(logger, nil, recoverPanics(logger, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
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
	id := resp.Header.Get(reqstate.IDHeader)
	if resp.StatusCode != 500 || got.GetError().GetStatus() != "INTERNAL" || got.GetError().GetMessage() != httperr.MsgInternal ||
		id == "" || got.GetError().GetRequestId() != id || !strings.Contains(string(body), `"details":[]`) {
		t.Errorf("got %d %s", resp.StatusCode, body)
	}
	if !strings.Contains(logs.String(), "panic serving request") || !strings.Contains(logs.String(), "status=500") {
		t.Errorf("logs: %s", logs.String())
	}
}

// A registration link's or a portal link's secret never reaches the
// access log.
func TestAccessLogLeavesOutLinks(t *testing.T) {
	const secret = "p3FqZ2l0aGVyZS1pcy1ub3QtYS1yZWFsLXNlY3JldC0w"
	for target, logged := range map[string]string{
		"/lti/v1p3/register/" + secret + "?registration_token=t": "/lti/v1p3/register/…",
		"/portal/open/" + secret:                                 "/portal/open/…",
	} {
		var logs strings.Builder
		logger := slog.New(slog.NewTextHandler(&logs, nil))
		h := reqstate.WithID(accessLog(logger, nil, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, target, nil))
		if strings.Contains(logs.String(), secret) || strings.Contains(logs.String(), "registration_token") || !strings.Contains(logs.String(), "path="+logged) {
			t.Fatalf("logs: %s", logs.String())
		}
	}
}
