package cli

import (
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
count, so that no series gets two points in one second.`,
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
	f.StringVar(&archives, "archives", "10s:6h,1m:7d,1h:1y", "archives of every series")
	f.StringVar(&s.Step, "step", s.Step, "step of every series")
	f.StringVar(&maxMem, "max-memory", "1GB", "the daemon's memory budget (max-memory)")
	f.BoolVar(&s.StopAtFirstFailure, "stop-at-first-failure", true, "skip higher rates of a series count once one is not sustained")
	f.BoolVar(&s.LiveHeap, "live-heap", false, "after each step, wait (up to 4.5 min) for the idle daemon's second garbage collection and report its live heap with the cache the store accounts")
	f.StringVar(&out, "out", "", "results directory (default bench-results/<timestamp>-serve)")
	return cmd
}

func printServeSteps(a *app, res bench.ServeResult) {
	tw := tabwriter.NewWriter(a.env.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "series\toffered/s\tacked/s\tsustained\tpeak cache MiB\tpeak RSS MiB\tdrain s\tdaemon CPU s\tserver CPU s\tend cache MiB\tend live heap MiB\treason\t")
	for _, st := range res.Steps {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%v\t%.0f\t%.0f\t%.1f\t%.1f\t%.1f\t%.0f\t%.0f\t%s\t\n", commas(int64(st.Series)), commas(int64(st.Rate)),
			commas(int64(st.AckedRate)), st.Sustained, float64(st.PeakCache)/(1<<20), float64(st.PeakRSS)/(1<<20),
			st.DrainSeconds, st.DaemonCPU, st.ServerCPU, float64(st.EndCache)/(1<<20), float64(st.LiveHeap)/(1<<20), st.Reason)
	}
	tw.Flush()
	for _, n := range res.Scenario.Series {
		fmt.Fprintf(a.env.Stdout, "highest sustained rate with %s series: %s points/s\n", commas(int64(n)), commas(int64(res.Best[strconv.Itoa(n)])))
	}
}
