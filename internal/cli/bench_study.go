package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/pgts/pgts/internal/bench"
	"github.com/pgts/pgts/internal/pg"
	"github.com/pgts/pgts/internal/report"
)

func newBenchStudyCmd(a *app) *cobra.Command {
	var size, out, memoryLimit, chunks string
	var workers, repeat int
	var list []string
	for _, st := range bench.Studies {
		list = append(list, fmt.Sprintf("  %-8s %s", st.Name, st.Short))
	}
	var seeds []string
	for _, st := range bench.Studies {
		seeds = append(seeds, st.Name+": "+st.Seed)
	}
	cmd := &cobra.Command{
		Use:   "study NAME",
		Short: "Run one seed experiment with every store and peer available, and write its report",
		Long: `Run one of the experiments pgts is built on, with the seed's own parameters,
every store and peer the harness has (a store whose software is missing on
the server is skipped with one line saying how to get it), runs interleaved
where they repeat, then write the report (pgts report) of all its parts into
--out: report.html and report.txt open with the verdict, one sentence per
comparison with its ratio, spread over the repeats and base.

Studies:
` + strings.Join(list, "\n") + `

` + strings.Join(seeds, "\n\n") + `

--size full runs the seed's parameters (an hour or more on two cores), small
a few minutes (a fiftieth of the loading study's rows, a tenth of the
others': a first look, noisier), tiny a few thousand rows per run (seconds;
to check that a study runs, not to measure). Studies whose seed ran under a server
memory limit need the embedded cluster (pgts db start); --memory-limit none
runs them without one.`,
		Example: `  pgts bench study loading --timescaledb-chunk 1d
  pgts bench study memory --size small --out bench-results/memory-small
  pgts bench study insert --size tiny`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("%s needs one study: %s", cmd.CommandPath(), strings.Join(bench.StudyNames(), ", "))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			st, ok := bench.StudyByName(args[0])
			if !ok {
				return usagef("unknown study %q (choose from %s)", args[0], strings.Join(bench.StudyNames(), ", "))
			}
			cs, err := parseChunks(chunks)
			if err != nil {
				return err
			}
			if len(cs) > 0 && st.Name != "loading" {
				return usagef("--timescaledb-chunk is the loading study's choice; the memory study runs TimescaleDB at its default chunk and at 1 hour")
			}
			parts, err := st.Parts(bench.StudyOptions{Size: size, Workers: workers, TimescaleChunks: cs, Repeat: repeat})
			if err != nil {
				return usagef("%v", err)
			}
			if memoryLimit != "" && memoryLimit != "none" {
				for i := range parts {
					if parts[i].MemoryLimit != "" {
						parts[i].MemoryLimit = memoryLimit
					}
				}
			}
			if memoryLimit == "none" {
				for i := range parts {
					parts[i].MemoryLimit = ""
				}
			}
			for _, p := range parts {
				if p.MemoryLimit == "" {
					continue
				}
				choice, err := pg.Resolve(a.db, a.env.Getenv)
				if err != nil {
					return err
				}
				if choice.Source != pg.SourceNone {
					return usagef("study %s runs the server under a %s memory limit, which needs the embedded cluster (pgts db start); "+
						"the database comes from %s: --memory-limit none runs the study without a limit", st.Name, p.MemoryLimit, choice.Source)
				}
				break
			}
			if out == "" {
				out = filepath.Join("bench-results", time.Now().UTC().Format("20060102T150405Z")+"-study-"+st.Name)
			}
			if _, err := os.Stat(out); err == nil {
				return usagef("--out %q already exists; results are never overwritten", out)
			}
			var dirs []string
			var errs []error
			for _, p := range parts {
				dir := filepath.Join(out, p.Name)
				a.log.Info("study part", "study", st.Name, "part", p.Name, "memory_limit", p.MemoryLimit, "results", dir)
				var err error
				switch {
				case p.Load != nil:
					_, err = a.runLoad(ctx, *p.Load, loadRunOptions{memoryLimit: p.MemoryLimit, out: dir})
				case p.Insert != nil:
					err = a.runInsert(ctx, *p.Insert, filepath.Join(dir, "insert.json"), func(bench.InsertResult) error { return nil })
				case p.Events != nil:
					err = a.runEvents(ctx, *p.Events, p.MemoryLimit, "", filepath.Join(dir, "events.json"), func(bench.EventsResult) error { return nil })
				}
				if _, serr := os.Stat(dir); serr == nil {
					dirs = append(dirs, dir)
				}
				if err != nil {
					var ue *pg.UsageError
					if ctx.Err() != nil || errors.As(err, &ue) {
						return err
					}
					a.log.Error("study part failed", "part", p.Name, "err", err)
					errs = append(errs, fmt.Errorf("part %s: %w", p.Name, err))
				}
			}
			if len(dirs) == 0 {
				return errors.Join(errs...)
			}
			res, _, err := report.Render(report.Options{Dirs: dirs, Out: out, Command: strings.Join(os.Args, " ")})
			if err != nil {
				return errors.Join(append(errs, err)...)
			}
			srcs, err := report.Read(dirs)
			if err != nil {
				return errors.Join(append(errs, err)...)
			}
			var v bytes.Buffer
			if err := report.WriteVerdict(&v, srcs); err != nil {
				return err
			}
			fmt.Fprintf(a.env.Stdout, "Study %s (%s), %s:\n", st.Name, size, out)
			a.env.Stdout.Write(v.Bytes())
			fmt.Fprintf(a.env.Stdout, "report: %s (tables: %s)\n", res.HTML, res.Text)
			return errors.Join(errs...)
		},
	}
	f := cmd.Flags()
	f.StringVar(&size, "size", "full", "full (the seed's parameters), small (minutes) or tiny (seconds, to check it runs)")
	f.StringVar(&out, "out", "", "results directory, one subdirectory per part (default bench-results/<timestamp>-study-NAME)")
	f.StringVar(&memoryLimit, "memory-limit", "", "the server memory limit of the studies that have one (memory: 128MB, events: 192MB), or none")
	f.StringVar(&chunks, "timescaledb-chunk", "", "loading study: chunk intervals of the timescaledb store (30m, 1h, 7d or default; default: TimescaleDB's)")
	f.IntVar(&workers, "workers", runtime.NumCPU(), "N of \"1 and N workers\": the machine's cores by default")
	f.IntVar(&repeat, "repeat", 0, "repeats (0: the study's own: 3 for loading, 2 for insert, alternating the tables)")
	return cmd
}
