module github.com/liveproctor/workspaces/services/workspace

go 1.26.0

require github.com/liveproctor/workspaces/pkg v0.0.0-00010101000000-000000000000

require (
	golang.org/x/net v0.61.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20261019180522-ce908d29299b // indirect
	google.golang.org/grpc v1.85.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

replace github.com/liveproctor/workspaces/pkg => ../../pkg
