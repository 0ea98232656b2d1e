module github.com/liveproctor/workspaces/pkg/testenv

go 1.26.0

require golang.org/x/net v0.61.0
