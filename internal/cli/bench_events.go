package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pgts/pgts/internal/bench"
	"github.com/pgts/pgts/internal/report"
)

func newBenchEventsCmd(a *app) *cobra.Command {
	s := bench.DefaultEventsScenario()
	var stores, out, memoryLimit, sharedBuffers string
	cmd := &cobra.Command{
		Use:   "events",
		Short: "Run a field report's event workload: 16 sessions, one row per transaction, 2 kB JSON documents",
		Long: `Insert audit events into a fresh events table, as a field report on
PostgreSQL with and without time partitioning did:

  events(id bigserial, event_id uuid, event_type text, created_at timestamptz, data jsonb)
  indexes: primary key on id; btree on event_id, created_at and event_type;
           GIN on (data -> 'categories_ids') jsonb_path_ops

--sessions connections insert as fast as they can, each row in its own
transaction, until --rows rows or for --duration, on each store in turn:

  plain   one table
  pgts    a series table partitioned by week of created_at; a primary key on
          id alone cannot exist there: the run asks for it, records pgts'
          advice, and uses PRIMARY KEY (id, created_at) as advised

created_at advances 7 days / --week-rows per row (± 2.5 s), so that a run of
minutes covers several weeks. Every second: inserts/s, p50/p99/max commit
latency, bytes written and write calls of the server processes (/proc, when
the server runs here), WAL bytes, whether a checkpoint is in progress; at
the end the table's and each index's size and a count(*) check.
--checkpoint-timeout sets the server's checkpoint_timeout for the run (and
puts it back), so that a run of minutes sees checkpoints. Results go
to events.json in --out (never overwritten); ` + "`pgts report DIR`" + ` draws them.`,
		Example: `  pgts bench events --rows 200000
  pgts bench events --duration 10m --memory-limit 1GB --out bench-results/events`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			s.Stores, s.Logger = splitList(stores), a.log
			if cmd.Flags().Changed("duration") && !cmd.Flags().Changed("rows") {
				s.Rows = 0
			}
			if err := s.Validate(); err != nil {
				return usagef("%v", err)
			}
			path, err := resultsFile(out, "events.json")
			if err != nil {
				return err
			}
			if sharedBuffers != "" && memoryLimit == "" {
				return usagef("--shared-buffers goes with --memory-limit")
			}
			return a.runEvents(ctx, s, memoryLimit, sharedBuffers, path, func(res bench.EventsResult) error {
				if len(res.Runs) == 0 {
					return nil
				}
				return report.WriteEvents(a.env.Stdout, res)
			})
		},
	}
	f := cmd.Flags()
	f.StringVar(&stores, "stores", strings.Join(s.Stores, ","), "comma-separated stores: plain, pgts")
	f.IntVar(&s.Sessions, "sessions", s.Sessions, "connections inserting, one row per transaction")
	f.Int64Var(&s.Rows, "rows", s.Rows, "rows per store (instead of --duration)")
	f.DurationVar(&s.Duration, "duration", 0, "time per store (instead of --rows)")
	f.IntVar(&s.DocBytes, "doc-bytes", s.DocBytes, "mean size of a data document, bytes of JSON")
	f.Int64Var(&s.WeekRows, "week-rows", s.WeekRows, "rows per week of created_at")
	f.Uint64Var(&s.Seed, "seed", s.Seed, "seed of the generated events")
	f.DurationVar(&s.CheckpointTimeout, "checkpoint-timeout", 0, "set the server's checkpoint_timeout for the run (ALTER SYSTEM, superuser; reset afterwards); 0 keeps it")
	f.StringVar(&memoryLimit, "memory-limit", "", "embedded cluster only: run the server under this memory limit (cgroup), e.g. 1GB")
	f.StringVar(&sharedBuffers, "shared-buffers", "", "with --memory-limit: the server's shared_buffers for the run (default a sixth of the limit)")
	f.StringVar(&out, "out", "", "results directory (default bench-results/<timestamp>)")
	return cmd
}

// runEvents runs the event workload on the chosen database, under a
// server memory limit when memoryLimit is set, writes its result to path
// (events.json of a results directory) and shows it.
func (a *app) runEvents(ctx context.Context, s bench.EventsScenario, memoryLimit, sharedBuffers, path string,
	show func(bench.EventsResult) error) error {
	s.Logger = a.log
	var err error
	if s.ConnString, err = a.connString(ctx); err != nil {
		return err
	}
	if memoryLimit != "" {
		limit, stop, err := a.limitServerMemory(ctx, memoryLimit, sharedBuffers, &s.BeforeRun)
		if err != nil {
			return err
		}
		defer stop()
		s.MemoryLimit = limit
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("results directory: %w", err)
	}
	res, runErr := bench.RunEvents(ctx, s, func(r bench.EventsRun) {
		a.log.Info("store done", "store", r.Store, "rows", r.Rows, "seconds", fmt.Sprintf("%.1f", r.Seconds),
			"ips", int64(r.IPS), "end_to_start", fmt.Sprintf("%.2f", r.EndToStart), "err", r.Error)
	})
	res.Command = strings.Join(os.Args, " ")
	return a.saveResults(ctx, path, res, res.Complete, runErr, func() error { return show(res) })
}
