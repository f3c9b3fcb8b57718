# pgts — see README.md. `make demo` and `make test` are the two set-up
# commands; both install what they need.

GO      ?= go
BIN     := bin/pgts
VERSION := $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -X github.com/pgts/pgts/internal/cli.Version=$(VERSION)

.PHONY: all build deps test-deps demo test fmt-check vet parity bench-render bench-load bench-parse bench-bulk bench-insert bench-partition bench-serve bench-events bench-insert-any bench-memory bench-study bench-sql bench-rollup bench-tools clean

all: build

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/pgts

# The demo needs PostgreSQL and Go modules; the tests also need Chromium
# (pgts report's tests).
deps:
	@scripts/install-deps.sh

test-deps:
	@scripts/install-deps.sh chromium

demo: deps build
	@scripts/demo.sh $(BIN)

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

test: test-deps fmt-check vet
	$(GO) test -race -timeout 20m ./...

# parity: pgts serve against carbon-cache + whisper + graphite-web 1.1.10
# fed the same corpus; exits 1 on a difference not in
# scripts/parity/allowlist.txt (docs/parity.md). Not part of `make test`.
parity:
	@scripts/parity/setup
	@.parity/venv/bin/python scripts/parity/parity.py

# Benchmarks: each prints a table of medians over REPEAT interleaved runs
# (also saved as Markdown and JSON under bench-results/); the figures in
# docs/benchmarks.md come from these targets.
REPEAT ?= 3
BATCHES ?= 1000
STAMP := $(shell date -u +%Y%m%dT%H%M%SZ)

# bench-render: render latency (p50, p99) and requests/s of typical Grafana
# requests, pgts serve beside graphite-web 1.1.10 under gunicorn and
# VictoriaMetrics (VM_VERSION, when it can be built) on the same points
# (scripts/parity/bench_render.py; RENDER_ARGS to resize).
RENDER_ARGS ?=
bench-render:
	@scripts/parity/setup
	@mkdir -p bench-results
	@vm=$$(scripts/bench-vm.sh $(VM_VERSION)); set -x; \
	.parity/venv/bin/python scripts/parity/bench_render.py $${vm:+--vm "$$vm"} $(RENDER_ARGS) | tee bench-results/render.md

# bench-load: the loader against psql COPY on the conditions data (10 M rows,
# width 5, weekly partitions), with a time index, then with (device, time)
# too; then --on-conflict skip and update beside the plain path, with half
# the rows already stored (scripts/bench-upsert.sh).
bench-load: deps build
	@mkdir -p bench-results
	$(BIN) bench load --stores pgts --loaders psql-copy,pgts-text,pgts-binary,insert --workers 1,$$(nproc) \
		--batches $(BATCHES) --index time --repeat $(REPEAT) --markdown --out bench-results/$(STAMP)-load-time | tee bench-results/load-time.md
	$(BIN) bench load --stores pgts --loaders psql-copy,pgts-binary --workers 1,$$(nproc) \
		--batches $(BATCHES) --index both --repeat $(REPEAT) --markdown --out bench-results/$(STAMP)-load-both | tee bench-results/load-both.md
	$(BIN) report bench-results/$(STAMP)-load-time bench-results/$(STAMP)-load-both
	BIN=$(BIN) BATCHES=$(BATCHES) REPEAT=$(REPEAT) scripts/bench-upsert.sh | tee bench-results/load-upsert.md

# bench-parse: the file parser with one goroutine against one per core, and
# two processes sharing nothing as the machine's own limit
# (scripts/bench-parse.sh; ROUNDS, BEST and ROWS to resize).
bench-parse:
	@mkdir -p bench-results
	scripts/bench-parse.sh | tee bench-results/parse.md

# bench-rollup: write overhead of an hourly and a daily rollup on a load
# of the conditions rows against none, refresh times with the source rows
# they read, a backfill of one device 3 months back, and 16 sessions of
# 1-row INSERTs with and without a rollup (scripts/bench-rollup.sh;
# BATCHES and REPEAT to resize).
bench-rollup: deps build
	@mkdir -p bench-results
	BIN=$(BIN) BATCHES=$(BATCHES) REPEAT=$(REPEAT) scripts/bench-rollup.sh | tee bench-results/rollup.md

# bench-sql: the SQL helpers (docs/sql.md) on 10 M conditions rows against
# issue 28's goals: time_bucket against date_bin, the latest row of 1,000
# devices, a gap-filled 30-day hourly series (scripts/bench-sql.sh; the
# table is loaded once and reused; BATCHES and ROUNDS to resize).
bench-sql: deps build
	@mkdir -p bench-results
	BIN=$(BIN) BATCHES=$(BATCHES) ROUNDS=$(or $(ROUNDS),7) scripts/bench-sql.sh | tee bench-results/sql.md

