package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/spf13/cobra"

	"github.com/pgts/pgts/internal/catalog"
	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pg"
	"github.com/pgts/pgts/internal/shard"
)

// openDB connects to the chosen database with a pool of maxConns.
func (a *app) openDB(ctx context.Context, maxConns int32) (*pgxpool.Pool, error) {
	cs, err := a.connString(ctx)
	if err != nil {
		return nil, err
	}
	return pg.NewPool(ctx, cs, maxConns)
}

func (a *app) manager(ctx context.Context) (*pgxpool.Pool, *partition.Manager, error) {
	pool, err := a.openDB(ctx, 4)
	if err != nil {
		return nil, nil, err
	}
	return pool, partition.NewManager(pool, a.log, time.Now), nil
}

func newTableCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "table",
		Short: "Create, list, show and drop series tables (tables partitioned by time)",
		Long: `A series table is a plain PostgreSQL table partitioned by range on a time
column. pgts makes its partitions ahead of the data (--premake), creates the
ones a load needs, drops old ones (--retention), and rejects rows outside the
accepted time window instead of routing them to a catch-all partition.
Everything is native partitioning: pg_dump and pg_restore handle it as is.`,
	}
	cmd.AddCommand(newTableCreateCmd(a), newTableListCmd(a), newTableShowCmd(a), newTableDropCmd(a))
	return cmd
}

// intervalFlag parses an optional interval flag through the server.
func intervalFlag(ctx context.Context, pool *pgxpool.Pool, flag, text string) (*partition.Interval, error) {
	if text == "" {
		return nil, nil
	}
	iv, err := partition.ParseInterval(ctx, pool, text)
	if err != nil {
		return nil, usagef("--%s: %v", flag, err)
	}
	if iv.Months < 0 || iv.Days < 0 || iv.Micros < 0 || iv == (partition.Interval{}) {
		return nil, usagef("--%s %q: must be a positive interval", flag, text)
	}
	return &iv, nil
}

