module github.com/liveproctor/workspaces/services/auth

go 1.26.0

require (
	github.com/liveproctor/workspaces/pkg v0.0.0-00010101000000-000000000000
	github.com/redis/go-redis/v9 v9.23.0
	google.golang.org/grpc v1.85.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/grpc-ecosystem/grpc-gateway/v2 v2.33.0 // indirect
	go.uber.org/atomic v1.12.0 // indirect
	golang.org/x/net v0.61.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	google.golang.org/genproto/googleapis/api v0.0.0-20261026165753-2ffab32bce7e // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20261019180522-ce908d29299b // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

replace github.com/liveproctor/workspaces/pkg => ../../pkg

// Test-only: the redis-server the adapter tests run against.
require github.com/liveproctor/workspaces/deploy/local v0.0.0-00010101000000-000000000000

replace github.com/liveproctor/workspaces/deploy/local => ../../deploy/local
