# The two commands a new machine needs are `make run` and `make test`;
# everything else here is what they are built from.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

BIN := $(CURDIR)/bin
export PATH := $(BIN):$(PATH)

# Code generators, pinned. `make tools` installs them into bin/ with
# `go install`, so buf runs offline with local plugins only.
BUF_VERSION               := v1.61.0
PROTOC_GEN_GO_VERSION     := v1.36.11
PROTOC_GEN_GO_GRPC_VERSION := v1.6.2
GRPC_GATEWAY_VERSION      := v2.33.0
OAPI_CODEGEN_VERSION      := v2.8.2
TOOLS_STAMP := $(BIN)/.tools-$(BUF_VERSION)-$(PROTOC_GEN_GO_VERSION)-$(PROTOC_GEN_GO_GRPC_VERSION)-$(GRPC_GATEWAY_VERSION)-$(OAPI_CODEGEN_VERSION)

# Every Go module of the workspace (go.work).
MODULES := pkg pkg/testenv services/workspace services/auth gateway deploy/local deploy/manifests-test tools
# The FerretDB command pkg/testenv runs as the MongoDB stand-in: a module of
# its own outside go.work, so it alone requires FerretDB; the go command
# works in it with GOWORK=off.
FERRETDB_MODULE := pkg/testenv/cmd/ferretdb
PACKAGES := $(addsuffix /...,$(addprefix ./,$(MODULES)))
# The services' and libraries' own tests run under the race detector (the
# caches, limits and writers there are shared by goroutines); the e2e
# tests, which drive built binaries, and the tools run without it. The
# stand-in's command (its front's write lock and TTL indexes) is tested in
# its own module, under the race detector too.
RACE_PACKAGES := ./pkg/... ./services/workspace/... ./services/auth/... ./gateway/...
COMMANDS := workspace auth gateway devstack

# The OpenAPI document, the Go client the e2e tests generate from it (with
# oapi-codegen and the settings beside it), and the linter's folder.
OPENAPI_DOC  := pkg/gen/openapi/openapi.json
APICLIENT    := deploy/local/e2e/apiclient
OPENAPI_LINT := tools/openapi-lint
# The request generator of the e2e fuzzer (json-schema-faker, pinned).
OPENAPI_FUZZ := tools/openapi-fuzz
# The LTI 1.3 platform of the e2e tests (npm jose, pinned: a JOSE implementation independent of pkg/jose).
LTI_PLATFORM := tools/lti-platform

GO_TEST_FLAGS ?= -count=1 -timeout 30m

.PHONY: help
help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-16s %s\n", $$1, $$2}'

.PHONY: run
run: build run-deps ## build and start everything on the embedded default (Ctrl-C stops it)
	@$(BIN)/devstack

.PHONY: test
test: test-deps tools check-generated lint-openapi vet cross-build ## install what the tests need, then run every test of every module
	go test $(GO_TEST_FLAGS) -race $(RACE_PACKAGES)
	go test $(GO_TEST_FLAGS) $(filter-out $(RACE_PACKAGES),$(PACKAGES))
	cd $(FERRETDB_MODULE) && GOWORK=off go test $(GO_TEST_FLAGS) -race ./...
	$(call fuzz,$(FUZZ_TEST_TIME),)