# bench-bulk: pgts load --bulk beside the live path (pgts-binary) and the
# server's own ceiling (server-copy: binary files the server reads itself)
# on the same conditions rows (10 M), REPEAT interleaved repeats, twice:
# into 1-hour partitions (600,000 rows each: the bulk path loads each as
# one unit, in one transaction), then into one weekly partition (split
# across the workers). Then the hourly run again on a second embedded
# cluster made for it with the bulk-load profile (db start --wal-minimal:
# wal_level = minimal) in BULK_MINIMAL_DIR, destroyed afterwards.
# scripts/bench-bulk-units.sh runs live against --bulk alone.
BULK_WORKERS ?= 2
BULK_MINIMAL_DIR ?= /tmp/pgts-bench-wal-minimal
bench-bulk: deps build
	@mkdir -p bench-results
	$(BIN) bench load --stores pgts --pgts-interval 1h --loaders pgts-binary,pgts-bulk,server-copy --workers $(BULK_WORKERS) \
		--batches $(BATCHES) --index time --repeat $(REPEAT) --markdown --out bench-results/$(STAMP)-bulk-hourly | tee bench-results/bulk-hourly.md
	$(BIN) bench load --stores pgts --loaders pgts-binary,pgts-bulk,server-copy --workers $(BULK_WORKERS) \
		--batches $(BATCHES) --index time --repeat $(REPEAT) --markdown --out bench-results/$(STAMP)-bulk | tee bench-results/bulk.md
	$(BIN) --data-dir $(BULK_MINIMAL_DIR) db destroy --yes
	$(BIN) --data-dir $(BULK_MINIMAL_DIR) db start --wal-minimal
	$(BIN) --data-dir $(BULK_MINIMAL_DIR) bench load --stores pgts --pgts-interval 1h --loaders pgts-binary,pgts-bulk,server-copy \
		--workers $(BULK_WORKERS) --batches $(BATCHES) --index time --repeat $(REPEAT) --markdown \
		--out bench-results/$(STAMP)-bulk-hourly-wal-minimal | tee bench-results/bulk-hourly-wal-minimal.md
	$(BIN) --data-dir $(BULK_MINIMAL_DIR) db destroy --yes

# bench-insert: the insert benchmark's steps (iibench) on a plain table and
# on a pgts series table, a few minutes on a small machine; the report
# compares them (base: the plain table).
ROWS_LOAD ?= 500000
ROWS_MORE ?= 100000
QUERY_SECONDS ?= 20
bench-insert: deps build
	@mkdir -p bench-results
	$(BIN) bench insert --table-kind plain --rows-load $(ROWS_LOAD) --rows-more $(ROWS_MORE) \
		--query-seconds $(QUERY_SECONDS) --out bench-results/$(STAMP)-insert-plain
	$(BIN) bench insert --table-kind pgts --rows-load $(ROWS_LOAD) --rows-more $(ROWS_MORE) \
		--query-seconds $(QUERY_SECONDS) --out bench-results/$(STAMP)-insert-pgts
	$(BIN) report bench-results/$(STAMP)-insert-plain bench-results/$(STAMP)-insert-pgts

# bench-partition: how long a concurrent COPY stalls while partitions are
# created, with COPY into the leaf and into the parent.
bench-partition: deps build
	@mkdir -p bench-results
	$(BIN) bench partition --partitions 50 --batch-rows 10000 --route parent | tee bench-results/partition-parent.txt
	$(BIN) bench partition --partitions 50 --batch-rows 10000 --route leaf | tee bench-results/partition-leaf.txt

# bench-serve: pgts serve beside VictoriaMetrics (VM_VERSION, built with
# go install into .bench-tools/bin by scripts/bench-vm.sh) with the same
# blaster, series, rate and WINDOW (Graphite plaintext over TCP; archives
# 10s:6h, 1m:7d, 1h:1y; each run a cold start of all its series on fresh
# storage), SERVE_REPEAT interleaved rounds, memory read after SERVE_QUIET
# idle; CONTENTION=1 repeats it all with one core kept busy by a busy loop.
# One table per series count and rate. Without VictoriaMetrics (it could
# not be built: a line says so) it finds pgts' highest sustained rate among
# SERVE_RATES instead, as before.
VM_VERSION := v1.151.0
WINDOW ?= 2m
SERVE_SERIES ?= 300000
SERVE_RATES ?= 150000
SERVE_REPEAT ?= 2
SERVE_QUIET ?= 1m
CONTENTION ?=
bench-serve: deps build
	@mkdir -p bench-results
	@vm=$$(scripts/bench-vm.sh $(VM_VERSION)); \
	if [ -n "$$vm" ]; then \
		set -x; \
		$(BIN) bench serve --vm "$$vm" --series $(SERVE_SERIES) --rates $(SERVE_RATES) --window $(WINDOW) \
			--repeat $(SERVE_REPEAT) --quiet $(SERVE_QUIET) --out bench-results/$(STAMP)-serve | tee bench-results/serve.txt; \
		if [ "$(CONTENTION)" = 1 ]; then \
			$(BIN) bench serve --vm "$$vm" --contention --series $(SERVE_SERIES) --rates $(SERVE_RATES) --window $(WINDOW) \
				--repeat $(SERVE_REPEAT) --quiet $(SERVE_QUIET) --out bench-results/$(STAMP)-serve-contention | tee -a bench-results/serve.txt; \
		fi; \
	else \
		set -x; \
		$(BIN) bench serve --series $(SERVE_SERIES) --rates $(SERVE_RATES) --window $(WINDOW) --live-heap \
			--out bench-results/$(STAMP)-serve | tee bench-results/serve.txt; \
	fi

