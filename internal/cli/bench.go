package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/pgts/pgts/internal/bench"
	"github.com/pgts/pgts/internal/embedded"
)

func newBenchCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Run benchmarks: loading methods and storage layouts, partition creation",
		Long: `Run pgts' benchmarks against the chosen database (by default the embedded
cluster). Every run starts from a fresh table and a CHECKPOINT, verifies its
row count, and measures rows/s and the CPU seconds of the client and of the
server processes (when the server runs on this machine).`,
	}
	cmd.AddCommand(newBenchLoadCmd(a), newBenchPartitionCmd(a), newBenchInsertCmd(a), newBenchServeCmd(a), newBenchEventsCmd(a), newBenchStudyCmd(a), newBenchInsertAnyCmd(a))
	return cmd
}

func parseInts(flag, s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil, usagef("--%s %q: a comma-separated list of numbers", flag, s)
		}
		out = append(out, n)
	}
	return out, nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

func newBenchLoadCmd(a *app) *cobra.Command {
	var stores, loaders, workers, index, out, base, memoryLimit, sharedBuffers, chunks string
	var width, repeat, devices int
	var interval time.Duration
	var batches int64
	var restart, markdown bool
	var sh benchShardFlags // bench_shards.go
	cmd := &cobra.Command{
		Use:   "load",
		Short: "Compare loading methods and storage layouts on the conditions data",
		Long: `Load the conditions data (the Postgres-vs-TimescaleDB loading study's table)
with every combination of store, loader and worker count, each on a fresh
table, and report rows/s, CPU seconds of client and server, WAL, sizes, and
each run's ratio to the first run (--base selects another).

Stores:  plain (one table), monthly and weekly (native partitions made
         beforehand), pgts (a series table, weekly or --pgts-interval,
         partitions on demand), timescaledb (a TimescaleDB hypertable with
         the default 7-day chunks, or one store per --timescaledb-chunk
         interval, named for it: timescaledb-1h; skipped, with how to get
         TimescaleDB, when the server lacks the extension)
Loaders: psql-copy (the generator's text piped into one psql COPY),
         psql-pipe (one COPY per 10,000 rows, one transaction each),
         pgts-text, pgts-binary (pgts load, in-process, COPY into the leaf
         partitions), pgts-parent (binary COPY into the parent table: the
         server routes rows), pgts-bulk (pgts load --bulk: missing
         partitions filled standalone, indexed once, attached), pgts-file
         (pgts load FILE: the same rows written beforehand as a CSV file,
         parsed on GOMAXPROCS goroutines, binary COPY), insert
         (multi-row INSERT of 1,000 rows), server-copy (the server's
         ceiling: the rows written beforehand as binary files the server
         reads itself, COPY table FROM 'file' by N backends, no client;
         needs the server on this machine and a superuser)`,
		Example: `  pgts bench load --stores pgts --loaders psql-copy,pgts-text,pgts-binary --workers 1,2
  pgts bench load --stores plain,weekly --loaders psql-pipe --batches 5000 --index both
  pgts bench load --stores plain,pgts,timescaledb --pgts-interval 1h --timescaledb-chunk default,1h --loaders pgts-binary`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if sh.counts != "" {
				return runBenchShards(ctx, a, sh, width)
			}
			ws, err := parseInts("workers", workers)
			if err != nil {
				return err
			}
			s := bench.LoadScenario{Stores: splitList(stores), Loaders: splitList(loaders), Workers: ws, Width: width,
				Batches: batches, Index: index, Repeat: repeat, Logger: a.log, Devices: devices, Interval: interval}
			if s.TimescaleChunks, err = parseChunks(chunks); err != nil {
				return err
			}
			if err := s.Validate(); err != nil {
				return usagef("%v", err)
			}
			if sharedBuffers != "" && memoryLimit == "" {
				return usagef("--shared-buffers goes with --memory-limit")
			}
			sums, err := a.runLoad(ctx, s, loadRunOptions{restart: restart, memoryLimit: memoryLimit, sharedBuffers: sharedBuffers, out: out})
			printLoadRuns(a, sums, base, markdown)
			return err
		},
	}
	f := cmd.Flags()
	sh.register(f)
	f.StringVar(&stores, "stores", "pgts", "comma-separated stores: plain, monthly, weekly, pgts, timescaledb (skipped when the server lacks the extension)")
	f.StringVar(&loaders, "loaders", "psql-copy,pgts-text,pgts-binary,insert", "comma-separated loaders")
	f.StringVar(&workers, "workers", "1,"+strconv.Itoa(runtime.NumCPU()), "comma-separated worker counts (pgts and insert loaders)")
	f.IntVar(&width, "width", 5, "data columns")
	f.Int64Var(&batches, "batches", 1000, "batches of 10,000 rows (1,000 = 10 M rows)")
	f.StringVar(&index, "index", "time", "indexes: time, device,time or both")
	f.IntVar(&repeat, "repeat", 1, "repeat every run this many times")
	f.BoolVar(&restart, "restart", false, "restart the embedded cluster before each run")
	f.StringVar(&out, "out", "", "results directory (default bench-results/<timestamp>)")
	f.StringVar(&base, "base", "", "the run ratios are relative to, as store/loader/workers (default: the first run)")
	f.BoolVar(&markdown, "markdown", false, "print the table in Markdown")
	f.StringVar(&memoryLimit, "memory-limit", "", "embedded cluster only: run the server under this memory limit (cgroup), e.g. 512MB")
	f.StringVar(&sharedBuffers, "shared-buffers", "", "with --memory-limit: the server's shared_buffers for the run (default a sixth of the limit)")
	f.IntVar(&devices, "devices", 0, "devices of the generated data, row n getting device 1 + n % N (0: the study's generator, 1,000 devices); with --index device,time one insertion point per device")
	f.DurationVar(&interval, "pgts-interval", 7*24*time.Hour, "partition length of the pgts store, e.g. 1h or 168h")
	f.StringVar(&chunks, "timescaledb-chunk", "", "chunk intervals of the timescaledb store, comma-separated, each a store of its own: whole minutes (30m, 1h, 7d) or default (TimescaleDB's, 7 days)")
	return cmd
}

