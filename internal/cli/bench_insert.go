package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pgts/pgts/internal/bench"
	"github.com/pgts/pgts/internal/report"
)

func newBenchInsertCmd(a *app) *cobra.Command {
	s := bench.DefaultInsertScenario()
	var rates, out string
	var querySeconds float64
	cmd := &cobra.Command{
		Use:   "insert",
		Short: "Run the insert benchmark's steps (iibench) on its purchases table",
		Long: `Run the insert benchmark's steps on a fresh purchases table (transactionid
bigserial primary key; secondary indexes marketsegment, registersegment, pdc):

  l.i0    load --rows-load rows in primary-key order, no secondary index, 100 rows a commit
  l.x     create the three secondary indexes
  l.i1    insert --rows-more rows, 50 rows a commit
  l.i2    insert a fifth of --rows-more, 5 rows a commit
  qrN     one writer held at N inserts/s (10 rows a commit) while one reader
          runs range queries (LIMIT 10) on the secondary indexes, for --query-seconds
  qpN     the same with point queries (10 random primary keys)

Per step: ips or qps, cpupq (host CPU µs per op), wkbpi (KB written per
insert), dbgb (database GiB), maxop (worst response ms), p50/p99 of the
per-second rates, and HdrHistogram latency histograms. A q step whose writer
fell more than 5% short of its rate is flagged. Results go to insert.json in
--out (never overwritten); an interrupted run writes what it measured, marked
incomplete. --table-kind pgts runs the steps on a series table partitioned by
dateandtime (the generator stamps 100,000 rows per second of dateandtime).`,
		Example: `  pgts bench insert --rows-load 200000 --rows-more 50000 --query-seconds 10
  pgts bench insert --table-kind pgts --partition-interval 1s --out bench-results/insert-pgts`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			rs, err := parseInts("query-rates", rates)
			if err != nil {
				return err
			}
			s.QueryRates = rs
			if querySeconds < 0 || querySeconds > 86400 {
				return usagef("--query-seconds %g: must be between 0 and 86400", querySeconds)
			}
			s.QueryTime = time.Duration(querySeconds * float64(time.Second))
			s.Logger = a.log
			if err := s.Validate(); err != nil {
				return usagef("%v", err)
			}
			path, err := resultsFile(out, "insert.json")
			if err != nil {
				return err
			}
			return a.runInsert(ctx, s, path, func(res bench.InsertResult) error {
				if len(res.Steps) == 0 {
					return nil
				}
				return report.WriteInsertSteps(a.env.Stdout, res)
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&s.TableKind, "table-kind", s.TableKind, "purchases table layout: plain, or pgts (a series table partitioned by dateandtime)")
	f.Int64Var(&s.RowsLoad, "rows-load", s.RowsLoad, "rows of l.i0 (N1)")
	f.Int64Var(&s.RowsMore, "rows-more", s.RowsMore, "rows of l.i1 (N2); l.i2 inserts N2/5")
	f.Float64Var(&querySeconds, "query-seconds", s.QueryTime.Seconds(), "length of each q step; 0 skips them")
	f.StringVar(&rates, "query-rates", "100,500,1000", "comma-separated writer rates (inserts/s) of the q steps")
	f.DurationVar(&s.Interval, "partition-interval", s.Interval, "pgts table kind: partition length, whole seconds")
	f.Uint64Var(&s.Seed, "seed", s.Seed, "seed of the iibench rows")
	f.StringVar(&out, "out", "", "results directory (default bench-results/<timestamp>)")
	return cmd
}

// runInsert runs the insert benchmark on the chosen database, writes its
// result to path (insert.json of a results directory) and shows it.
func (a *app) runInsert(ctx context.Context, s bench.InsertScenario, path string, show func(bench.InsertResult) error) error {
	s.Logger = a.log
	var err error
	if s.ConnString, err = a.connString(ctx); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("results directory: %w", err)
	}
	res, runErr := bench.RunInsert(ctx, s, func(st bench.InsertStep) {
		a.log.Info("step done", "step", st.Name, "seconds", fmt.Sprintf("%.1f", st.Seconds),
			"ips", int64(st.IPS), "qps", int64(st.QPS), "err", st.Error)
	})
	res.Command = strings.Join(os.Args, " ")
	return a.saveResults(ctx, path, res, res.Complete, runErr, func() error { return show(res) })
}

// resultsFile returns the path of the results file name in the directory
// out (default bench-results/<UTC timestamp>); a file already there is a
// usage error: results are never overwritten.
func resultsFile(out, name string) (string, error) {
	if out == "" {
		out = filepath.Join("bench-results", time.Now().UTC().Format("20060102T150405Z"))
	}
	path := filepath.Join(out, name)
	if _, err := os.Stat(path); err == nil {
		return "", usagef("--out %q already holds %s; results are never overwritten", out, name)
	}
	return path, nil
}

// saveResults writes a benchmark's result to path, prints its tables
// with show, and returns the run's error (ErrInterrupted when ctx ended).
func (a *app) saveResults(ctx context.Context, path string, res any, complete bool, runErr error, show func() error) error {
	if err := writeResults(path, res); err != nil {
		return errors.Join(runErr, err)
	}
	a.log.Info("results written", "file", path, "complete", complete)
	if err := show(); err != nil {
		return err
	}
	if runErr != nil && ctx.Err() != nil {
		return ErrInterrupted
	}
	return runErr
}

// writeResults writes v as indented JSON to a new file; an existing file
// is an error, never overwritten.
func writeResults(path string, v any) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("writing results: %w", err)
	}
	enc := json.NewEncoder(f)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		f.Close()
		return fmt.Errorf("writing results %q: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing results %q: %w", path, err)
	}
	return nil
}