# Fuzz targets of the decoders and validators on the request path, as
# package:FuzzName. `go test -fuzz` takes one target of one package per run,
# so `make test` and `make fuzz` loop over this list; both fail when a Fuzz
# function in the tree is missing from it. Plain `go test` runs each one's
# seed corpus (f.Add and testdata/fuzz/FuzzName/) as an ordinary test.
FUZZ_TARGETS := \
	./pkg/ident:FuzzValidWorkspaceID \
	./pkg/basicauth:FuzzParse \
	./pkg/basicauth:FuzzHeaderRoundTrip \
	./pkg/oauth1:FuzzBaseString \
	./pkg/jose:FuzzVerify \
	./pkg/outbound:FuzzParseRetryAfter \
	./services/auth/internal/domain:FuzzTokenValid \
	./services/auth/internal/domain:FuzzCheckLogin \
	./services/auth/internal/app:FuzzBearer \
	./services/auth/internal/adapters/redisstore:FuzzDecodeValue \
	./services/workspace/internal/domain:FuzzCheckNewWorkspace \
	./services/workspace/internal/domain:FuzzCheckListQuery \
	./services/workspace/internal/lti/domain:FuzzCheckLaunch \
	./services/workspace/internal/lti/domain:FuzzCheckNewRegistration \
	./services/workspace/internal/lti/domain:FuzzReadPlatformConfiguration \
	./services/workspace/internal/app:FuzzPageToken \
	./services/workspace/internal/app:FuzzListWorkspaces \
	./services/workspace/internal/app:FuzzEventPageToken \
	./services/workspace/internal/ports/grpcport:FuzzIfMatch \
	./services/workspace/internal/ports/grpcport:FuzzUpdateChanges \
	./gateway/internal/restcheck:FuzzCheckBody \
	./gateway/internal/restcheck:FuzzDecodeBody \
	./gateway/internal/restcheck:FuzzQueryParser \
	./gateway/internal/reqstate:FuzzRequestID \
	./gateway/internal/server:FuzzBodyAnswers \
	./gateway/internal/server:FuzzQueryAnswers \
	./gateway/internal/server:FuzzPathAnswers
# How long each target runs in `make test`, and in `make fuzz` unless
# FUZZTIME says otherwise (a duration, or a count such as 100000x).
FUZZ_TEST_TIME := 2s
FUZZTIME ?= 1m
# How long the fuzzer may spend shrinking an input it keeps; Go's default
# (1m) would eat a brief run.
FUZZMINIMIZETIME ?= 1s

.PHONY: fuzz
fuzz: ## run every fuzz target for FUZZTIME each (default 1m; FUZZ=FuzzName runs one)
	$(call fuzz,$(FUZZTIME),$(FUZZ))

