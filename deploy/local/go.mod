module github.com/liveproctor/workspaces/deploy/local

go 1.26.0
