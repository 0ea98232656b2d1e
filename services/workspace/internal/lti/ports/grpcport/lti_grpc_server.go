// Package grpcport is the LTI context's gRPC face: it converts between the
// WorkspaceService's LTI messages and the LTI use cases, and nothing else.
// The workspace service registers one WorkspaceService, whose server hands
// these methods here.
package grpcport

import ltiapp "github.com/liveproctor/workspaces/services/workspace/internal/lti/app"

// Server answers the WorkspaceService's LTI methods (lti_*_grpc.go,
// lti13_*_grpc.go, lti11_*_grpc.go).
type Server struct {
	uc UseCases
}

// UseCases are the LTI use cases the methods call.
type UseCases struct {
	Registrations       *ltiapp.Registrations
	LTI11Launches       *ltiapp.LTI11Launches
	LTI13Logins         *ltiapp.LTI13Logins
	LTI13Launches       *ltiapp.LTI13Launches
	Launches            *ltiapp.Launches
	Roster              *ltiapp.Roster
	Grades              *ltiapp.Grades
	DeepLinking         *ltiapp.DeepLinking
	DynamicRegistration *ltiapp.DynamicRegistration
	ToolKeys            *ltiapp.ToolKeys
}

// NewServer returns the LTI methods' server over uc.
func NewServer(uc UseCases) *Server { return &Server{uc: uc} }
