package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/pgts/pgts/internal/bench"
	"github.com/pgts/pgts/internal/embedded"
)

func newBenchServeCmd(a *app) *cobra.Command {
	var series, rates, archives, out, maxMem string
	s := bench.ServeScenario{Window: time.Minute, FlushInterval: 10 * time.Second, Step: "10s", StopAtFirstFailure: true}
	vs := bench.ServeVersus{Repeats: 1}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Find the highest rate the metrics daemon sustains",
		Long: `Run pgts serve as a child process and send it Graphite plaintext over TCP at
each --rates rate across each --series count of series, for --window. Every
step starts a fresh daemon on emptied archive tables, so it includes the
cold start of all its series. A step is sustained when the daemon
acknowledged at least 98% of the offered rate, its cache drained within
three flush intervals after the window, nothing was dropped or refused, its
cache stayed under --max-memory and every series was registered.

Each second the daemon's /metrics are sampled: points acknowledged,
received, stored, archive slots written, cache bytes, points waiting, and
the daemon's resident memory. Results go to serve.json in --out.

Graphite timestamps are whole seconds: keep each rate at most its series
count, so that no series gets two points in one second.

With --vm, VictoriaMetrics runs beside pgts serve instead: for each series
count and rate, --repeat rounds each run both systems with the same
blaster, series, rate and window, in alternating order, each on fresh
storage; after the drain both are left idle for --quiet before their
resident memory is read. One table per series count and rate gives the
medians: points/s offered and acknowledged, series and points stored (pgts:
points its store accepted and wrote, series in pgts.metric;
VictoriaMetrics: what its PromQL API counts), CPU µs per point (pgts: the
daemon and its PostgreSQL server; VictoriaMetrics: its process), RSS after
the quiet wait (with PostgreSQL's PSS and pgts_store_series_bytes beside)
and bytes on disk. --contention keeps one core busy with a busy-loop
process while each system runs. Results go to versus.json in --out.`,
		Example: `  pgts bench serve --series 100000,300000 --rates 50000,100000,150000 --window 5m
  pgts bench serve --series 10000 --rates 5000,10000 --window 30s --max-memory 256MB`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			ns, err := parseInts("series", series)
			if err != nil {
				return err
			}
			s.Series = ns
			s.Rates = nil
			for _, f := range strings.Split(rates, ",") {
				r, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
				if err != nil {
					return usagef("--rates %q: a comma-separated list of points/s", rates)
				}
				s.Rates = append(s.Rates, r)
			}
			s.Archives = splitList(archives)
			mm, err := embedded.ParseSize(maxMem)
			if err != nil {
				return usagef("--max-memory: %v", err)
			}
			s.MaxMemory = mm
			if s.Exe, err = os.Executable(); err != nil {
				return err
			}
			s.Logger = a.log
			if err := s.Validate(); err != nil {
				return usagef("%v", err)
			}
			if vs.VMExe != "" {
				vs.Serve = s
				if err := vs.Validate(); err != nil {
					return usagef("%v", err)
				}
			} else if vs.Contention || cmd.Flags().Changed("repeat") {
				return usagef("--contention and --repeat compare with VictoriaMetrics: give --vm")
			}
			if s.ConnString, err = a.connString(ctx); err != nil {
				return err
			}
			if out == "" {
				out = filepath.Join("bench-results", time.Now().UTC().Format("20060102T150405Z")+"-serve")
			}
			if _, err := os.Stat(out); err == nil {
				return usagef("--out %s exists: results are never overwritten", out)
			}
			if err := os.MkdirAll(out, 0o755); err != nil {
				return err
			}
			s.Dir = out
			if vs.VMExe != "" {
				return runServeVersus(ctx, a, vs, s, out)
			}
			res, runErr := bench.RunServe(ctx, s, func(st bench.ServeStep) {
				a.log.Info("step done", "series", st.Series, "rate", st.Rate, "acked_per_s", int64(st.AckedRate),
					"sustained", st.Sustained, "reason", st.Reason)
			})
			f, err := os.OpenFile(filepath.Join(out, "serve.json"), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
			if err != nil {
				return err
			}
			enc := json.NewEncoder(f)
			enc.SetIndent("", "  ")
			doc := map[string]any{"kind": "serve", "command": strings.Join(os.Args, " "), "result": res,
				"machine": bench.DescribeMachineAt(ctx, s.ConnString)}
			if err := enc.Encode(doc); err != nil {
				f.Close()
				return err
			}
			f.Close()
			printServeSteps(a, res)
			return runErr
		},
	}
	f := cmd.Flags()
	f.StringVar(&series, "series", "100000,300000", "comma-separated series counts")
	f.StringVar(&rates, "rates", "50000,100000,150000", "comma-separated offered rates, points/s, in increasing order")
	f.DurationVar(&s.Window, "window", s.Window, "how long each rate must be held")
	f.DurationVar(&s.FlushInterval, "flush-interval", s.FlushInterval, "the daemon's flush interval")
	f.IntVar(&s.FlushWorkers, "flush-workers", 0, "the daemon's flush-workers, the connections its flush writes on (0: its default, half the processors, 1 to 4)")
	f.StringVar(&archives, "archives", "10s:6h,1m:7d,1h:1y", "archives of every series")
	f.StringVar(&s.Step, "step", s.Step, "step of every series")
	f.StringVar(&maxMem, "max-memory", "1GB", "the daemon's memory budget (max-memory)")
	f.BoolVar(&s.StopAtFirstFailure, "stop-at-first-failure", true, "skip higher rates of a series count once one is not sustained")
	f.BoolVar(&s.LiveHeap, "live-heap", false, "after each step, wait (up to 4.5 min) for the idle daemon's second garbage collection and report its live heap with the cache the store accounts")
	f.StringVar(&out, "out", "", "results directory (default bench-results/<timestamp>-serve)")
	f.StringVar(&vs.VMExe, "vm", "", "a victoria-metrics binary: run it beside pgts serve (see above)")
	f.IntVar(&vs.Repeats, "repeat", vs.Repeats, "with --vm: rounds per series count and rate, each running both systems in alternating order")
	f.DurationVar(&s.Quiet, "quiet", 0, "after each drained step, leave the daemon idle this long, then read its RSS and PostgreSQL's PSS (default 1m with --vm)")
	f.BoolVar(&vs.Contention, "contention", false, "with --vm: keep one core busy with a busy-loop process while each system runs")
	return cmd
}

