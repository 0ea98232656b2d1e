// Command benchproxy is the floor `make bench` holds the gateway hop
// against: the least a JSON/REST front of the workspace service can do, in
// one bare process.
//
// It answers GET /api/workspace/{id} by calling GetWorkspace on the
// workspace service with the caller's Authorization header and a deadline
// (as any front must bound its calls), over a client connection set up like
// the gateway's (pkg/grpcmw's transport options), and writes the answer as
// JSON the way the gateway renders it (unset fields included) with its
// ETag. There is no routing table, middleware, access log, metrics or error
// shape: what the gateway costs beyond benchproxy is what grpc-gateway and
// the gateway's own features cost, and what benchproxy costs beyond a
// direct gRPC call is what any HTTP front costs on the machine.
//
// Flags (each defaults to the environment variable named in its usage):
//
//	benchproxy -listen 127.0.0.1:8091 -workspace 127.0.0.1:9090
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/encoding/protojson"

	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/pkg/grpcmw"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "benchproxy:", err)
		os.Exit(1)
	}
}

func run() error {
	listen := flag.String("listen", envOr("BENCHPROXY_ADDR", "127.0.0.1:8091"), "listen address (BENCHPROXY_ADDR)")
	backend := flag.String("workspace", envOr("WORKSPACE_SERVICE_ADDR", "127.0.0.1:9090"), "workspace service address (WORKSPACE_SERVICE_ADDR)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	conn, err := grpc.NewClient(*backend, append(grpcmw.DialTransportOptions(),
		grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		return fmt.Errorf("dial %s: %w", *backend, err)
	}
	defer conn.Close()

	mux := http.NewServeMux()
	mux.Handle("GET /api/workspace/{id}", &getHandler{client: workspacev1.NewWorkspaceServiceClient(conn)})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}

	lis, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(lis) }()
	fmt.Printf("benchproxy listening on %s (workspace service %s)\n", lis.Addr(), *backend)

	select {
	case err := <-served:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return errors.Join(srv.Shutdown(shutdown), conn.Close())
}

// callTimeout bounds each call, as the gateway's default REQUEST_TIMEOUT does.
const callTimeout = 10 * time.Second

// getHandler translates GET /api/workspace/{id} into GetWorkspace.
type getHandler struct {
	client workspacev1.WorkspaceServiceClient
}

var render = protojson.MarshalOptions{EmitUnpopulated: true}

func (h *getHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), callTimeout)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "authorization", r.Header.Get("Authorization"))
	var header metadata.MD
	ws, err := h.client.GetWorkspace(ctx, &workspacev1.GetWorkspaceRequest{Id: r.PathValue("id")}, grpc.Header(&header))
	if err != nil {
		// A bench helper: the status is enough to see what went wrong.
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	body, err := render.Marshal(ws)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if etag := header.Get("etag"); len(etag) == 1 {
		w.Header().Set("ETag", etag[0])
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