# fuzz runs the targets of FUZZ_TARGETS named $(2) (all when empty) for
# $(1) each. A failing input is written to the package's
# testdata/fuzz/FuzzName/, where it stays as a regression seed once fixed.
# Go 1.26's fuzzer can report "context deadline exceeded" when -fuzztime
# runs out mid-call (go.dev/issue/75804, fixed in Go 1.27); without a
# failing input that is not a finding, and the loop goes on.
define fuzz
	@listed=$$(printf '%s\n' $(FUZZ_TARGETS) | sort); \
	found=$$(grep -rE --include='*_test.go' '^func Fuzz[A-Za-z0-9_]*\(' pkg services gateway deploy tools \
		| sed -E 's|^(.*)/[^/]+:func (Fuzz[A-Za-z0-9_]*)\(.*|./\1:\2|' | sort); \
	if [ "$$listed" != "$$found" ]; then \
		echo "FUZZ_TARGETS in the Makefile and the Fuzz functions in the tree differ (< listed, > found):" >&2; \
		diff <(echo "$$listed") <(echo "$$found") >&2 || true; exit 1; \
	fi; \
	start=$$SECONDS; ran=0; \
	for entry in $(FUZZ_TARGETS); do \
		pkg=$${entry%%:*}; name=$${entry##*:}; \
		if [ -n "$(2)" ] && [ "$$name" != "$(2)" ]; then continue; fi; \
		ran=$$((ran + 1)); t0=$$SECONDS; \
		if out=$$(go test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(1) -fuzzminimizetime $(FUZZMINIMIZETIME) $$pkg 2>&1); then \
			echo "fuzz $$name ($$pkg): ok, $$((SECONDS - t0))s"; \
		elif grep -q '^    context deadline exceeded$$' <<<"$$out" && \
			! grep -qE 'Failing input written|failure while testing seed corpus' <<<"$$out"; then \
			echo "fuzz $$name ($$pkg): ok, $$((SECONDS - t0))s (stopped by go.dev/issue/75804, no failing input)"; \
		else \
			echo "$$out"; echo "fuzz $$name ($$pkg): FAILED" >&2; exit 1; \
		fi; \
	done; \
	if [ $$ran = 0 ]; then echo "no fuzz target named $(2) in FUZZ_TARGETS" >&2; exit 1; fi; \
	echo "fuzzed $$ran targets in $$((SECONDS - start))s"
endef

# The README's screenshots of the administrator's portal (docs/portal-*.png)
# are what its Chromium test sees on its tour; this writes them there.
.PHONY: portal-screenshots
portal-screenshots: test-deps ## refresh docs/portal-*.png: the portal's Chromium tour, its screenshots written to docs/
	PORTAL_SCREENSHOTS=docs go test $(GO_TEST_FLAGS) -run '^TestPortalInChromium$$/^tour$$' ./deploy/local/e2e/

.PHONY: bench
bench: build run-deps bench-deps ## Go micro-benchmarks, then the load benchmark (bench/latest.md; BENCH_FLAGS=-large for 100k)
	go test -run '^$$' -bench . -benchmem ./pkg/... ./services/workspace/... ./services/auth/... ./gateway/... ./deploy/local/docvalidation/...
	go run ./deploy/local/cmd/bench $(BENCH_FLAGS)

.PHONY: build
build: ## build every binary into bin/
	@mkdir -p $(BIN)
	go build -o $(BIN)/workspace ./services/workspace/cmd/workspace
	go build -o $(BIN)/auth ./services/auth/cmd/auth
	go build -o $(BIN)/gateway ./gateway/cmd/gateway
	go build -o $(BIN)/devstack ./deploy/local/cmd/devstack
	cd $(FERRETDB_MODULE) && GOWORK=off go build -o $(BIN)/ferretdb .

.PHONY: vet
vet: ## gofmt and go vet every module
	@unformatted=$$(gofmt -l $(MODULES) $(FERRETDB_MODULE) | grep -v '^pkg/gen/' || true); \
	if [ -n "$$unformatted" ]; then echo "not gofmt'd (run gofmt -w):" >&2; echo "$$unformatted" >&2; exit 1; fi
	go vet $(PACKAGES)
	cd $(FERRETDB_MODULE) && GOWORK=off go vet ./...

# What `make run`, `make test` and `make bench` build must also build on a
# Mac: the binaries, the local stack and its stand-ins, and the tests.
CROSS_MODULES := pkg pkg/testenv services/workspace services/auth gateway deploy/local
CROSS_PACKAGES := $(addsuffix /...,$(addprefix ./,$(CROSS_MODULES)))

.PHONY: cross-build
cross-build: ## build and vet for macOS (darwin/arm64) what runs there
	GOOS=darwin GOARCH=arm64 go build $(CROSS_PACKAGES)
	GOOS=darwin GOARCH=arm64 go vet $(CROSS_PACKAGES)
	cd $(FERRETDB_MODULE) && GOWORK=off GOOS=darwin GOARCH=arm64 go build -o /dev/null .

.PHONY: tools
tools: $(TOOLS_STAMP) ## install the pinned code generators into bin/

$(TOOLS_STAMP):
	@mkdir -p $(BIN)
	rm -f $(BIN)/.tools-*
	GOBIN=$(BIN) GOWORK=off go install github.com/bufbuild/buf/cmd/buf@$(BUF_VERSION)
	GOBIN=$(BIN) GOWORK=off go install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION)
	GOBIN=$(BIN) GOWORK=off go install google.golang.org/grpc/cmd/protoc-gen-go-grpc@$(PROTOC_GEN_GO_GRPC_VERSION)
	GOBIN=$(BIN) GOWORK=off go install \
		github.com/grpc-ecosystem/grpc-gateway/v2/protoc-gen-grpc-gateway@$(GRPC_GATEWAY_VERSION)
	GOBIN=$(BIN) GOWORK=off go install github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@$(OAPI_CODEGEN_VERSION)
	touch $@

# Our own plugin, which writes the OpenAPI document (tools/restdoc); built
# from this checkout every time, so it is never older than its source.
.PHONY: restdoc-plugin
restdoc-plugin:
	@mkdir -p $(BIN)
	go build -o $(BIN)/protoc-gen-restdoc ./tools/cmd/protoc-gen-restdoc

.PHONY: generate
generate: tools restdoc-plugin ## lint the protos, regenerate pkg/gen and the e2e client
	$(BIN)/buf lint
	$(BIN)/buf generate
	$(BIN)/oapi-codegen -config $(APICLIENT)/oapi-codegen.yaml -o $(APICLIENT)/client.gen.go $(OPENAPI_DOC)

