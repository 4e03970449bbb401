# fedkit's developer commands. `make test` is what CI runs (.ci/run) and what README promises.

GO        ?= go
PKGS      ?= ./...
BENCH     ?= .
BENCHTIME ?= 1s

.PHONY: test testbins vet lint unit properties generate verify-generate bench fuzz soak scale quickstart image

## test: vet and lint, then every test with -race (-vet=off: all of vet has just run), the
## real kube-apiserver/etcd suites included, then
## the examples that are modules of their own (examples/controllerruntime: the library never
## depends on controller-runtime, so its example has its own go.mod), then internal/kubefedref
## (KubeFed's own planner against migrated preferences; its own go.mod keeps KubeFed out).
test: testbins vet lint
	FEDKIT_TESTBIN_DIR="$$(./hack/install-testbins.sh | tail -n 1)" $(GO) test -race -vet=off -count=1 -timeout 45m $(PKGS)
	cd examples/controllerruntime && $(GO) vet ./... && \
		FEDKIT_TESTBIN_DIR="$$(../../hack/install-testbins.sh | tail -n 1)" $(GO) test -race -vet=off -count=1 -timeout 10m ./...
	cd internal/kubefedref && $(GO) vet ./... && $(GO) test -race -vet=off -count=1 -timeout 10m ./...

## testbins: build kube-apiserver and etcd from the Go module proxy into a cache outside the
## clone (seconds when cached, about 15 minutes cold on 2 cores).
testbins:
	./hack/install-testbins.sh >/dev/null

vet:
	$(GO) vet $(PKGS)

## lint: go.mod is tidy (a direct dependency is never marked // indirect), then staticcheck,
## pinned by the tool line in go.mod (go tool staticcheck), over the module and over
## examples/controllerruntime (its own module, linted by the same binary).
lint:
	$(GO) mod tidy -diff
	$(GO) tool staticcheck $(PKGS)
	cd examples/controllerruntime && "$$(cd ../.. && $(GO) tool -n staticcheck)" ./...

## unit: the in-memory tests only (no real API servers; they skip).
unit:
	$(GO) test -race $(PKGS)

## properties: the property tests of the pure functions with every case they draw
## (fedtest.Iterations: `make test`'s -race build draws a fifth of them), without -race.
properties:
	$(GO) test -count=1 ./scheduler ./placement

## generate: deep copies and CRD schemas (controller-gen), then the installable CRDs.
generate:
	$(GO) generate ./...
	$(GO) test ./federation ./dnsrecord -run TestCRDFiles -update

## bench: every benchmark with allocation counts.
bench:
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchmem -benchtime $(BENCHTIME) $(PKGS)

## fuzz: every fuzz target for FUZZTIME each (CI runs them for a few seconds each).
FUZZTIME ?= 60s
fuzz:
	FUZZTIME=$(FUZZTIME) ./hack/fuzz.sh

## scale: the measured runs of SCALE.md (test/scale): the whole control plane in memory at
## SCALE_SIZES (objects x fake clusters, each on one control plane and on SCALE_SHARDS static
## shards), then SCALE_REAL FederatedConfigMaps propagated to three real members next to the
## servers' raw create rate, by fedkit-controller-manager run as a separate process with
## config/manager's Deployment args, as deployed (SCALE_PROCESS= runs controlplane inside the
## test process instead, where host writes are counted by loop). Tens of minutes on 2 cores
## and a few GB of heap; `make test` runs bounded versions (100 x 10 in memory, 100 objects on
## real servers).
SCALE_SIZES   ?= 1000x100,10000x10
SCALE_SHARDS  ?= 4
SCALE_REAL    ?= 1000
SCALE_PROCESS ?= 1
scale: testbins
	FEDKIT_TESTBIN_DIR="$$(./hack/install-testbins.sh | tail -n 1)" $(GO) test -count=1 -timeout 180m -v \
		-run 'TestMemoryScale|TestRealScale' ./test/scale \
		-args -scale.sizes=$(SCALE_SIZES) -scale.shards=$(SCALE_SHARDS) -scale.real=$(SCALE_REAL) \
		$(if $(SCALE_PROCESS),-scale.process,)

## soak: the chaos soak (test/soak) over more seeds and a bigger fleet than `make test` runs:
## make soak SEEDS=20 FIRST=1 CLUSTERS=20 OBJECTS=500 STEPS=40 [RUNMODE=1] [RACE=-race]
## [WITHOUT=kinds,autoscale]. Every feature is on (WITHOUT empty); `make test`'s seed leaves
## out kinds and autoscale until their open findings are fixed (test/soak/doc.go).
## A failing seed prints itself and the command that replays it.
SEEDS    ?= 10
FIRST    ?= 1
CLUSTERS ?= 20
OBJECTS  ?= 500
STEPS    ?= 40
RACE     ?=
RUNMODE  ?=
WITHOUT  ?=
soak:
	$(GO) test $(RACE) ./test/soak -run '^TestSoak$$' -count=1 -timeout 48h -v \
		-first=$(FIRST) -seeds=$(SEEDS) -clusters=$(CLUSTERS) -objects=$(OBJECTS) -steps=$(STEPS) -soak.without=$(WITHOUT) \
		$(if $(RUNMODE),-run-mode,)

quickstart:
	$(GO) run ./examples/quickstart

## image: fedkit-controller-manager's container image from the Dockerfile, tagged IMG, with
## the version VERSION linked in (default: git describe). config/manager's Deployment runs
## fedkit-controller-manager:dev, the default IMG. ko users build with .ko.yaml instead.
IMG     ?= fedkit-controller-manager:dev
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
image:
	docker build --build-arg VERSION=$(VERSION) -t $(IMG) .
