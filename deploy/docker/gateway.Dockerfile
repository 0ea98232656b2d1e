# syntax=docker/dockerfile:1
# The gateway (REST on :8080; GATEWAY_ADDR). Build from the repository root:
#   docker build -f deploy/docker/gateway.Dockerfile -t workspaces-gateway:dev .

FROM golang:1.26-bookworm AS build
WORKDIR /src

# Module files first, so the download layer is reused until a go.mod or
# go.sum changes. go.work names every module of the workspace, and Go refuses
# to load it unless each one's go.mod is present, so all of them are copied,
# even those this binary does not link.
COPY go.work go.work.sum ./
COPY pkg/go.mod pkg/go.sum ./pkg/
COPY pkg/testenv/go.mod pkg/testenv/go.sum ./pkg/testenv/
COPY services/workspace/go.mod services/workspace/go.sum ./services/workspace/
COPY services/auth/go.mod services/auth/go.sum ./services/auth/
COPY gateway/go.mod gateway/go.sum ./gateway/
COPY deploy/local/go.mod deploy/local/go.sum ./deploy/local/
COPY deploy/manifests-test/go.mod deploy/manifests-test/go.sum ./deploy/manifests-test/
COPY tools/go.mod tools/go.sum ./tools/
RUN go mod download

# Only the sources this binary is built from.
COPY pkg/ ./pkg/
COPY gateway/ ./gateway/
RUN --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -buildvcs=false -ldflags="-s -w" \
      -o /out/gateway ./gateway/cmd/gateway

# Static binary on distroless: no shell, no package manager, CA certificates
# and tzdata included.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/gateway /gateway
# 65532 is the image's "nonroot" user; numeric so that Kubernetes'
# runAsNonRoot can verify it.
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/gateway"]
