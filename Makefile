# Nodewright — every target installs what it needs (Go modules, the pinned CDK CLI, moto, the local
# control plane binaries); nothing has to be set up by hand first. `make help` lists the targets.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

GO          ?= go
CDK_VERSION := 2.1148.1
TOOLS       := .tools
CDK         := $(TOOLS)/node_modules/.bin/cdk
CDK_STAMP   := $(TOOLS)/.aws-cdk-$(CDK_VERSION)
FUNCTIONS   := $(patsubst functions/%/main.go,%,$(wildcard functions/*/main.go))
TEST_FLAGS  ?= -count=1 -timeout=40m
PKGS        ?= ./...

export CDK_DISABLE_VERSION_CHECK := 1
export CDK_DISABLE_CLI_TELEMETRY := true
# jsii (the CDK runtime) warns loudly on Node 20; it works, and the warning drowns test output.
export JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION := 1

.PHONY: help build test test-race lint synth kube-bin moto demo bench-karpenter bench-karpenter-disrupt bench-scale clean

help: ## list the targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-z-]+:.*## / {printf "  %-10s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

build: ## cross-compile every function to dist/<fn>/bootstrap (linux/arm64, static, lambda.norpc)
	@if [ -z "$(FUNCTIONS)" ]; then echo "no functions under functions/ yet: nothing to build"; fi
	@for fn in $(FUNCTIONS); do \
		echo "build dist/$$fn/bootstrap"; \
		CGO_ENABLED=0 GOOS=linux GOARCH=arm64 $(GO) build -tags lambda.norpc -trimpath -ldflags='-s -w' \
			-o dist/$$fn/bootstrap ./functions/$$fn; \
	done

test: moto kube-bin $(CDK_STAMP) ## run unit, integration (moto, local control plane) and CDK tests (the real CDK CLI included); ends with "N passed, N failed, N skipped"
	@bash .ci/gotest.sh $(TEST_FLAGS) $(PKGS)

# The packages whose production code runs goroutines (workers, parallel reads, background refreshes).
RACE_PKGS ?= ./shared/adapters/crash ./shared/adapters/nodeclass ./shared/adapters/instance ./shared/adapters/kube ./shared/adapters/mirror ./shared/adapters/state \
	./shared/core/scheduling ./shared/flows/lifecycle ./shared/flows/podwebhook ./shared/flows/termination \
	./shared/flows/disruptionrun ./shared/flows/provisioning ./shared/adapters/capacitybuffer ./functions/provisioner ./functions/lifecycle ./cmd/nodewright

test-race: moto kube-bin ## the packages that run goroutines under the race detector (RACE_PKGS; slow, not in make test or CI)
	$(GO) test -race -count=1 -timeout=60m $(RACE_PKGS)

lint: ## gofmt, go vet and staticcheck (pinned as a tool in go.mod)
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.tools/*')); \
		if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) tool staticcheck ./...

synth: $(CDK_STAMP) build ## offline `cdk synth` into cdk.out/ with the pinned CDK CLI (builds the functions first)
	$(CDK) synth --no-notices --no-version-reporting --output cdk.out --quiet
	@ls cdk.out/*.template.json

$(CDK_STAMP):
	@command -v npm >/dev/null || { echo "npm (Node.js 20+) is needed for the CDK CLI"; exit 1; }
	npm install --prefix $(TOOLS) --no-save --no-audit --no-fund --loglevel=error aws-cdk@$(CDK_VERSION)
	@touch $@

kube-bin: ## build etcd, kube-apiserver, kube-scheduler, kube-controller-manager into the cache (cold: ~20 min)
	@bash .ci/kube-bin.sh >/dev/null

moto: ## make sure moto_server is available (pip installs it when missing)
	@python3 -c 'import moto.server, werkzeug.serving' 2>/dev/null || \
		python3 -m pip install --quiet 'moto[server]'

DEMO_DIR ?= .demo

demo: kube-bin moto ## the local sandbox: every scenario with a timeline, reports in $(DEMO_DIR)/
	@mkdir -p $(DEMO_DIR)
	$(GO) run ./cmd/nodewright demo --scenario all --report $(DEMO_DIR)/report.json --log $(DEMO_DIR)/functions.log

BENCH_PODS   ?= 1000,5000
BENCH_SCALES ?= 20
BENCH_RUNS   ?= 3

bench-karpenter: ## compare cost and solve time with Karpenter's own scheduler (own module; downloads Karpenter; not in CI)
	cd shared/testsupport/karpentercompare && $(GO) run . -pods=$(BENCH_PODS) -scales=$(BENCH_SCALES) -runs=$(BENCH_RUNS)

DISRUPT_TESTDATA   := ../../../cmd/nodewright/testdata/disrupt
DISRUPT_DIRS       ?= $(DISRUPT_TESTDATA)/empty,$(DISRUPT_TESTDATA)/repack,$(DISRUPT_TESTDATA)/budget,$(DISRUPT_TESTDATA)/donotdisrupt,$(DISRUPT_TESTDATA)/pdb,$(DISRUPT_TESTDATA)/spot,$(DISRUPT_TESTDATA)/whenempty
DISRUPT_FRAGMENTED ?= 60,250
DISRUPT_HARD       ?= 200
DISRUPT_FLAGS      ?=

bench-karpenter-disrupt: kube-bin ## consolidation to a fixed point: Karpenter's disruption controller (envtest) beside plan --disrupt (own module; not in CI)
	cd shared/testsupport/karpentercompare && $(GO) run . -disrupt=$(DISRUPT_DIRS) \
		-fragmented=$(DISRUPT_FRAGMENTED) -hard=$(DISRUPT_HARD) -runs=$(BENCH_RUNS) $(DISRUPT_FLAGS)

SCALE_TIERS ?= 1000,2000,5000
SCALE_RUNS  ?= 3

bench-scale: kube-bin moto ## measure every function at 1,000/2,000/5,000 nodes (SCALE_TIERS, SCALE_RUNS) into .bench/scale.json (not in CI)
	@mkdir -p .bench
	$(GO) build -o .bench/scalebench ./cmd/scalebench
	SCALE_TIERS=$(SCALE_TIERS) SCALE_RUNS=$(SCALE_RUNS) .bench/scalebench -out .bench/scale.json

clean: ## remove build outputs (keeps the control plane cache)
	rm -rf dist cdk.out .test