# bench-tools: VictoriaMetrics for bench-serve and bench-render.
bench-tools:
	@scripts/bench-vm.sh $(VM_VERSION)

# bench-events: a field report's event workload (16 sessions, one row per
# transaction, 2 kB JSON documents) on a plain table and on a weekly pgts
# series table, EVENTS_ROWS rows each, with checkpoints every
# EVENTS_CHECKPOINT (PostgreSQL's default; pgts db tunes 15min), the server
# in an EVENTS_MEMORY memory cgroup (shared_buffers a sixth of it; 128MB
# and less got the server killed here, by autovacuum's ANALYZE of the 2 kB
# documents): 10-20 minutes on the project's 2 shared cores.
EVENTS_ROWS ?= 500000
EVENTS_WEEK_ROWS ?= 100000
EVENTS_CHECKPOINT ?= 5m
EVENTS_MEMORY ?= 192MB
bench-events: deps build
	@mkdir -p bench-results
	$(BIN) bench events --stores plain,pgts --sessions 16 --rows $(EVENTS_ROWS) --doc-bytes 2048 --week-rows $(EVENTS_WEEK_ROWS) \
		--checkpoint-timeout $(EVENTS_CHECKPOINT) --memory-limit $(EVENTS_MEMORY) --out bench-results/$(STAMP)-events | tee bench-results/events.txt
	$(BIN) report bench-results/$(STAMP)-events

# bench-insert-any: any SQL client's INSERTs into partitions not made yet
# (they wait in the DEFAULT partition) against premade ones: 16 sessions of
# 1-row INSERTs and a multi-row INSERT backfill, rounds interleaved, medians
# (pgts bench insert-any; ANY_ARGS to resize).
ANY_ARGS ?= --sessions 16 --rows 40000 --backfill-rows 400000 --repeat 3
bench-insert-any: deps build
	@mkdir -p bench-results
	$(BIN) bench insert-any $(ANY_ARGS) --out bench-results/$(STAMP)-insert-any | tee bench-results/insert-any.md

# bench-memory: the loading study's question (does loading slow down when
# the index outgrows memory?) with a (device, time) index, 1,000 and
# 100,000 devices, the server in a MEM_LIMIT memory cgroup (shared_buffers a
# sixth of it), MEM_BATCHES batches of 10,000 rows per store: the plain
# table's index ends at several times the limit. Stores plain, weekly
# (one partition: 10,000 rows a minute fill it) and pgts with 1-hour
# partitions; timescaledb when the server has it (skipped with a message
# otherwise), at its default 7-day chunks and at pgts' 1 hour. One run per
# store.
MEM_LIMIT ?= 128MB
MEM_BATCHES ?= 1000
MEM_DEVICES ?= 100000 1000
bench-memory: deps build
	@mkdir -p bench-results
	for d in $(MEM_DEVICES); do \
		$(BIN) bench load --stores plain,weekly,pgts,timescaledb --timescaledb-chunk default,1h --loaders pgts-binary --workers $$(nproc) \
			--batches $(MEM_BATCHES) --index device,time --devices $$d --pgts-interval 1h --memory-limit $(MEM_LIMIT) \
			--markdown --out bench-results/$(STAMP)-memory-$$d | tee bench-results/memory-$$d.md || exit 1; \
		$(BIN) report bench-results/$(STAMP)-memory-$$d || exit 1; \
	done

# bench-study: one seed experiment with every store and peer available
# (pgts bench study --help): STUDY=loading|memory|insert|events, SIZE=full
# (the seed's parameters), small or tiny; the report opens with the verdict.
STUDY ?= loading
SIZE ?= full
bench-study: deps build
	@mkdir -p bench-results
	$(BIN) bench study $(STUDY) --size $(SIZE) --out bench-results/$(STAMP)-study-$(STUDY)-$(SIZE)

clean:
	rm -rf bin .bench-tools