func printServeSteps(a *app, res bench.ServeResult) {
	tw := tabwriter.NewWriter(a.env.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "series\toffered/s\tacked/s\tsustained\tpeak cache MiB\tpeak RSS MiB\tdrain s\tdaemon CPU s\tserver CPU s\tend cache MiB\tend series MiB\tend live heap MiB\treason\t")
	for _, st := range res.Steps {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%v\t%.0f\t%.0f\t%.1f\t%.1f\t%.1f\t%.0f\t%.0f\t%.0f\t%s\t\n", commas(int64(st.Series)), commas(int64(st.Rate)),
			commas(int64(st.AckedRate)), st.Sustained, float64(st.PeakCache)/(1<<20), float64(st.PeakRSS)/(1<<20),
			st.DrainSeconds, st.DaemonCPU, st.ServerCPU, float64(st.EndCache)/(1<<20), float64(st.EndSeriesBytes)/(1<<20),
			float64(st.LiveHeap)/(1<<20), st.Reason)
	}
	tw.Flush()
	for _, n := range res.Scenario.Series {
		fmt.Fprintf(a.env.Stdout, "highest sustained rate with %s series: %s points/s\n", commas(int64(n)), commas(int64(res.Best[strconv.Itoa(n)])))
	}
}

// runServeVersus runs pgts serve beside VictoriaMetrics, writes
// versus.json and prints the side-by-side tables.
func runServeVersus(ctx context.Context, a *app, vs bench.ServeVersus, s bench.ServeScenario, out string) error {
	if s.Quiet == 0 {
		s.Quiet = time.Minute
	}
	vs.Serve = s
	res, runErr := bench.RunServeVersus(ctx, vs, func(r bench.VersusRun) {
		a.log.Info("run done", "system", r.System, "repeat", r.Repeat+1, "series", r.Series, "rate", r.Rate,
			"acked_per_s", int64(r.AckedRate), "cpu_us_per_point", r.CPUPerPoint(), "reason", r.Reason)
	})
	f, err := os.OpenFile(filepath.Join(out, "versus.json"), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(f)
	enc.SetIndent("", "  ")
	doc := map[string]any{"kind": "serve-versus", "command": strings.Join(os.Args, " "), "result": res,
		"machine": bench.DescribeMachineAt(ctx, s.ConnString)}
	if err := enc.Encode(doc); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := bench.WriteVersusTable(a.env.Stdout, res); err != nil {
		return err
	}
	return runErr
}
