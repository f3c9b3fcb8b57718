# pgts — see README.md. `make demo` and `make test` are the two set-up
# commands; both install what they need.

GO      ?= go
BIN     := bin/pgts
VERSION := $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X github.com/pgts/pgts/internal/cli.Version=$(VERSION)

.PHONY: all build deps demo test fmt-check vet bench-load clean

all: build

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/pgts

deps:
	@scripts/install-deps.sh

demo: deps build
	@scripts/demo.sh $(BIN)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

test: deps fmt-check vet
	$(GO) test -race -timeout 20m ./...

clean:
	rm -rf bin
