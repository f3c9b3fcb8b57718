package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pgts/pgts/internal/report"
)

func newReportCmd(a *app) *cobra.Command {
	var out, base string
	cmd := &cobra.Command{
		Use:   "report DIR...",
		Short: "Render benchmark results as text tables, PNG charts and one HTML page",
		Long: `Read the results (load.json, insert.json, serve.json, events.json,
versus.json) of one or more directories written by pgts bench, print the
verdict and the text tables, and write report.txt, the PNG charts and
report.html (self-contained: the charts are embedded) into --out.

The verdict opens both: one sentence per comparison the results allow, with its
ratio, the spread of that ratio over the repeats (each repeat's run against the
base's run of the same repeat) and the base, flagged where the spread is larger
than the difference. report.html shows it first, then the command lines, the
machine and the server's settings with links to the raw JSON, the charts at
full width and the tables.

Tables show absolute figures per run and ratios to a base run (--base), as the
insert benchmark does: a throughput ratio < 1 is slower, a hardware-per-operation
ratio (CPU, bytes written, worst response) > 1 is worse. --base names a load
run as DIR:store/loader/workers (or store/loader/workers alone when that is
unambiguous) and an insert run by its directory's name.

Charts: per-batch speed over the run, the same speeds sorted, average speed per
store and loader, the insert benchmark's rates per step, and the daemon
benchmark's rates offered and stored, memory and queue depth over time, and the
event workload's inserts/s over the run (checkpoints marked) and write MB/s.`,
		Example: `  pgts report bench-results/20250101T120000Z
  pgts report bench-results/plain bench-results/pgts --base plain --out bench-results/compare`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("%s needs at least one results directory; see %s --help", cmd.CommandPath(), cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			for _, d := range args {
				if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
					return usagef("results directory %q: not a directory", d)
				}
			}
			o := report.Options{Dirs: args, Out: out, Base: base, Command: strings.Join(os.Args, " ")}
			res, text, err := report.Render(o)
			var be *report.BaseError
			if errors.As(err, &be) {
				return usagef("--base: %v", err)
			}
			if err != nil {
				return err
			}
			fmt.Fprint(a.env.Stdout, text)
			a.log.Info("report written", "text", res.Text, "html", res.HTML, "charts", len(res.Charts))
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "output directory (default: the first results directory)")
	cmd.Flags().StringVar(&base, "base", "", "the run ratios are relative to (default: the first)")
	return cmd
}
