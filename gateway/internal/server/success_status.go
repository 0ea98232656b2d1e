package server

import (
	"context"
	"net/http"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	authv1 "github.com/liveproctor/workspaces/pkg/gen/auth/v1"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/pkg/restrules"
)

// successStatuses maps the full gRPC method names ("/pkg.Service/Method")
// whose REST answer is not 200 to their status, as the protos' operation
// option (rest.v1.Operation.success_status) declares it: the same option
// the OpenAPI document is written from.
func successStatuses() map[string]int {
	out := map[string]int{}
	for _, file := range []protoreflect.FileDescriptor{
		workspacev1.File_workspace_v1_workspace_proto, authv1.File_auth_v1_auth_proto,
	} {
		services := file.Services()
		for i := range services.Len() {
			methods := services.Get(i).Methods()
			for j := range methods.Len() {
				m := methods.Get(j)
				if status := restrules.SuccessStatus(m); status != http.StatusOK {
					out["/"+string(m.Parent().FullName())+"/"+string(m.Name())] = status
				}
			}
		}
	}
	return out
}

// writeSuccessStatus is the forward-response option that answers a
// method's declared success status (201 for a create) instead of 200.
func writeSuccessStatus(statuses map[string]int) func(context.Context, http.ResponseWriter, proto.Message) error {
	return func(ctx context.Context, w http.ResponseWriter, _ proto.Message) error {
		if method, ok := runtime.RPCMethod(ctx); ok {
			if status, ok := statuses[method]; ok {
				w.WriteHeader(status)
			}
		}
		return nil
	}
}
