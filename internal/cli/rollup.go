package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"

	"github.com/pgts/pgts/internal/catalog"
	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pg"
	"github.com/pgts/pgts/internal/rollup"
	"github.com/pgts/pgts/internal/shard"
)

func (a *app) rollups(ctx context.Context) (*pgxpool.Pool, *partition.Manager, *rollup.Rollups, error) {
	pool, m, err := a.manager(ctx)
	if err != nil {
		return nil, nil, nil, err
	}
	rs, err := rollup.New(rollup.DefaultConfig(pool, m, a.log))
	if err != nil {
		pool.Close()
		return nil, nil, nil, err
	}
	return pool, m, rs, nil
}

// shardedRollups are the rollups of sharded tables, from the coordinator
// pool.
func (a *app) shardedRollups(pool *pgxpool.Pool, rs *rollup.Rollups) *rollup.Sharded {
	return rollup.NewSharded(rs, shard.New(pool, a.log))
}

// anyRollup is a rollup or a rollup of a sharded table.
type anyRollup struct {
	r  *rollup.Rollup
	sr *rollup.ShardedRollup
}

func (x anyRollup) String() string {
	if x.sr != nil {
		return x.sr.String()
	}
	return x.r.String()
}

// anyNamed opens the database and reads the rollup (or sharded rollup)
// name; the caller closes the pool when err is nil.
func (a *app) anyNamed(ctx context.Context, name string) (*pgxpool.Pool, *rollup.Rollups, *rollup.Sharded, anyRollup, error) {
	pool, _, rs, err := a.rollups(ctx)
	if err != nil {
		return nil, nil, nil, anyRollup{}, err
	}
	srs := a.shardedRollups(pool, rs)
	r, err := rs.Get(ctx, name)
	if err == nil {
		return pool, rs, srs, anyRollup{r: r}, nil
	}
	if errors.As(err, new(*rollup.NotFoundError)) {
		var sr *rollup.ShardedRollup
		if sr, err = srs.Get(ctx, name); err == nil {
			return pool, rs, srs, anyRollup{sr: sr}, nil
		}
	}
	pool.Close()
	return nil, nil, nil, anyRollup{}, err
}

func newRollupCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rollup",
		Short: "Create, list, show, refresh and drop rollups (continuous aggregates)",
		Long: `A rollup keeps aggregates of a series table per time bucket (and group
key) in a series table of its own, NAME_data, behind a view NAME with the
columns bucket, the group-by columns and one column per aggregate. Every
write to the source (pgts load, psql INSERT/COPY/UPDATE/DELETE) records the
buckets and group keys it touched; a refresh rewrites only those, and
materializes the buckets that ended since the last one. pgts maintain
refreshes every rollup. See docs/rollups.md.`,
	}
	cmd.AddCommand(newRollupCreateCmd(a), newRollupListCmd(a), newRollupShowCmd(a), newRollupRefreshCmd(a), newRollupAlterCmd(a), newRollupDropCmd(a))
	return cmd
}

