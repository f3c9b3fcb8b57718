package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pgts/pgts/internal/bench"
)

func newBenchInsertAnyCmd(a *app) *cobra.Command {
	s := bench.DefaultAnyWriterScenario()
	var out string
	cmd := &cobra.Command{
		Use:   "insert-any",
		Short: "Measure INSERTs from any SQL client into partitions not made yet against premade ones",
		Long: `Measure what a row costs when its partition does not exist yet (it waits in
the table's default partition until pgts maintain or a load moves it) against
the same rows into premade partitions, on a fresh daily series table for each
step, over --days past days:

  1-row premade / 1-row missing      --sessions connections, one row per
                                     INSERT (autocommit), --rows rows in all
  backfill premade / backfill missing one connection, multi-row INSERTs of
                                     --batch-rows rows, --backfill-rows rows

A "missing" step is followed by the move of its rows into their partitions
(timed apart). Each round runs the four steps in turn; --repeat rounds are
interleaved so that a noisy machine shows in the spread; the table gives the
medians. Results go to insert-any.json in --out.`,
		Example: `  pgts bench insert-any
  pgts bench insert-any --rows 20000 --backfill-rows 200000 --repeat 5`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s.Logger = a.log
			if err := s.Validate(); err != nil {
				return usagef("%v", err)
			}
			path, err := resultsFile(out, "insert-any.json")
			if err != nil {
				return err
			}
			if s.ConnString, err = a.connString(ctx); err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return fmt.Errorf("results directory: %w", err)
			}
			res, runErr := bench.RunAnyWriter(ctx, s)
			return a.saveResults(ctx, path, res, runErr == nil, runErr, func() error {
				writeAnyWriter(a.env.Stdout, res)
				return nil
			})
		},
	}
	f := cmd.Flags()
	f.IntVar(&s.Sessions, "sessions", s.Sessions, "connections of the 1-row steps")
	f.Int64Var(&s.Rows, "rows", s.Rows, "rows of a 1-row step, over all sessions")
	f.Int64Var(&s.BackfillRows, "backfill-rows", s.BackfillRows, "rows of a backfill step")
	f.IntVar(&s.BatchRows, "batch-rows", s.BatchRows, "rows per multi-row INSERT of the backfill")
	f.IntVar(&s.Days, "days", s.Days, "past days the rows' times cover (one partition a day)")
	f.IntVar(&s.Repeat, "repeat", s.Repeat, "rounds, interleaved")
	f.StringVar(&out, "out", "", "results directory (default bench-results/<timestamp>)")
	return cmd
}

// writeAnyWriter prints the medians as a Markdown table.
func writeAnyWriter(w io.Writer, res bench.AnyWriterResult) {
	fmt.Fprintf(w, "| step | rows | median rows/s | vs premade | move afterwards (median s) | rounds (rows/s) |\n| --- | ---: | ---: | ---: | ---: | --- |\n")
	for _, step := range bench.AnyWriterSteps {
		rate, move := res.Median(step)
		var base float64
		var rows int64
		var each []string
		for _, st := range res.Steps {
			if st.Step == step {
				rows = st.Rows
				each = append(each, fmt.Sprintf("%.0f", st.RowsPerSec))
			}
		}
		if strings.HasSuffix(step, "missing") {
			base, _ = res.Median(strings.TrimSuffix(step, "missing") + "premade")
		}
		rel, mv := "", ""
		if base > 0 {
			rel = fmt.Sprintf("%.2f×", rate/base)
			mv = fmt.Sprintf("%.2f", move)
		}
		fmt.Fprintf(w, "| %s | %s | %.0f | %s | %s | %s |\n", step, commas(rows), rate, rel, mv, strings.Join(each, ", "))
	}
}