// parseChunks reads --timescaledb-chunk: a comma-separated list of
// intervals (Go durations, or whole days as Nd) or "default" (0).
func parseChunks(s string) ([]time.Duration, error) {
	var out []time.Duration
	for _, f := range splitList(s) {
		if f == "default" {
			out = append(out, 0)
			continue
		}
		d, err := parseDays(f)
		if err != nil || d <= 0 {
			return nil, usagef("--timescaledb-chunk %q: an interval such as 30m, 1h or 7d, or default", f)
		}
		out = append(out, d)
	}
	return out, nil
}

// parseDays parses a Go duration, or whole days written Nd.
func parseDays(s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil || days < 1 || days > 3650 {
			return 0, fmt.Errorf("%q: not a number of days", s)
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	return time.ParseDuration(s)
}

// loadRunOptions are how `bench load` runs a scenario besides the
// scenario itself.
type loadRunOptions struct {
	restart                    bool   // restart the embedded cluster before each run
	memoryLimit, sharedBuffers string // the server's memory limit ("" none) and its shared_buffers
	out                        string // results directory; "" is bench-results/<timestamp>
}

// runLoad runs a loading scenario on the chosen database, writes load.json
// into the results directory and returns the summaries; an error when the
// run stopped or any run failed (after writing the results).
func (a *app) runLoad(ctx context.Context, s bench.LoadScenario, o loadRunOptions) ([]bench.LoadSummary, error) {
	s.Logger = a.log
	var err error
	if s.ConnString, err = a.connString(ctx); err != nil {
		return nil, err
	}
	bins, err := embedded.DefaultFinder(a.binDir).Find()
	if err == nil {
		s.Psql = bins.Psql()
	} else {
		s.Psql = "psql"
	}
	if o.restart {
		c, err := a.cluster()
		if err != nil {
			return nil, err
		}
		s.BeforeRun = func(ctx2 context.Context) error {
			if _, err := c.Stop(ctx2, embedded.Fast); err != nil {
				return err
			}
			_, err := c.Start(ctx2)
			return err
		}
	}
	if o.memoryLimit != "" {
		limit, stop, err := a.limitServerMemory(ctx, o.memoryLimit, o.sharedBuffers, &s.BeforeRun)
		if err != nil {
			return nil, err
		}
		defer stop()
		s.MemoryLimit = limit
	}
	out := o.out
	if out == "" {
		out = filepath.Join("bench-results", time.Now().UTC().Format("20060102T150405Z"))
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	runs, runErr := bench.RunLoad(ctx, s, func(r bench.LoadRun) {
		a.log.Info("run done", "store", r.Store, "loader", r.Loader, "workers", r.Workers,
			"rows_per_s", int64(r.RowsPerSec), "err", r.Error)
	})
	sums := bench.Summarize(runs)
	res := map[string]any{"scenario": s, "summary": sums, "runs": runs, "complete": runErr == nil, "command": strings.Join(os.Args, " "),
		"machine": bench.DescribeMachineAt(context.WithoutCancel(ctx), s.ConnString)}
	path := filepath.Join(out, "load.json")
	if err := writeResults(path, res); err != nil {
		return nil, errors.Join(runErr, err)
	}
	a.log.Info("results written", "file", path)
	if runErr != nil {
		return sums, runErr
	}
	if n := countFailed(runs); n > 0 {
		return sums, fmt.Errorf("%d of %d runs failed", n, len(runs))
	}
	return sums, nil
}

func countFailed(runs []bench.LoadRun) int {
	n := 0
	for _, r := range runs {
		if r.Error != "" {
			n++
		}
	}
	return n
}

// printLoadRuns prints the medians of each combination, with the ratio
// of its median rows/s to the base's, as aligned text or a Markdown table.
func printLoadRuns(a *app, sums []bench.LoadSummary, base string, markdown bool) {
	if len(sums) == 0 {
		return
	}
	ref := sums[0]
	for _, s := range sums {
		if s.Key() == base {
			ref = s
		}
	}
	head := []string{"store", "loader", "workers", "runs", "rows", "rows/s (median)", "min–max", "ratio to " + ref.Key(),
		"client CPU s", "server CPU s", "client/server CPU", "WAL MiB", "table MiB", "index MiB"}
	var rows [][]string
	for _, s := range sums {
		if s.Runs == 0 {
			rows = append(rows, []string{s.Store, s.Loader, strconv.Itoa(s.Workers), "0", fmt.Sprintf("all %d failed", s.Failed)})
			continue
		}
		ratio := ""
		if ref.RowsPerSec > 0 {
			ratio = fmt.Sprintf("%.2f", s.RowsPerSec/ref.RowsPerSec)
		}
		runs := strconv.Itoa(s.Runs)
		if s.Failed > 0 {
			runs += fmt.Sprintf(" (+%d failed)", s.Failed)
		}
		rows = append(rows, []string{s.Store, s.Loader, strconv.Itoa(s.Workers), runs, commas(s.Rows), commas(int64(s.RowsPerSec)),
			commas(int64(s.MinRowsPerSec)) + "–" + commas(int64(s.MaxRowsPerSec)), ratio,
			fmt.Sprintf("%.1f", s.ClientCPU), fmt.Sprintf("%.1f", s.ServerCPU), fmt.Sprintf("%.1f%%", 100*s.ClientServer),
			fmt.Sprintf("%.0f", s.WALBytes/(1<<20)), fmt.Sprintf("%.0f", s.TableBytes/(1<<20)), fmt.Sprintf("%.0f", s.IndexBytes/(1<<20))})
	}
	if markdown {
		fmt.Fprintln(a.env.Stdout, "| "+strings.Join(head, " | ")+" |")
		sep := make([]string, len(head))
		for i := range sep {
			sep[i] = "---"
			if i >= 2 {
				sep[i] = "---:"
			}
		}
		fmt.Fprintln(a.env.Stdout, "| "+strings.Join(sep, " | ")+" |")
		for _, r := range rows {
			fmt.Fprintln(a.env.Stdout, "| "+strings.Join(r, " | ")+" |")
		}
		return
	}
	tw := tabwriter.NewWriter(a.env.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t")+"\t")
	}
	tw.Flush()
}

func newBenchPartitionCmd(a *app) *cobra.Command {
	var parts, rows int
	var baseline time.Duration
	var route string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "partition",
		Short: "Measure partition creation and the stall it causes a concurrent writer",
		Long: `Create --partitions partitions of a series table one after another while a
writer COPYs --batch-rows rows per transaction into an existing partition,
and report how long one creation takes and the writer's batch latency
(median and worst) during creation against a baseline without it.`,
		Example: "  pgts bench partition --partitions 50 --batch-rows 10000",
		Args:    exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if route != "leaf" && route != "parent" {
				return usagef("--route %q: choose leaf or parent", route)
			}
			if parts < 1 || parts > 10000 || rows < 1 || baseline <= 0 {
				return usagef("--partitions, --batch-rows and --baseline must be positive")
			}
			cs, err := a.connString(ctx)
			if err != nil {
				return err
			}
			r, err := bench.RunPartition(ctx, bench.PartitionScenario{ConnString: cs, Partitions: parts, BatchRows: rows,
				Baseline: baseline, Route: route, Logger: a.log})
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(a, r)
			}
			w := a.env.Stdout
			fmt.Fprintf(w, "partition creation: %d partitions, median %.1f ms, worst %.1f ms\n", r.Partitions, r.CreateMedianMS, r.CreateMaxMS)
			fmt.Fprintf(w, "writer (%d rows per COPY into the %s):\n", r.BatchRows, r.Route)
			fmt.Fprintf(w, "  baseline:        %4d batches, median %.1f ms, worst %.1f ms\n", r.BaselineBatches, r.BaselineP50MS, r.BaselineMaxMS)
			fmt.Fprintf(w, "  during creation: %4d batches, median %.1f ms, worst %.1f ms\n", r.DuringBatches, r.DuringP50MS, r.DuringMaxMS)
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&parts, "partitions", 50, "partitions to create")
	f.IntVar(&rows, "batch-rows", 10000, "rows per writer COPY")
	f.DurationVar(&baseline, "baseline", 5*time.Second, "how long to measure the writer alone")
	f.StringVar(&route, "route", "parent", "the writer COPYs into the parent or into a leaf partition")
	f.BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
