// Command benchproxy is the floor `make bench` holds the gateway hop
// against: the least a JSON/REST front of our gRPC services can do, in one
// bare process.
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
// With -auth it also answers POST /api/login/sdk, the HTTP half of the
// login floor: it decodes {email, workspaceId}, calls CreateSdkToken on
// that address (benchauth, a bare token service) over one client
// connection with the caller's Authorization as metadata, and writes
// {auth, expiresAt}, the fields the gateway answers.
//
// Flags (each defaults to the environment variable named in its usage):
//
//	benchproxy -listen 127.0.0.1:8091 -workspace 127.0.0.1:9090 [-auth 127.0.0.1:9092]
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

	authv1 "github.com/liveproctor/workspaces/pkg/gen/auth/v1"
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
	authAddr := flag.String("auth", os.Getenv("AUTH_SERVICE_ADDR"), "token service address for POST /api/login/sdk; empty: no login route (AUTH_SERVICE_ADDR)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	conn, err := dial(*backend)
	if err != nil {
		return err
	}
	defer conn.Close()

	mux := http.NewServeMux()
	mux.Handle("GET /api/workspace/{id}", &getHandler{client: workspacev1.NewWorkspaceServiceClient(conn)})
	if *authAddr != "" {
		authConn, err := dial(*authAddr)
		if err != nil {
			return err
		}
		defer authConn.Close()
		mux.Handle("POST /api/login/sdk", &loginHandler{client: authv1.NewAuthServiceClient(authConn)})
	}
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

// dial makes a client connection set up like the gateway's.
func dial(addr string) (*grpc.ClientConn, error) {
	conn, err := grpc.NewClient(addr, append(grpcmw.DialOptions(workspacev1.WorkspaceService_ServiceDesc.ServiceName, authv1.AuthService_ServiceDesc.ServiceName),
		grpc.WithTransportCredentials(insecure.NewCredentials()))...)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	return conn, nil
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