.PHONY: check-generated
check-generated: tools restdoc-plugin ## fail when pkg/gen or the e2e client is not what the protos generate
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	$(BIN)/buf lint; \
	$(BIN)/buf generate --output "$$tmp"; \
	if ! diff -r "$$tmp/pkg/gen" pkg/gen >/dev/null; then \
		diff -r "$$tmp/pkg/gen" pkg/gen | head -20 || true; \
		echo "pkg/gen is stale: run 'make generate' and commit the result" >&2; exit 1; \
	fi; \
	$(BIN)/oapi-codegen -config $(APICLIENT)/oapi-codegen.yaml -o "$$tmp/client.gen.go" "$$tmp/$(OPENAPI_DOC)"; \
	if ! diff "$$tmp/client.gen.go" $(APICLIENT)/client.gen.go >/dev/null; then \
		diff "$$tmp/client.gen.go" $(APICLIENT)/client.gen.go | head -20 || true; \
		echo "$(APICLIENT)/client.gen.go is stale: run 'make generate' and commit the result" >&2; exit 1; \
	fi; \
	echo "generated code is up to date"

# Redocly CLI lints the document; npm installs it, pinned by the lock file,
# whenever node_modules is missing or older than the pins.
.PHONY: lint-openapi
lint-openapi: $(OPENAPI_LINT)/node_modules/.installed ## lint the OpenAPI document (Redocly CLI, pinned in tools/openapi-lint)
	cd $(OPENAPI_LINT) && REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true \
		npx --no redocly lint --config redocly.yaml $(CURDIR)/$(OPENAPI_DOC)

$(OPENAPI_LINT)/node_modules/.installed: $(OPENAPI_LINT)/package.json $(OPENAPI_LINT)/package-lock.json
	$(call debian_package,nodejs npm,npm)
	@node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit((a == 20 && b >= 19) || (a == 22 && b >= 12) || a > 22 ? 0 : 1)' || { \
		echo "Redocly CLI needs Node.js 20.19+ or 22.12+, and this is $$(node --version): install a newer nodejs and retry" >&2; \
		exit 1; }
	cd $(OPENAPI_LINT) && npm ci --no-audit --no-fund
	touch $@

# `make run` and the tests start a real redis-server; the tests also drive a
# headless Chromium at /usr/bin/chromium (Debian packages). Install them when
# they are missing and we may (as root, with apt-get); otherwise say what to
# install.
define debian_package
	@command -v $(2) >/dev/null || { \
		if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
			echo "installing $(1) (Debian package)"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(1) >/dev/null; \
		else \
			echo "$(1) is missing: install it (Debian: apt-get install $(1)) and retry" >&2; exit 1; \
		fi; }
endef

.PHONY: run-deps
run-deps:
	$(call debian_package,redis-server,redis-server)

# `make bench` drives the HTTP load with wrk.
.PHONY: bench-deps
bench-deps:
	$(call debian_package,wrk,wrk)

.PHONY: test-deps
test-deps: run-deps $(OPENAPI_FUZZ)/node_modules/.installed $(LTI_PLATFORM)/node_modules/.installed
	$(call debian_package,chromium,/usr/bin/chromium)

$(OPENAPI_FUZZ)/node_modules/.installed: $(OPENAPI_FUZZ)/package.json $(OPENAPI_FUZZ)/package-lock.json
	$(call debian_package,nodejs npm,npm)
	cd $(OPENAPI_FUZZ) && npm ci --no-audit --no-fund
	touch $@

$(LTI_PLATFORM)/node_modules/.installed: $(LTI_PLATFORM)/package.json $(LTI_PLATFORM)/package-lock.json
	$(call debian_package,nodejs npm,npm)
	cd $(LTI_PLATFORM) && npm ci --no-audit --no-fund
	touch $@

.PHONY: tidy
tidy: ## go mod tidy in every module
	@for m in $(MODULES); do (cd $$m && go mod tidy); done
	cd $(FERRETDB_MODULE) && GOWORK=off go mod tidy

.PHONY: clean
clean: ## remove build output (keeps .data/, the local run's data)
	rm -rf $(BIN)
