package lti

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	authv1 "github.com/liveproctor/workspaces/pkg/gen/auth/v1"
)

// countingSessions opens a session for every launch and keeps how many
// parameters the last one had.
type countingSessions struct{ params int }

func (s *countingSessions) CreateLtiSession(_ context.Context, in *authv1.CreateLtiSessionRequest, _ ...grpc.CallOption) (*authv1.LtiSession, error) {
	s.params = len(in.GetParameters())
	return &authv1.LtiSession{Auth: "dG9rZW4=", Email: "ada@example.com"}, nil
}

// How many parameters a launch may have is the workspace service's rule;
// the gateway only stops reading at one parameter per 32 bytes of the
// largest body it takes.
func TestLaunchParameterCap(t *testing.T) {
	const maxBodyBytes = 32 << 10 // 1024 parameters
	for _, tc := range []struct {
		params int
		status int
	}{
		{600, http.StatusOK},
		{1024, http.StatusOK},
		{1025, http.StatusBadRequest},
	} {
		sessions := &countingSessions{}
		noMetadata := func(context.Context, *http.Request) metadata.MD { return nil }
		launch := Launch(sessions, noMetadata, maxBodyBytes, slog.New(slog.NewTextHandler(io.Discard, nil)))
		body := "custom_exam_config_id=0f8fad5b-d9cb-469f-a165-70867728950e" + strings.Repeat("&a=1", tc.params-1)
		r := httptest.NewRequest(http.MethodPost, LaunchPath, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		w := httptest.NewRecorder()
		launch(w, r, nil)
		if w.Code != tc.status {
			t.Fatalf("%d parameters: %d, want %d:\n%s", tc.params, w.Code, tc.status, w.Body)
		}
		switch {
		case tc.status == http.StatusOK && sessions.params != tc.params:
			t.Errorf("%d parameters: the auth service received %d", tc.params, sessions.params)
		case tc.status != http.StatusOK && !strings.Contains(w.Body.String(), "more than 1024 parameters"):
			t.Errorf("%d parameters: %s", tc.params, w.Body)
		}
	}
}

// sessionWith opens the same session for every launch.
type sessionWith struct{ session *authv1.LtiSession }

func (s sessionWith) CreateLtiSession(context.Context, *authv1.CreateLtiSessionRequest, ...grpc.CallOption) (*authv1.LtiSession, error) {
	return s.session, nil
}

// The page opens the exam configuration of the verified launch, as the
// workspace service read it: the last custom_exam_config_id, trimmed.
func TestLaunchPageOpensTheSessionsExam(t *testing.T) {
	const exam = "0f8fad5b-d9cb-469f-a165-70867728950e"
	session := &authv1.LtiSession{Auth: "dG9rZW4=", Email: "ada@example.com", CustomParameters: []*authv1.LtiParameter{
		{Name: "custom_exam_config_id", Value: "7c9e6679-7425-40de-944b-e07fc1f90ae7"},
		{Name: "custom_exam_config_id", Value: " " + exam + "\n"},
		{Name: "custom_other", Value: "x"},
	}}
	noMetadata := func(context.Context, *http.Request) metadata.MD { return nil }
	launch := Launch(sessionWith{session}, noMetadata, 32<<10, slog.New(slog.NewTextHandler(io.Discard, nil)))
	r := httptest.NewRequest(http.MethodPost, LaunchPath, strings.NewReader("custom_exam_config_id=ignored"))
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	w := httptest.NewRecorder()
	launch(w, r, nil)
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `data-exam-config-id="`+exam+`"`) {
		t.Fatalf("%d:\n%s", w.Code, w.Body)
	}
}