func newRollupCreateCmd(a *app) *cobra.Command {
	var on, bucket, groupBy, aggs, retention, realTime string
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a rollup of a series table (or of another rollup)",
		Long: `Create the rollup NAME of the series table --on (or of the rollup --on: daily
from hourly, exact since partial states are stored). --agg lists the
aggregates: avg, min, max, sum, count(*), count(col), first(col, time),
last(col, time), each with an optional AS name (default FUNC_COLUMN, and
count for count(*)). Buckets of timestamptz columns are on UTC's clock.
With --real-time on (the default) the view adds the rows not yet
materialized, aggregated when queried, so it never shows stale values.`,
		Example: `  pgts rollup create conditions_hourly --on conditions --bucket '1 hour' --group-by device \
    --agg "avg(temperature), max(temperature), count(*)"
  pgts rollup create conditions_daily --on conditions_hourly --bucket '1 day' --group-by device \
    --agg "avg(temperature), max(temperature), count(*)" --retention '5 years'`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			schema, name, err := pg.SplitQualified(args[0])
			if err != nil {
				return usagef("%v", err)
			}
			parsed, err := rollup.ParseAggs(aggs)
			if err != nil {
				return usagef("%v", err)
			}
			groups, err := rollup.ParseGroupBy(groupBy)
			if err != nil {
				return usagef("%v", err)
			}
			var rt bool
			switch realTime {
			case "on":
				rt = true
			case "off":
			default:
				return usagef("--real-time %q: on or off", realTime)
			}
			if on == "" || bucket == "" {
				return usagef("--on and --bucket are required")
			}
			pool, _, rs, err := a.rollups(ctx)
			if err != nil {
				return err
			}
			defer pool.Close()
			width, err := intervalFlag(ctx, pool, "bucket", bucket)
			if err != nil {
				return err
			}
			ret, err := intervalFlag(ctx, pool, "retention", retention)
			if err != nil {
				return err
			}
			spec := rollup.Spec{Schema: schema, Name: name, On: on, Bucket: *width, GroupBy: groups, Aggs: parsed, Retention: ret, RealTime: rt}
			sr, err := a.shardedRollups(pool, rs).Create(ctx, spec)
			if err == nil {
				fmt.Fprintf(a.env.Stdout, "created rollup %s of the sharded table %s.%s by %s (view %s on the coordinator, a rollup of each partition on its shard); pgts rollup refresh %s materializes it\n",
					sr, sr.TableSchema, sr.TableName, sr.Bucket.Human(), sr, sr)
				return nil
			}
			if !errors.Is(err, rollup.ErrNotShardedSource) {
				return err
			}
			r, err := rs.Create(ctx, spec)
			if err != nil {
				return err
			}
			fmt.Fprintf(a.env.Stdout, "created rollup %s of %s.%s by %s (view %s, data in %s.%s); pgts rollup refresh %s materializes it\n",
				r, r.SourceSchema, r.SourceName, r.Bucket.Human(), r, r.Schema, r.DataName, r)
			return nil
		},
	}
	cmd.Flags().StringVar(&on, "on", "", "series table (or rollup) to aggregate")
	cmd.Flags().StringVar(&bucket, "bucket", "", "bucket width, e.g. '1 hour', '1 day', '1 month'")
	cmd.Flags().StringVar(&groupBy, "group-by", "", "columns to group by, e.g. \"device, site\"")
	cmd.Flags().StringVar(&aggs, "agg", "", "aggregates, e.g. \"avg(temp), max(temp) AS peak, count(*)\"")
	cmd.Flags().StringVar(&retention, "retention", "", "drop buckets older than this (default: keep all)")
	cmd.Flags().StringVar(&realTime, "real-time", "on", "on: the view adds rows not yet materialized; off: materialized buckets only")
	return cmd
}

type rollupJSON struct {
	Rollup      string   `json:"rollup"`
	On          string   `json:"on"`
	Bucket      string   `json:"bucket"`
	GroupBy     []string `json:"group_by"`
	Aggs        []string `json:"aggs"`
	RealTime    bool     `json:"real_time"`
	DataTable   string   `json:"data_table"`
	Watermark   string   `json:"watermark"`
	FrozenBelow string   `json:"frozen_below,omitempty"`
	Pending     int64    `json:"pending_invalidations"`
	RefreshedAt string   `json:"refreshed_at,omitempty"`
	Sharded     bool     `json:"sharded,omitempty"`
}

// describeShardedRollup describes a rollup of a sharded table: its data, its
// watermarks and its invalidations are on the shards.
func describeShardedRollup(r *rollup.ShardedRollup) rollupJSON {
	j := rollupJSON{Rollup: r.String(), On: r.TableSchema + "." + r.TableName, Bucket: r.Bucket.Human(), GroupBy: r.GroupBy,
		RealTime: r.RealTime, DataTable: fmt.Sprintf("on the shards: %s.%s_pN%s", r.Schema, r.Name, rollup.DataSuffix),
		Watermark: "per shard", Sharded: true}
	if r.Parent != nil {
		j.On = r.Parent.String()
	}
	if j.GroupBy == nil {
		j.GroupBy = []string{}
	}
	for _, ag := range r.Aggs {
		j.Aggs = append(j.Aggs, ag.String())
	}
	return j
}

func describeAny(ctx context.Context, pool *pgxpool.Pool, x anyRollup) (rollupJSON, error) {
	if x.sr != nil {
		return describeShardedRollup(x.sr), nil
	}
	return describeRollup(ctx, pool, x.r)
}