func newTableCreateCmd(a *app) *cobra.Command {
	var (
		columns, like, timeCol, epoch, interval, hashCol string
		hashParts, premake                               int
		retention, future, past, index                   string
		noIndex                                          bool
		indexOn                                          []string
		expect                                           adviceFlags
		shardBy                                          string
		shards                                           int
	)
	cmd := &cobra.Command{
		Use:   "create NAME",
		Short: "Create a series table partitioned by time",
		Long: `Create a series table: a table partitioned by range on its time column,
with the partition holding now and --premake partitions after it made at once.

The time column may be timestamptz, timestamp, date, or bigint holding Unix
time (--epoch s, ms or us). --interval is any PostgreSQL interval that is
either whole months/years (calendar-aligned) or a fixed duration of whole
seconds (weeks start on Monday; other durations are aligned to the Unix
epoch, in UTC).

Rows are accepted from now - --accept-past (default: the retention, else no
limit) up to now + --accept-future (default: the end of the premade
partitions); the loader rejects others with a reason.

Every PRIMARY KEY and UNIQUE constraint must include the time column,
because PostgreSQL enforces uniqueness per partition.

To bring an existing table under pgts' management, name it twice:
"table create NAME --like NAME". An empty plain table is converted in place;
a table already partitioned by range on its time column (restored from a
dump, or made by hand) is adopted with its rows and partitions, when each
partition covers exactly one --interval as pgts aligns it.`,
		Example: `  pgts table create conditions \
    --columns "time timestamptz not null, device int not null, temperature float8, humidity float8" \
    --interval "1 week" --retention "90 days" --index-on "device, time"

  pgts table create metrics --columns "ts bigint not null, series int, value float8" \
    --time-column ts --epoch ms --interval "1 day" --hash-column series --hash-partitions 4

  pgts table create sensors --like sensors --interval "1 month"`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			schema, name, err := pg.SplitQualified(args[0])
			if err != nil {
				return usagef("%v", err)
			}
			if columns == "" && like == "" {
				return usagef("give the columns with --columns, or copy them from a table with --like")
			}
			tcol, err := pg.ColumnName(timeCol)
			if err != nil {
				return usagef("--time-column: %v", err)
			}
			spec := partition.CreateSpec{Schema: schema, Name: name, Columns: columns, Like: like, TimeColumn: tcol,
				EpochUnit: epoch, HashPartitions: hashParts, Premake: premake, ExtraIndexes: indexOn}
			if hashCol != "" {
				if spec.HashColumn, err = pg.ColumnName(hashCol); err != nil {
					return usagef("--hash-column: %v", err)
				}
			}
			switch {
			case noIndex:
				spec.Index = partition.IndexNone
			case index == "btree":
				spec.Index = partition.IndexBtree
			case index == "brin":
				spec.Index = partition.IndexBRIN
			default:
				return usagef("--index %q: choose btree or brin (or --no-index)", index)
			}
			pool, m, err := a.manager(ctx)
			if err != nil {
				return err
			}
			defer pool.Close()
			if interval, err = expect.apply(ctx, a, pool, interval, cmd.Flags().Changed("interval"), indexOn, tcol); err != nil {
				return err
			}
			iv, err := intervalFlag(ctx, pool, "interval", interval)
			if err != nil {
				return err
			}
			if err := iv.Validate(); err != nil {
				return usagef("--interval: %v", err)
			}
			spec.Interval = *iv
			if spec.Retention, err = intervalFlag(ctx, pool, "retention", retention); err != nil {
				return err
			}
			if spec.AcceptFuture, err = intervalFlag(ctx, pool, "accept-future", future); err != nil {
				return err
			}
			if spec.AcceptPast, err = intervalFlag(ctx, pool, "accept-past", past); err != nil {
				return err
			}
			if err := spec.Validate(); err != nil {
				return usagef("%v", err)
			}
			if shardBy != "" || shards != 0 {
				return createShardedTable(ctx, a, pool, spec, shardBy, shards)
			}
			t, err := m.Create(ctx, spec)
			if err != nil {
				return err
			}
			parts, err := m.Partitions(ctx, t)
			if err != nil {
				return err
			}
			a.log.Info("created series table", "table", t.String(), "interval", t.Interval.Human(), "partitions", len(parts))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&columns, "columns", "", `column definitions, e.g. "time timestamptz not null, device int, temp float8"`)
	f.StringVar(&like, "like", "", "copy columns, defaults, constraints and indexes from this table (an empty table of the same name is converted in place; one of the same name already partitioned by range on the time column is adopted as it is)")
	f.StringVar(&timeCol, "time-column", "time", "the column to partition by")
	f.StringVar(&epoch, "epoch", "", "unit of a bigint time column: s, ms or us")
	f.StringVar(&interval, "interval", "1 week", "time span of one partition (any PostgreSQL interval)")
	f.StringVar(&hashCol, "hash-column", "", "also split each time partition by hash of this column")
	f.IntVar(&hashParts, "hash-partitions", 0, "number of hash sub-partitions (with --hash-column)")
	f.IntVar(&premake, "premake", 4, "partitions kept ready ahead of now")
	f.StringVar(&retention, "retention", "", "drop partitions entirely older than this (e.g. \"90 days\"); default: keep all")
	f.StringVar(&future, "accept-future", "", "accept rows up to now + this (default: the premade horizon)")
	f.StringVar(&past, "accept-past", "", "accept rows back to now - this (default: the retention, or no limit)")
	f.StringVar(&index, "index", "btree", "index on the time column: btree, or brin for append-only data")
	f.BoolVar(&noIndex, "no-index", false, "no index on the time column")
	f.StringArrayVar(&indexOn, "index-on", nil, `an extra index, e.g. "device, time" (repeatable)`)
	expect.register(f)
	f.StringVar(&shardBy, "shard-by", "", "spread the table over the shard servers by hash of this column (pgts shard add; docs/scale-out.md)")
	f.IntVar(&shards, "shards", 0, "hash partitions of a sharded table, spread over the shard servers (default: 4 per server)")
	return cmd
}

func newTableListCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List series tables, and sharded tables with the placement of their partitions",
		Example: "  pgts table list\n  pgts table list --json",
		Args:    exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			pool, m, err := a.manager(ctx)
			if err != nil {
				return err
			}
			defer pool.Close()
			tables, stale, err := m.CheckedTables(ctx)
			if err != nil {
				return err
			}
			var out []tableJSON
			for _, t := range tables {
				parts, err := m.Partitions(ctx, t)
				if err != nil {
					return err
				}
				j := describeTable(t, parts, m.Now(), false)
				if j.Waiting, err = m.Waiting(ctx, t); err != nil {
					return err
				}
				out = append(out, j)
			}
			if err := addPending(ctx, pool, "", out); err != nil {
				return err
			}
			for _, e := range stale {
				out = append(out, tableJSON{Table: e.String(), Stale: staleText(e)})
			}
			sharded, err := shard.New(pool, a.log).Tables(ctx)
			if err != nil {
				return err
			}
			for _, t := range sharded {
				out = append(out, describeSharded(t))
			}
			if asJSON {
				if out == nil {
					out = []tableJSON{}
				}
				return writeJSON(a, out)
			}
			tw := tabwriter.NewWriter(a.env.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "TABLE\tTIME COLUMN\tINTERVAL\tPARTITIONS\tRETENTION\tSIZE")
			for _, t := range out {
				if t.Stale == "" && t.Sharded == nil {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", t.Table, t.TimeColumn, t.Interval, t.PartitionCount, orDash(t.Retention), humanBytes(t.TableBytes+t.IndexBytes))
				}
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			for _, t := range out {
				if t.Waiting > 0 {
					fmt.Fprintf(a.env.Stdout, "%s: %s %s wait in its default partition for their partitions (pgts maintain moves them)\n",
						t.Table, commas(t.Waiting), plural(t.Waiting, "row", "rows"))
				}
				writePendingNote(a.env.Stdout, t)
			}
			if err := writeShardedList(a.env.Stdout, out); err != nil {
				return err
			}
			for _, t := range out {
				if t.Stale != "" {
					fmt.Fprintf(a.env.Stdout, "%s: stale: %s\n", t.Table, t.Stale)
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

type partitionJSON struct {
	Name       string `json:"name"`
	From       string `json:"from"`
	To         string `json:"to"`
	Rows       int64  `json:"estimated_rows"`
	TableBytes int64  `json:"table_bytes"`
	IndexBytes int64  `json:"index_bytes"`
}

type tableJSON struct {
	Table          string          `json:"table"`
	TimeColumn     string          `json:"time_column"`
	TimeType       string          `json:"time_type"`
	Interval       string          `json:"interval"`
	HashColumn     string          `json:"hash_column,omitempty"`
	HashPartitions int             `json:"hash_partitions,omitempty"`
	Premake        int             `json:"premake"`
	Retention      string          `json:"retention,omitempty"`
	AcceptFrom     string          `json:"accept_from"`
	AcceptUntil    string          `json:"accept_until"`
	PartitionCount int             `json:"partition_count"`
	Rows           int64           `json:"estimated_rows"`
	TableBytes     int64           `json:"table_bytes"`
	IndexBytes     int64           `json:"index_bytes"`
	Partitions     []partitionJSON `json:"partitions,omitempty"`
	// Sharded is set for a table sharded over shard servers (its
	// partitions, rows and sizes are on the shards).
	Sharded *shardedJSON `json:"sharded,omitempty"`
	// Stale is set (and nothing else but Table) for a catalog entry whose
	// table was dropped or replaced outside pgts; listing removed it.
	Stale string `json:"stale,omitempty"`
	// Waiting counts the rows in the DEFAULT partition (NAME_default):
	// written by any SQL client for times whose partition did not exist,
	// moved into it by pgts maintain and every pgts load.
	Waiting int64 `json:"waiting_rows"`
	// Pending lists the partitions interrupted bulk loads made and filled
	// but have not attached: their rows are not visible yet.
	Pending []pendingJSON `json:"pending_bulk_partitions,omitempty"`
}

type pendingJSON struct {
	Name   string `json:"name"`
	LoadID string `json:"load_id"`
	From   string `json:"from"`
	To     string `json:"to"`
	Rows   int64  `json:"estimated_rows"`
	Bytes  int64  `json:"table_bytes"`
}

// addPending sets the Pending lists of the tables in out from the
// catalog of pending bulk partitions (of target only, unless it is "").
func addPending(ctx context.Context, db catalog.DB, target string, out []tableJSON) error {
	all, err := partition.PendingBulkPartitions(ctx, db, target)
	if err != nil {
		return err
	}
	for i := range out {
		for _, p := range all {
			if p.Target == out[i].Table {
				out[i].Pending = append(out[i].Pending, pendingJSON{Name: p.Name, LoadID: p.LoadID, From: p.Lower, To: p.Upper, Rows: p.Rows, Bytes: p.Bytes})
			}
		}
	}
	return nil
}

// writePendingNote says, under a table or the list, which bulk loads hold
// rows not yet visible and what to do.
func writePendingNote(w io.Writer, j tableJSON) {
	byLoad := map[string][]pendingJSON{}
	var ids []string
	for _, p := range j.Pending {
		if byLoad[p.LoadID] == nil {
			ids = append(ids, p.LoadID)
		}
		byLoad[p.LoadID] = append(byLoad[p.LoadID], p)
	}
	for _, id := range ids {
		var rows int64
		for _, p := range byLoad[id] {
			rows += p.Rows
		}
		n := int64(len(byLoad[id]))
		fmt.Fprintf(w, "%s: %d %s of the interrupted bulk load %q not attached yet (about %s rows, not visible): rerun that load (--load-id %s) to finish it, or drop them with: pgts loads abandon %s\n",
			j.Table, n, plural(n, "partition", "partitions"), id, commas(rows), id, id)
	}
}

// staleText says what was wrong with a stale catalog entry and what pgts
// did about it.
func staleText(e partition.StaleEntry) string {
	if !e.Removed {
		return "the table " + e.Reason + "; removing its catalog entry failed (run pgts as the table's owner)"
	}
	return "the table " + e.Reason + "; its catalog entry has been removed"
}

func describeTable(t *partition.Table, parts []partition.Partition, now time.Time, withParts bool) tableJSON {
	lo, hi := t.Window(now)
	j := tableJSON{Table: t.String(), TimeColumn: t.TimeColumn, TimeType: t.TimeType.String(), Interval: t.Interval.Human(),
		HashColumn: t.HashColumn, HashPartitions: t.HashPartitions, Premake: t.Premake,
		AcceptFrom: "unlimited", AcceptUntil: partition.FormatMicros(hi), PartitionCount: len(parts)}
	if t.Retention != nil {
		j.Retention = t.Retention.Human()
	}
	if lo > partition.MinMicros {
		j.AcceptFrom = partition.FormatMicros(lo)
	}
	for _, p := range parts {
		j.Rows += max(p.Rows, 0)
		j.TableBytes += p.TableBytes
		j.IndexBytes += p.IndexBytes
		if withParts {
			j.Partitions = append(j.Partitions, partitionJSON{Name: p.Name, From: partition.FormatMicros(p.Lo), To: partition.FormatMicros(p.Hi),
				Rows: p.Rows, TableBytes: p.TableBytes, IndexBytes: p.IndexBytes})
		}
	}
	return j
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// staleOf returns the stale catalog entry an error from Manager.Table
// reports, or nil.
func staleOf(err error) *partition.StaleEntry {
	var nf *partition.TableNotFoundError
	var nst *partition.NotSeriesTableError
	switch {
	case errors.As(err, &nf):
		return nf.Stale
	case errors.As(err, &nst):
		return nst.Stale
	}
	return nil
}

func newTableShowCmd(a *app) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:     "show NAME",
		Short:   "Show a series table: definition, window, partitions with bounds, rows and sizes",
		Example: "  pgts table show conditions\n  pgts table show public.conditions --json",
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			pool, m, err := a.manager(ctx)
			if err != nil {
				return err
			}
			defer pool.Close()
			t, err := m.Table(ctx, args[0])
			if err != nil {
				st, serr := shard.New(pool, a.log).Table(ctx, args[0])
				if serr != nil {
					return err
				}
				j := describeSharded(st)
				if asJSON {
					return writeJSON(a, j)
				}
				writeShardedShow(a.env.Stdout, j)
				return nil
			}
			parts, err := m.Partitions(ctx, t)
			if err != nil {
				return err
			}
			j := describeTable(t, parts, m.Now(), true)
			if j.Waiting, err = m.Waiting(ctx, t); err != nil {
				return err
			}
			one := []tableJSON{j}
			if err := addPending(ctx, pool, t.String(), one); err != nil {
				return err
			}
			j = one[0]
			if asJSON {
				return writeJSON(a, j)
			}
			w := a.env.Stdout
			fmt.Fprintf(w, "table:        %s\n", j.Table)
			fmt.Fprintf(w, "time column:  %s (%s)\n", j.TimeColumn, j.TimeType)
			fmt.Fprintf(w, "interval:     %s\n", j.Interval)
			if j.HashColumn != "" {
				fmt.Fprintf(w, "hash:         %s into %d partitions\n", j.HashColumn, j.HashPartitions)
			}
			fmt.Fprintf(w, "premake:      %d\n", j.Premake)
			fmt.Fprintf(w, "retention:    %s\n", orDash(j.Retention))
			fmt.Fprintf(w, "accepts:      %s to %s\n", j.AcceptFrom, j.AcceptUntil)
			fmt.Fprintf(w, "rows (est.):  %s\n", commas(j.Rows))
			fmt.Fprintf(w, "waiting:      %s %s in %s", commas(j.Waiting), plural(j.Waiting, "row", "rows"), partition.DefaultName(t.Name))
			if j.Waiting > 0 {
				fmt.Fprint(w, " (no partition yet; pgts maintain moves them)")
			}
			fmt.Fprintln(w)
			fmt.Fprintf(w, "size:         %s table, %s indexes\n\n", humanBytes(j.TableBytes), humanBytes(j.IndexBytes))
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "PARTITION\tFROM\tTO\tROWS (EST.)\tTABLE\tINDEXES")
			for _, p := range j.Partitions {
				rows := commas(p.Rows)
				if p.Rows < 0 {
					rows = "?"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", p.Name, p.From, p.To, rows, humanBytes(p.TableBytes), humanBytes(p.IndexBytes))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			if len(j.Pending) > 0 {
				fmt.Fprintln(w, "\npending bulk partitions (committed, not attached: their rows are not visible yet):")
				tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "PARTITION\tFROM\tTO\tROWS (EST.)\tTABLE\tLOAD ID")
				for _, p := range j.Pending {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", p.Name, p.From, p.To, commas(p.Rows), humanBytes(p.Bytes), p.LoadID)
				}
				if err := tw.Flush(); err != nil {
					return err
				}
				writePendingNote(w, j)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newTableDropCmd(a *app) *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "drop NAME",
		Short: "Drop a series table with all its partitions (needs --yes)",
		Long: `Drop a series table with all its partitions and its pgts catalog entry.
The ledgers of the loads into it (--load-id) go with it, and so do the
partitions interrupted --bulk loads filled but never attached, so a load
rerun into a table made again under the same name loads every row.

A sharded table (table create --shard-by) is dropped everywhere: first, in
one transaction, its parent, foreign partitions and NAME_buckets function
on the coordinator (nothing of it is visible there from then on), then its
NAME_pN series tables on each shard, then its catalog rows. A shard that
does not answer keeps its partitions; the command says which and exits 1,
and running it again once the shard answers finishes the drop.`,
		Example: "  pgts table drop conditions --yes",
		Args:    exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			pool, m, err := a.manager(ctx)
			if err != nil {
				return err
			}
			defer pool.Close()
			if done, err := dropShardedTable(ctx, a, pool, args[0], yes); done || err != nil {
				return err
			}
			t, err := m.Table(ctx, args[0])
			if stale := staleOf(err); stale != nil && stale.Removed {
				// Dropped or replaced outside pgts: removing the catalog
				// entry was all there was to do.
				a.log.Info("removed the stale catalog entry; no series table was left to drop", "table", stale.String(), "reason", "the table "+stale.Reason)
				return nil
			}
			if err != nil {
				return err
			}
			if !yes {
				return usagef("this drops %s and all its data; run again with --yes", t)
			}
			if err := m.Drop(ctx, t); err != nil {
				return err
			}
			a.log.Info("dropped series table", "table", t.String())
			return nil
		},
	}
	cmd.Flags().BoolVar(&yes, "yes", false, "confirm dropping the table and its data")
	return cmd
}
