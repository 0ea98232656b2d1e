module github.com/liveproctor/workspaces/gateway

go 1.26.0

require github.com/liveproctor/workspaces/pkg v0.0.0-00010101000000-000000000000

replace github.com/liveproctor/workspaces/pkg => ../pkg
