package grpcmw

import "google.golang.org/grpc"

// Flow-control windows of the connections between our components.
//
// Setting them also turns off grpc-go's bandwidth-delay-product estimator,
// which otherwise answers a burst of received data with a PING and waits
// for its ACK to size the window. Between the gateway and a service nearly
// every call is one small request and one small answer, so the estimator
// pinged on nearly every call: two extra frames per call on each side,
// each a write and a wake-up, and the gateway acknowledged the service's
// PING before it wrote the HTTP answer (seen with strace). On loopback that
// was a good part of the gateway hop's cost.
//
// Static windows of this size are far above what one answer needs (a full
// page of workspaces is a few hundred KiB), and the links are a LAN or
// loopback, where a larger window would buy nothing. They bound what a
// peer may send ahead; memory is spent only on data actually in flight.
const (
	streamWindow = 1 << 20 // per call
	connWindow   = 4 << 20 // per connection, shared by its calls
)

// serverWorkers is how many goroutines a server keeps to run calls in.
// Without them grpc-go starts a goroutine per call, whose stack starts
// small and is grown (copied) during nearly every call that reaches Redis
// or another service: a tenth of the auth service's CPU under login load
// went to runtime.newstack. A worker keeps its grown stack from call to
// call. Calls beyond this many at once still get a goroutine each; the
// gateway keeps about as many calls in flight as it has busy clients.
const serverWorkers = 64

// ServerTransportOptions are the options every gRPC server of ours starts
// with: the windows and the workers above, and the connections' age and
// keepalive (balance.go).
func ServerTransportOptions(s ServerSettings) []grpc.ServerOption {
	return append([]grpc.ServerOption{
		grpc.InitialWindowSize(streamWindow),
		grpc.InitialConnWindowSize(connWindow),
		grpc.NumStreamWorkers(serverWorkers),
	}, connectionAgeOptions(s)...)
}