func describeRollup(ctx context.Context, pool *pgxpool.Pool, r *rollup.Rollup) (rollupJSON, error) {
	j := rollupJSON{Rollup: r.String(), On: r.SourceSchema + "." + r.SourceName, Bucket: r.Bucket.Human(), GroupBy: r.GroupBy,
		RealTime: r.RealTime, DataTable: r.Schema + "." + r.DataName, Watermark: partition.FormatMicros(r.Watermark)}
	if r.Parent != nil {
		j.On = r.Parent.String()
	}
	if j.GroupBy == nil {
		j.GroupBy = []string{}
	}
	for _, ag := range r.Aggs {
		j.Aggs = append(j.Aggs, ag.String())
	}
	if r.FrozenBelow != nil && *r.FrozenBelow > partition.MinMicros {
		j.FrozenBelow = partition.FormatMicros(*r.FrozenBelow)
	}
	if r.RefreshedAt != nil {
		j.RefreshedAt = r.RefreshedAt.UTC().Format(time.RFC3339)
	}
	err := pool.QueryRow(ctx, `SELECT count(*) FROM pgts.rollup_invalidation WHERE rollup_id = $1`, r.ID).Scan(&j.Pending)
	return j, err
}

func newRollupListCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List rollups",
		Example: "  pgts rollup list\n  pgts rollup list --json",
		Args:    exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			pool, _, rs, err := a.rollups(ctx)
			if err != nil {
				return err
			}
			defer pool.Close()
			list, err := rs.List(ctx)
			if err != nil {
				return err
			}
			out := []rollupJSON{}
			for _, r := range list {
				j, err := describeRollup(ctx, pool, r)
				if err != nil {
					return err
				}
				out = append(out, j)
			}
			sharded, err := a.shardedRollups(pool, rs).List(ctx)
			if err != nil {
				return err
			}
			for _, r := range sharded {
				out = append(out, describeShardedRollup(r))
			}
			if asJSON {
				return writeJSON(a, out)
			}
			tw := tabwriter.NewWriter(a.env.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ROLLUP\tON\tBUCKET\tGROUP BY\tREAL-TIME\tWATERMARK\tPENDING")
			for _, j := range out {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%v\t%s\t%d\n", j.Rollup, j.On, j.Bucket, orDash(strings.Join(j.GroupBy, ", ")), j.RealTime, j.Watermark, j.Pending)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newRollupShowCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "show NAME",
		Short:   "Show a rollup's definition and state",
		Example: "  pgts rollup show conditions_hourly",
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			pool, _, _, r, err := a.anyNamed(ctx, args[0])
			if err != nil {
				return err
			}
			defer pool.Close()
			j, err := describeAny(ctx, pool, r)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(a, j)
			}
			w := a.env.Stdout
			fmt.Fprintf(w, "rollup:      %s\non:          %s\nbucket:      %s\ngroup by:    %s\naggregates:  %s\nreal-time:   %v\ndata table:  %s\nwatermark:   %s (buckets before it are materialized)\npending:     %d invalidation records\n",
				j.Rollup, j.On, j.Bucket, orDash(strings.Join(j.GroupBy, ", ")), strings.Join(j.Aggs, ", "), j.RealTime, j.DataTable, j.Watermark, j.Pending)
			if j.FrozenBelow != "" {
				fmt.Fprintf(w, "frozen:      buckets before %s (past the source's retention) are kept as they are\n", j.FrozenBelow)
			}
			if j.RefreshedAt != "" {
				fmt.Fprintf(w, "refreshed:   %s\n", j.RefreshedAt)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// refreshRollups refreshes the given rollups in order (a rollup's source
// rollup comes before it), reporting each failure and going on.
func refreshRollups(ctx context.Context, a *app, rs *rollup.Rollups, list []*rollup.Rollup) (failed int) {
	return refreshEach(ctx, a, list, rs.Refresh, func(st rollup.Stats) []any {
		return []any{"watermark", partition.FormatMicros(st.Watermark)}
	})
}

// refreshSharded refreshes rollups of sharded tables in order, on every
// shard, reporting each failure (naming the shard) and going on.
func refreshSharded(ctx context.Context, a *app, srs *rollup.Sharded, list []*rollup.ShardedRollup) (failed int) {
	return refreshEach(ctx, a, list, srs.Refresh, func(rollup.Stats) []any { return []any{"sharded", true} })
}

// refreshEach refreshes each rollup of list with refresh, logging what it
// did (with extra's fields) or its failure, and counts the failures; it
// stops when ctx is done.
func refreshEach[R fmt.Stringer](ctx context.Context, a *app, list []R, refresh func(context.Context, R) (rollup.Stats, error), extra func(rollup.Stats) []any) (failed int) {
	for _, r := range list {
		st, err := refresh(ctx, r)
		if err != nil {
			if ctx.Err() != nil {
				return failed + 1
			}
			failed++
			a.log.Error("rollup refresh failed", "rollup", r.String(), "err", err)
			continue
		}
		attrs := append([]any{"rollup", r.String()}, extra(st)...)
		attrs = append(attrs, "buckets", st.Buckets, "pairs", st.Pairs, "frozen", st.Frozen,
			"rows", st.RowsWritten, "took", st.Took.Round(time.Millisecond))
		a.log.Info("refreshed rollup", attrs...)
	}
	return failed
}

func newRollupRefreshCmd(a *app) *cobra.Command {
	var from, to string
	cmd := &cobra.Command{
		Use:   "refresh [NAME]",
		Short: "Refresh a rollup (or all of them)",
		Long: `Materialize the buckets that ended since the last refresh and rewrite the
buckets written since (only the group keys written). With --from and --to,
also rewrite every bucket starting in [--from, --to). A failure on one
rollup is reported and the others are still refreshed.`,
		Example: `  pgts rollup refresh
  pgts rollup refresh conditions_hourly --from 2024-01-01 --to 2024-02-01`,
		Args: rangeArgs(0, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if (from == "") != (to == "") {
				return usagef("--from and --to go together")
			}
			if from != "" && len(args) == 0 {
				return usagef("--from and --to need a rollup NAME")
			}
			var pool *pgxpool.Pool
			var rs *rollup.Rollups
			var srs *rollup.Sharded
			var list []*rollup.Rollup
			var sharded []*rollup.ShardedRollup
			var err error
			if len(args) == 1 {
				var x anyRollup
				if pool, rs, srs, x, err = a.anyNamed(ctx, args[0]); err != nil {
					return err
				}
				defer pool.Close()
				var lo, hi int64
				if from != "" {
					if err := pool.QueryRow(ctx, `SELECT (extract(epoch FROM $1::timestamptz) * 1000000)::bigint,
						(extract(epoch FROM $2::timestamptz) * 1000000)::bigint`, from, to).Scan(&lo, &hi); err != nil {
						return usagef("--from %q --to %q: %v", from, to, err)
					}
				}
				if x.sr != nil {
					if from != "" {
						st, err := srs.Invalidate(ctx, x.sr, lo, hi)
						if err != nil {
							return err
						}
						a.log.Info("refreshed rollup", "rollup", x.sr.String(), "sharded", true, "pairs", st.Pairs, "rows", st.RowsWritten, "took", st.Took.Round(time.Millisecond))
						return nil
					}
					sharded = []*rollup.ShardedRollup{x.sr}
				} else {
					list = []*rollup.Rollup{x.r}
					if from != "" {
						n, err := rs.Invalidate(ctx, x.r, lo, hi)
						if err != nil {
							return err
						}
						a.log.Info("invalidated", "rollup", x.r.String(), "pairs", n)
					}
				}
			} else {
				if pool, _, rs, err = a.rollups(ctx); err != nil {
					return err
				}
				defer pool.Close()
				srs = a.shardedRollups(pool, rs)
				if list, err = rs.List(ctx); err != nil {
					return err
				}
				if sharded, err = srs.List(ctx); err != nil {
					return err
				}
			}
			n := refreshRollups(ctx, a, rs, list) + refreshSharded(ctx, a, srs, sharded)
			if n > 0 {
				if ctx.Err() != nil {
					return ErrInterrupted
				}
				return fmt.Errorf("refresh failed for %d of %d rollups (see above)", n, len(list)+len(sharded))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "also rewrite buckets starting at or after this time")
	cmd.Flags().StringVar(&to, "to", "", "... and before this time")
	return cmd
}

func newRollupAlterCmd(a *app) *cobra.Command {
	var add, drop string
	cmd := &cobra.Command{
		Use:   "alter NAME",
		Short: "Add aggregates to a rollup (or drop some), keeping its buckets",
		Long: `Add aggregates to the rollup NAME (--add-agg, the syntax of create's --agg)
or drop some (--drop-agg, their column names in the view), keeping every
materialized bucket. The buckets already materialized read NULL for an
added aggregate until they are rewritten: by a write to their bucket, or by
pgts rollup refresh NAME --from --to, which fills them. Buckets
materialized later have every aggregate. Rollups built on NAME are
unaffected; an aggregate one of them combines cannot be dropped. Writers of
the source never wait; queries of the rollup wait for the alter's short
transaction. A rollup of a sharded table is altered on every shard, then
on the coordinator. See docs/rollups.md.`,
		Example: `  pgts rollup alter conditions_hourly --add-agg "max(humidity), last(temperature, time)"
  pgts rollup refresh conditions_hourly --from 2024-01-01 --to 2024-02-01
  pgts rollup alter conditions_hourly --drop-agg "max_humidity"`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			var spec rollup.AlterSpec
			var err error
			if add != "" {
				if spec.Add, err = rollup.ParseAggs(add); err != nil {
					return usagef("--add-agg: %v", err)
				}
			}
			if drop != "" {
				if spec.Drop, err = rollup.ParseGroupBy(drop); err != nil {
					return usagef("--drop-agg: %v", err)
				}
			}
			if len(spec.Add) == 0 && len(spec.Drop) == 0 {
				return usagef("give --add-agg or --drop-agg")
			}
			pool, rs, srs, x, err := a.anyNamed(ctx, args[0])
			if err != nil {
				return err
			}
			defer pool.Close()
			var name string
			var aggs []rollup.Agg
			if x.sr != nil {
				nsr, err := srs.Alter(ctx, x.sr, spec)
				if err != nil {
					return err
				}
				name, aggs = nsr.String(), nsr.Aggs
			} else {
				nr, err := rs.Alter(ctx, x.r, spec)
				if err != nil {
					return err
				}
				name, aggs = nr.String(), nr.Aggs
			}
			names := make([]string, len(aggs))
			for i, ag := range aggs {
				names[i] = ag.String()
			}
			fmt.Fprintf(a.env.Stdout, "altered rollup %s: %s\n", name, strings.Join(names, ", "))
			if len(spec.Add) > 0 {
				fmt.Fprintf(a.env.Stdout, "buckets materialized before read NULL for the added aggregates; pgts rollup refresh %s --from T1 --to T2 fills them\n", name)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&add, "add-agg", "", "aggregates to add, e.g. \"max(temp), last(temp, time)\"")
	cmd.Flags().StringVar(&drop, "drop-agg", "", "aggregates to drop, by view column, e.g. \"max_temp\"")
	return cmd
}

func newRollupDropCmd(a *app) *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:     "drop NAME",
		Short:   "Drop a rollup: its view, data table and triggers (needs --yes)",
		Example: "  pgts rollup drop conditions_hourly --yes",
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			pool, rs, srs, x, err := a.anyNamed(ctx, args[0])
			if err != nil {
				return err
			}
			defer pool.Close()
			if x.sr != nil {
				if !yes {
					return usagef("dropping rollup %s deletes its data tables on the shards: add --yes", x.sr)
				}
				if err := srs.Drop(ctx, x.sr); err != nil {
					return err
				}
			} else {
				if !yes {
					return usagef("dropping rollup %s deletes its data table %s.%s: add --yes", x.r, x.r.Schema, x.r.DataName)
				}
				if err := rs.Drop(ctx, x.r); err != nil {
					return err
				}
			}
			fmt.Fprintf(a.env.Stdout, "dropped rollup %s\n", x)
			return nil
		},
	}
	cmd.Flags().BoolVar(&yes, "yes", false, "really drop")
	return cmd
}

// maintainRollups refreshes the rollups (of the tables named in args, or
// all), for pgts maintain; it returns how many failed.
func maintainRollups(ctx context.Context, a *app, m *partition.Manager, db catalog.DB, args []string) (int, error) {
	rs, err := rollup.New(rollup.DefaultConfig(db, m, a.log))
	if err != nil {
		return 0, err
	}
	list, err := rs.List(ctx)
	if err != nil {
		return 0, err
	}
	if len(args) == 1 {
		t, err := m.Table(ctx, args[0])
		if err != nil {
			return 0, err
		}
		var keep []*rollup.Rollup
		for _, r := range list {
			if onTable(r, t) {
				keep = append(keep, r)
			}
		}
		list = keep
	}
	failed := refreshRollups(ctx, a, rs, list)
	// Rollups of sharded tables: refreshed on their shards.
	pool, err := a.openDB(ctx, 2)
	if err != nil {
		return failed, err
	}
	defer pool.Close()
	srs := a.shardedRollups(pool, rs)
	sharded, err := srs.List(ctx)
	if err != nil {
		return failed, err
	}
	if len(args) == 1 {
		schema, name, err := pg.SplitQualified(args[0])
		if err != nil {
			return failed, err
		}
		var keep []*rollup.ShardedRollup
		for _, r := range sharded {
			if r.TableName == name && (schema == "" || r.TableSchema == schema) {
				keep = append(keep, r)
			}
		}
		sharded = keep
	}
	return failed + refreshSharded(ctx, a, srs, sharded), nil
}

// onTable reports whether r aggregates t, directly or through rollups.
func onTable(r *rollup.Rollup, t *partition.Table) bool {
	for ; r != nil; r = r.Parent {
		if r.Parent == nil && r.SourceSchema == t.Schema && r.SourceName == t.Name {
			return true
		}
	}
	return false
}
