package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/pgts/pgts/internal/catalog"
	"github.com/pgts/pgts/internal/partition"
)

// selectTables returns the named series table, or all of them.
func selectTables(ctx context.Context, m *partition.Manager, args []string) ([]*partition.Table, error) {
	if len(args) == 1 {
		t, err := m.Table(ctx, args[0])
		if err != nil {
			return nil, err
		}
		return []*partition.Table{t}, nil
	}
	return m.Tables(ctx)
}

func newMaintainCmd(a *app) *cobra.Command {
	var every time.Duration
	cmd := &cobra.Command{
		Use:   "maintain [TABLE]",
		Short: "Premake partitions, apply retention, move waiting rows and refresh rollups, once or in a loop",
		Long: `Premake the partitions of every series table (or of TABLE) up to --premake
intervals ahead of now, drop the partitions that are entirely older than
the retention, move the rows other writers (INSERT, COPY from any SQL
client) left in the table's default partition, NAME_default, into the
partitions of their times, made for them, then refresh the rollups (of
TABLE, or all). A failure on one table or rollup is reported and the
others are still maintained; the exit status is 1 if any failed.

With --every, run forever (until SIGINT/SIGTERM) at that period. Several
maintain processes and loaders may run at once: partition creation and
retention are serialised per table in the database.`,
		Example: `  pgts maintain
  pgts maintain conditions
  pgts maintain --every 10m`,
		Args: rangeArgs(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if every < 0 || (every > 0 && every < time.Second) {
				return usagef("--every %s: must be at least 1s", every)
			}
			ctx := cmd.Context()
			pool, m, err := a.manager(ctx)
			if err != nil {
				return err
			}
			defer pool.Close()
			for {
				err := maintainOnce(ctx, a, pool, m, args)
				if every == 0 {
					return err
				}
				if errors.Is(err, context.Canceled) || ctx.Err() != nil {
					return ErrInterrupted
				}
				t := time.NewTimer(every)
				select {
				case <-ctx.Done():
					t.Stop()
					return ErrInterrupted
				case <-t.C:
				}
			}
		},
	}
	cmd.Flags().DurationVar(&every, "every", 0, "repeat at this period (e.g. 10m) until interrupted")
	return cmd
}

func maintainOnce(ctx context.Context, a *app, db catalog.DB, m *partition.Manager, args []string) error {
	tables, err := selectTables(ctx, m, args)
	if err != nil {
		return err
	}
	failed := 0
	for _, r := range m.Maintain(ctx, tables) {
		if r.Err != nil {
			failed++
			continue
		}
		a.log.Info("maintained", "table", r.Table, "created", r.Created, "dropped", len(r.Dropped), "moved_rows", r.Moved, "vacuumed", r.Vacuumed)
	}
	shardsFailed := 0
	if len(args) == 0 {
		// the partitions of sharded tables live on the shards (shard.go)
		if shardsFailed, err = maintainShards(ctx, a); err != nil {
			return err
		}
	}
	// Rollups are refreshed whatever failed above: a shard that is down
	// must not leave them stale.
	rollupsFailed, err := maintainRollups(ctx, a, m, db, args)
	if err != nil {
		return err
	}
	if shardsFailed > 0 {
		return fmt.Errorf("maintenance failed on %d shards (see above); run it again once they answer", shardsFailed)
	}
	if failed > 0 {
		return fmt.Errorf("maintenance failed for %d of %d tables (see above)", failed, len(tables))
	}
	if rollupsFailed > 0 {
		return fmt.Errorf("refresh failed for %d rollups (see above)", rollupsFailed)
	}
	return nil
}

func newRetentionCmd(a *app) *cobra.Command {
	var dryRun, asJSON bool
	cmd := &cobra.Command{
		Use:   "retention [TABLE]",
		Short: "Drop partitions older than the retention (or list them with --dry-run)",
		Long: `Drop the partitions of every series table (or of TABLE) whose upper bound is
at or before now minus the table's retention. Bounds are read from the
database itself; a partition that still holds any time inside the retention
is never dropped. Partitions are dropped, not detached. A failure on one
table is reported and does not stop the others.`,
		Example: `  pgts retention --dry-run
  pgts retention conditions`,
		Args: rangeArgs(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			pool, m, err := a.manager(ctx)
			if err != nil {
				return err
			}
			defer pool.Close()
			tables, err := selectTables(ctx, m, args)
			if err != nil {
				return err
			}
			type row struct {
				Table     string   `json:"table"`
				Cutoff    string   `json:"cutoff,omitempty"`
				Dropped   []string `json:"dropped"`
				WouldDrop []string `json:"would_drop,omitempty"`
				Error     string   `json:"error,omitempty"`
			}
			var out []row
			failed := 0
			for _, t := range tables {
				r := row{Table: t.String(), Dropped: []string{}}
				if dryRun {
					parts, cutoff, err := m.Expired(ctx, t)
					if err != nil {
						r.Error = err.Error()
					}
					if cutoff != 0 {
						r.Cutoff = partition.FormatMicros(cutoff)
					}
					for _, p := range parts {
						r.WouldDrop = append(r.WouldDrop, p.Name)
					}
				} else {
					parts, err := m.ApplyRetention(ctx, t)
					if err != nil {
						r.Error = err.Error()
					}
					for _, p := range parts {
						r.Dropped = append(r.Dropped, p.Name)
					}
				}
				if r.Error != "" {
					failed++
					a.log.Error("retention failed", "table", r.Table, "err", r.Error)
				}
				out = append(out, r)
			}
			if asJSON {
				if err := writeJSON(a, out); err != nil {
					return err
				}
			} else {
				for _, r := range out {
					switch {
					case dryRun && r.Cutoff == "":
						fmt.Fprintf(a.env.Stdout, "%s: no retention set\n", r.Table)
					case dryRun:
						fmt.Fprintf(a.env.Stdout, "%s: would drop %d partitions ending at or before %s: %v\n", r.Table, len(r.WouldDrop), r.Cutoff, r.WouldDrop)
					default:
						fmt.Fprintf(a.env.Stdout, "%s: dropped %d partitions %v\n", r.Table, len(r.Dropped), r.Dropped)
					}
				}
			}
			if failed > 0 {
				return fmt.Errorf("retention failed for %d of %d tables", failed, len(tables))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "list what would be dropped, drop nothing")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
