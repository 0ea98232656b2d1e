// Package grpcport is the webhook context's gRPC face: it converts between
// the WorkspaceService's webhook messages and the endpoints' use cases, and
// nothing else. The workspace service registers one WorkspaceService,
// whose server hands these methods here.
package grpcport

import webhookapp "github.com/liveproctor/workspaces/services/workspace/internal/webhook/app"

// Server answers the WorkspaceService's webhook methods
// (webhook_grpc.go).
type Server struct {
	endpoints *webhookapp.Endpoints
}

// NewServer returns the webhook methods' server over the endpoints' use
// cases.
func NewServer(endpoints *webhookapp.Endpoints) *Server { return &Server{endpoints: endpoints} }
