module github.com/liveproctor/workspaces/pkg/testenv

go 1.26.0
