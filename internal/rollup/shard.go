package rollup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgts/pgts/internal/catalog"
	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pg"
	"github.com/pgts/pgts/internal/shard"
)

// Rollups of sharded tables. Each shard keeps an ordinary rollup of each
// hash partition it holds, refreshed there from its own rows; the
// coordinator reads their partial states through postgres_fdw and
// combines them (sums of sums and counts, min of mins, first and last by
// their time columns), which is exact:
//
//	coordinator                                      shard a
//	NAME  (view: combines, GROUP BY bucket, keys)
//	├── NAME_p0_states FOREIGN ──postgres_fdw──>  NAME_p0_states (view: states of NAME_p0,
//	│                                              real-time parts included)
//	│                                              NAME_p0 (rollup of m_p0) ── NAME_p0_data
//	└── NAME_p1_states FOREIGN ───────────────────────────────────> shard b ...
//
// A sharded rollup may be built on another (daily from hourly): on each
// shard, NAME_pK is built on the other's rollup of the same partition.

// StatesSuffix ends the name of the view of a partition rollup's partial
// states on its shard (and of its foreign table on the coordinator).
const StatesSuffix = "_states"

// ErrNotShardedSource says --on names neither a sharded table nor a
// sharded rollup (create an ordinary rollup).
var ErrNotShardedSource = errors.New("not a sharded table or rollup")

// ShardedRollup is a rollup of a sharded table as the coordinator records
// it.
type ShardedRollup struct {
	ID                     int
	Schema, Name           string
	TableSchema, TableName string         // the sharded table
	Parent                 *ShardedRollup // the sharded rollup it is built on, or nil
	Bucket                 partition.Interval
	GroupBy                []string
	Aggs                   []Agg
	RealTime               bool
	Retention              *partition.Interval
	CreatedAt              time.Time
}

// String is schema.name.
func (s *ShardedRollup) String() string { return s.Schema + "." + s.Name }

func (s *ShardedRollup) view() string { return pg.QuoteQualified(s.Schema, s.Name) }

// PartitionRollup is the name of the rollup of partition p on its shard.
func (s *ShardedRollup) PartitionRollup(p int) string { return shard.PartitionName(s.Name, p) }

func (s *ShardedRollup) states(p int) string {
	return pg.QuoteQualified(s.Schema, s.PartitionRollup(p)+StatesSuffix)
}

// Sharded creates, lists, refreshes and drops rollups of sharded tables
// from the coordinator. Safe for concurrent use.
type Sharded struct {
	rs  *Rollups // on the coordinator
	c   *shard.Coordinator
	log *slog.Logger
}

// NewSharded returns Sharded over rs (on the coordinator's database) and
// c (the same database's shards).
func NewSharded(rs *Rollups, c *shard.Coordinator) *Sharded {
	return &Sharded{rs: rs, c: c, log: rs.log}
}

const selectSharded = `SELECT id, rollup_schema, rollup_name, table_schema, table_name, source_rollup, bucket, group_by,
	aggs::text, real_time, retention, created_at FROM pgts.sharded_rollup`

func (s *Sharded) scan(ctx context.Context, row pgx.Row) (*ShardedRollup, error) {
	r := &ShardedRollup{}
	var parent *int
	var aggs string
	var iv pgtype.Interval
	var ret pgtype.Interval
	if err := row.Scan(&r.ID, &r.Schema, &r.Name, &r.TableSchema, &r.TableName, &parent, &iv, &r.GroupBy, &aggs, &r.RealTime,
		&ret, &r.CreatedAt); err != nil {
		return nil, err
	}
	r.Bucket = partition.Interval{Months: iv.Months, Days: iv.Days, Micros: iv.Microseconds}
	if ret.Valid {
		r.Retention = &partition.Interval{Months: ret.Months, Days: ret.Days, Micros: ret.Microseconds}
	}
	if err := json.Unmarshal([]byte(aggs), &r.Aggs); err != nil {
		return nil, fmt.Errorf("reading sharded rollup %s: %w", r, err)
	}
	if parent != nil {
		p, err := s.scan(ctx, s.rs.cfg.DB.QueryRow(ctx, selectSharded+` WHERE id = $1`, *parent))
		if err != nil {
			return nil, fmt.Errorf("reading the rollup %s is built on: %w", r, err)
		}
		r.Parent = p
	}
	return r, nil
}

// Get reads the sharded rollup named name ("schema.name" or a name on the
// search path); a name that is not one gives a *NotFoundError.
func (s *Sharded) Get(ctx context.Context, name string) (*ShardedRollup, error) {
	if err := catalog.Migrate(ctx, s.rs.cfg.DB); err != nil {
		return nil, err
	}
	schema, rel, err := pg.SplitQualified(name)
	if err != nil {
		return nil, err
	}
	r, err := s.scan(ctx, s.rs.cfg.DB.QueryRow(ctx, selectSharded+` WHERE rollup_name = $1 AND rollup_schema = coalesce(nullif($2, ''),
		(SELECT n FROM unnest(current_schemas(false)) n WHERE EXISTS (SELECT 1 FROM pgts.sharded_rollup WHERE rollup_schema = n AND rollup_name = $1) LIMIT 1))`,
		rel, schema))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, &NotFoundError{Name: name}
	}
	return r, err
}

// List reads the sharded rollups in the order they were made (a rollup
// after the one it is built on).
func (s *Sharded) List(ctx context.Context) ([]*ShardedRollup, error) {
	if err := catalog.Migrate(ctx, s.rs.cfg.DB); err != nil {
		return nil, err
	}
	rows, err := s.rs.cfg.DB.Query(ctx, `SELECT id FROM pgts.sharded_rollup ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("listing sharded rollups: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		return nil, fmt.Errorf("listing sharded rollups: %w", err)
	}
	out := make([]*ShardedRollup, 0, len(ids))
	for _, id := range ids {
		r, err := s.scan(ctx, s.rs.cfg.DB.QueryRow(ctx, selectSharded+` WHERE id = $1`, id))
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// resolveOn finds the sharded table (and the sharded rollup) on names.
func (s *Sharded) resolveOn(ctx context.Context, on string) (*shard.Table, *ShardedRollup, error) {
	parent, err := s.Get(ctx, on)
	if err == nil {
		t, err := s.c.Table(ctx, pg.QuoteQualified(parent.TableSchema, parent.TableName))
		return t, parent, err
	}
	if !errors.As(err, new(*NotFoundError)) {
		return nil, nil, err
	}
	t, err := s.c.Table(ctx, on)
	if errors.Is(err, shard.ErrNotSharded) {
		return nil, nil, fmt.Errorf("--on %q: %w", on, ErrNotShardedSource)
	}
	return t, nil, err
}

// table reads the sharded table of r with its current placement.
func (s *Sharded) table(ctx context.Context, r *ShardedRollup) (*shard.Table, error) {
	t, err := s.c.Table(ctx, pg.QuoteQualified(r.TableSchema, r.TableName))
	if err != nil {
		return nil, fmt.Errorf("sharded rollup %s: its table: %w", r, err)
	}
	return t, nil
}

// onShards calls f on each shard holding partitions of t, with Rollups
// on that shard and the partitions it holds. A shard that cannot be
// reached, or f's error, is reported naming the shard; the other shards
// are still visited when keepGoing.
func (s *Sharded) onShards(ctx context.Context, t *shard.Table, keepGoing bool,
	f func(sh shard.Shard, pool *pgxpool.Pool, srs *Rollups, parts []int) error) error {
	shards, err := s.c.List(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, sh := range shards {
		var parts []int
		for p, name := range t.Placement {
			if name == sh.Name {
				parts = append(parts, p)
			}
		}
		if len(parts) == 0 {
			continue
		}
		err := func() error {
			pool, err := pg.NewPool(ctx, sh.ConnString(), 2)
			if err == nil {
				if err = pool.Ping(ctx); err != nil {
					pool.Close()
				}
			}
			if err != nil {
				return fmt.Errorf("connecting to shard %q (%s): %w", sh.Name, sh.Address(), err)
			}
			defer pool.Close()
			cfg := s.rs.cfg
			cfg.DB, cfg.Manager, cfg.Log = pool, partition.NewManager(pool, s.log.With("shard", sh.Name), s.rs.cfg.Manager.Now), s.log.With("shard", sh.Name)
			srs, err := New(cfg)
			if err != nil {
				return err
			}
			if err := f(sh, pool, srs, parts); err != nil {
				return fmt.Errorf("shard %q: %w", sh.Name, err)
			}
			return nil
		}()
		if err != nil {
			errs = append(errs, err)
			if !keepGoing || ctx.Err() != nil {
				break
			}
		}
	}
	return errors.Join(errs...)
}

// Create makes a rollup of the sharded table (or sharded rollup) spec.On:
// the rollup of each partition on its shard with the view of its partial
// states, then on the coordinator, in one transaction, the foreign tables
// over those views, the view combining them and the catalog row. Until
// that transaction commits the coordinator shows nothing: a shard that is
// down fails the create, and the same create again completes it
// (partition rollups already made are kept). spec.On naming neither a
// sharded table nor a sharded rollup gives ErrNotShardedSource.
func (s *Sharded) Create(ctx context.Context, spec Spec) (*ShardedRollup, error) {
	if err := catalog.Migrate(ctx, s.rs.cfg.DB); err != nil {
		return nil, err
	}
	t, parent, err := s.resolveOn(ctx, spec.On)
	if err != nil {
		return nil, err
	}
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if !t.Ready || t.Dropping {
		return nil, fmt.Errorf("sharded table %s is not ready (being created or dropped)", t)
	}
	longest := shard.PartitionName(spec.Name, t.Partitions-1)
	probe := spec
	probe.Name = longest
	if err := probe.Validate(); err != nil {
		return nil, fmt.Errorf("rollup name %q is too long for its partitions' rollups: %w", spec.Name, err)
	}
	if err := pg.CheckIdent("rollup", longest+StatesSuffix); err != nil {
		return nil, fmt.Errorf("rollup name %q is too long for its partitions' views: %w", spec.Name, err)
	}
	if spec.Schema == "" {
		if err := s.rs.cfg.DB.QueryRow(ctx, `SELECT current_schema()::text`).Scan(&spec.Schema); err != nil {
			return nil, err
		}
	}
	if spec.GroupBy == nil {
		spec.GroupBy = []string{}
	}
	sr := &ShardedRollup{Schema: spec.Schema, Name: spec.Name, TableSchema: t.Schema, TableName: t.Name, Parent: parent,
		Bucket: spec.Bucket, GroupBy: spec.GroupBy, Aggs: spec.Aggs, RealTime: spec.RealTime, Retention: spec.Retention}
	if _, err := s.Get(ctx, sr.String()); err == nil {
		return nil, fmt.Errorf("rollup %s already exists (pgts rollup show %s)", sr, sr)
	}
	if _, err := s.rs.Get(ctx, pg.QuoteQualified(sr.Schema, sr.Name)); err == nil {
		return nil, fmt.Errorf("rollup %s already exists (pgts rollup show %s)", sr, sr)
	}
	var exists bool
	if err := s.rs.cfg.DB.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, sr.view()).Scan(&exists); err != nil {
		return nil, err
	}
	if exists {
		return nil, fmt.Errorf("%s already exists on the coordinator: choose another rollup name", sr.view())
	}
	// The states' columns and types, read from the first partition's view.
	var cols, types []string
	err = s.onShards(ctx, t, false, func(sh shard.Shard, pool *pgxpool.Pool, srs *Rollups, parts []int) error {
		if _, err := pool.Exec(ctx, "CREATE SCHEMA IF NOT EXISTS "+pg.QuoteIdent(sr.Schema)); err != nil {
			return err
		}
		for _, p := range parts {
			ps := spec
			ps.Name = sr.PartitionRollup(p)
			ps.On = pg.QuoteQualified(t.Schema, shard.PartitionName(t.Name, p))
			if parent != nil {
				ps.On = pg.QuoteQualified(parent.Schema, parent.PartitionRollup(p))
			}
			r, err := srs.Get(ctx, pg.QuoteQualified(ps.Schema, ps.Name))
			if errors.As(err, new(*NotFoundError)) {
				r, err = srs.Create(ctx, ps) // a retry keeps those made
			}
			if err != nil {
				return err
			}
			if err := sr.makeStates(ctx, pool, r, p, &cols, &types); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("creating sharded rollup %s (the coordinator shows nothing yet; run the same command again once every shard answers): %w", sr, err)
	}
	aggs, err := json.Marshal(sr.Aggs)
	if err != nil {
		return nil, err
	}
	err = pgx.BeginFunc(ctx, s.rs.cfg.DB, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, LockKey, "sharded "+sr.String()); err != nil {
			return err
		}
		if err := makeCoordinatorView(ctx, tx, sr, t, cols, types); err != nil {
			return err
		}
		var parentID *int
		if parent != nil {
			parentID = &parent.ID
		}
		var ret *pgtype.Interval
		if sr.Retention != nil {
			ret = &pgtype.Interval{Months: sr.Retention.Months, Days: sr.Retention.Days, Microseconds: sr.Retention.Micros, Valid: true}
		}
		_, err := tx.Exec(ctx, `INSERT INTO pgts.sharded_rollup (rollup_schema, rollup_name, table_schema, table_name, source_rollup,
				bucket, group_by, aggs, real_time, retention) VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9, $10)`,
			sr.Schema, sr.Name, t.Schema, t.Name, parentID,
			pgtype.Interval{Months: sr.Bucket.Months, Days: sr.Bucket.Days, Microseconds: sr.Bucket.Micros, Valid: true},
			sr.GroupBy, string(aggs), sr.RealTime, ret)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("creating sharded rollup %s on the coordinator: %w", sr, err)
	}
	return s.Get(ctx, sr.String())
}

// makeCoordinatorView makes, in tx, the foreign tables over the states
// views of sr's partitions (columns cols of types types) and the view
// combining them.
func makeCoordinatorView(ctx context.Context, tx pgx.Tx, sr *ShardedRollup, t *shard.Table, cols, types []string) error {
	defs := make([]string, len(cols))
	typeOf := map[string]string{}
	for i := range cols {
		defs[i] = pg.QuoteIdent(cols[i]) + " " + types[i]
		typeOf[cols[i]] = types[i]
	}
	arms := make([]string, len(t.Placement))
	for p, shardName := range t.Placement {
		if _, err := tx.Exec(ctx, fmt.Sprintf("CREATE FOREIGN TABLE %s (%s) SERVER %s OPTIONS (schema_name %s, table_name %s)",
			sr.states(p), strings.Join(defs, ", "), pg.QuoteIdent(shard.ServerName(shardName)),
			pg.QuoteLiteral(sr.Schema), pg.QuoteLiteral(sr.PartitionRollup(p)+StatesSuffix))); err != nil {
			return fmt.Errorf("making the foreign table of partition %d (shard %q): %w", p, shardName, err)
		}
		arms[p] = "SELECT * FROM " + sr.states(p)
	}
	floats := map[string]bool{}
	for _, a := range sr.Aggs {
		typ := typeOf[stateColumns(a)[0]]
		floats[a.Name] = typ == "double precision" || typ == "real"
	}
	combined := combineSelect("("+strings.Join(arms, " UNION ALL ")+") r", sr.GroupBy, sr.Aggs, typeOf)
	if _, err := tx.Exec(ctx, fmt.Sprintf("CREATE VIEW %s AS %s", sr.view(), finalSelect(combined, sr.GroupBy, sr.Aggs, floats))); err != nil {
		return fmt.Errorf("making the view %s: %w", sr.view(), err)
	}
	_, err := tx.Exec(ctx, fmt.Sprintf("COMMENT ON VIEW %s IS %s", sr.view(), pg.QuoteLiteral(fmt.Sprintf(
		"Rollup of the sharded table %s.%s by %s, combined from its shards (pgts rollup show %s).", t.Schema, t.Name, sr.Bucket.Human(), sr))))
	return err
}

// statesColumns reads the columns and types of a states view on a shard.
func statesColumns(ctx context.Context, pool *pgxpool.Pool, view string) (cols, types []string, err error) {
	rows, err := pool.Query(ctx, `SELECT attname::text, format_type(atttypid, atttypmod) FROM pg_attribute
		WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum`, view)
	if err != nil {
		return nil, nil, err
	}
	var c, typ string
	_, err = pgx.ForEachRow(rows, []any{&c, &typ}, func() error {
		cols, types = append(cols, c), append(types, typ)
		return nil
	})
	return cols, types, err
}

// combineSelect combines the partial states of the rows of from (aliased
// r, with the data table's columns) per bucket and group key; types are
// the state columns' types, which sums keep.
func combineSelect(from string, groupBy []string, aggs []Agg, types map[string]string) string {
	q := pg.QuoteIdent
	var b strings.Builder
	b.WriteString("SELECT r.bucket AS bucket")
	for _, g := range groupBy {
		b.WriteString(", r." + q(g) + " AS " + q(g))
	}
	for _, a := range aggs {
		exprs := combinedStates(a, a)
		if typ := types[stateColumns(a)[0]]; typ != "" && (a.Func == Sum || a.Func == Avg) {
			exprs[0] += "::" + typ
		}
		for i, c := range stateColumns(a) {
			b.WriteString(", " + exprs[i] + " AS " + q(c))
		}
	}
	b.WriteString(" FROM " + from + " GROUP BY r.bucket")
	for _, g := range groupBy {
		b.WriteString(", r." + q(g))
	}
	return b.String()
}

// Refresh refreshes the rollup of every partition on its shard (and
// applies premake and retention to their data tables, which the shards'
// maintenance does not see). A shard that is down is reported, naming
// it, and the others are still refreshed.
func (s *Sharded) Refresh(ctx context.Context, r *ShardedRollup) (Stats, error) {
	return s.refresh(ctx, r, nil)
}

// Invalidate records, on every shard, every (bucket, key) pair of r's
// partition rollups between from and to (micros), then refreshes them:
// pgts rollup refresh --from --to.
func (s *Sharded) Invalidate(ctx context.Context, r *ShardedRollup, from, to int64) (Stats, error) {
	return s.refresh(ctx, r, &[2]int64{from, to})
}

func (s *Sharded) refresh(ctx context.Context, r *ShardedRollup, rng *[2]int64) (Stats, error) {
	start := time.Now()
	total := Stats{Rollup: r.String()}
	t, err := s.table(ctx, r)
	if err != nil {
		return total, err
	}
	err = s.onShards(ctx, t, true, func(sh shard.Shard, pool *pgxpool.Pool, srs *Rollups, parts []int) error {
		for _, p := range parts {
			pr, err := srs.Get(ctx, pg.QuoteQualified(r.Schema, r.PartitionRollup(p)))
			if err != nil {
				return err
			}
			if rng != nil {
				if _, err := srs.Invalidate(ctx, pr, rng[0], rng[1]); err != nil {
					return err
				}
			}
			st, err := srs.Refresh(ctx, pr)
			if err != nil {
				return err
			}
			total.Buckets += st.Buckets
			total.Pairs += st.Pairs
			total.Frozen += st.Frozen
			total.RowsWritten += st.RowsWritten
			total.Transactions += st.Transactions
			total.Watermark = max(total.Watermark, st.Watermark)
			data, err := srs.cfg.Manager.Table(ctx, pr.data())
			if err != nil {
				return err
			}
			for _, res := range srs.cfg.Manager.Maintain(ctx, []*partition.Table{data}) {
				if res.Err != nil {
					return res.Err
				}
			}
		}
		return nil
	})
	total.Took = time.Since(start)
	if err != nil {
		return total, fmt.Errorf("refreshing sharded rollup %s: %w", r, err)
	}
	return total, nil
}

// Drop removes a sharded rollup: the rollup of each partition on its
// shard (with its states view), then on the coordinator the view, the
// foreign tables and the catalog row. A shard that is down fails the
// drop, naming it; the same drop again completes it. A sharded rollup
// another is built on is refused.
func (s *Sharded) Drop(ctx context.Context, r *ShardedRollup) error {
	var child *string
	if err := s.rs.cfg.DB.QueryRow(ctx, `SELECT min(rollup_schema || '.' || rollup_name) FROM pgts.sharded_rollup WHERE source_rollup = $1`,
		r.ID).Scan(&child); err != nil {
		return err
	}
	if child != nil {
		return fmt.Errorf("rollup %s is the source of rollup %s: drop that first", r, *child)
	}
	t, err := s.table(ctx, r)
	if err != nil {
		return err
	}
	err = s.onShards(ctx, t, true, func(sh shard.Shard, pool *pgxpool.Pool, srs *Rollups, parts []int) error {
		for _, p := range parts {
			if _, err := pool.Exec(ctx, "DROP VIEW IF EXISTS "+r.states(p)); err != nil {
				return err
			}
			pr, err := srs.Get(ctx, pg.QuoteQualified(r.Schema, r.PartitionRollup(p)))
			if errors.As(err, new(*NotFoundError)) {
				continue
			}
			if err != nil {
				return err
			}
			if err := srs.Drop(ctx, pr); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("dropping sharded rollup %s (run the same drop again once every shard answers): %w", r, err)
	}
	return pgx.BeginFunc(ctx, s.rs.cfg.DB, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "DROP VIEW IF EXISTS "+r.view()); err != nil {
			return fmt.Errorf("dropping rollup %s: %w", r, err)
		}
		for p := range t.Partitions {
			if _, err := tx.Exec(ctx, "DROP FOREIGN TABLE IF EXISTS "+r.states(p)); err != nil {
				return fmt.Errorf("dropping rollup %s: %w", r, err)
			}
		}
		_, err := tx.Exec(ctx, `DELETE FROM pgts.sharded_rollup WHERE id = $1`, r.ID)
		return err
	})
}

// OnTable reports whether r aggregates the sharded table schema.name.
func (r *ShardedRollup) OnTable(schema, name string) bool {
	return r.TableSchema == schema && r.TableName == name
}

// makeStates makes (or remakes) the view of the partial states of r, the
// rollup of partition p on its shard, and reads the view's columns into
// cols and types when they are not read yet.
func (s *ShardedRollup) makeStates(ctx context.Context, pool *pgxpool.Pool, r *Rollup, p int, cols, types *[]string) error {
	if err := readKeyTypes(ctx, pool, r); err != nil {
		return err
	}
	if err := readStateTypes(ctx, pool, r); err != nil {
		return err
	}
	if r.RealTime {
		for _, f := range r.realTimeFunctions() {
			if _, err := pool.Exec(ctx, f); err != nil {
				return fmt.Errorf("making the functions of the real-time states of %s: %w", r, err)
			}
		}
	}
	if _, err := pool.Exec(ctx, fmt.Sprintf("CREATE OR REPLACE VIEW %s AS %s", s.states(p), r.statesSQL())); err != nil {
		return fmt.Errorf("making the view of the states of %s: %w", r, err)
	}
	if *cols != nil {
		return nil
	}
	var err error
	*cols, *types, err = statesColumns(ctx, pool, s.states(p))
	return err
}
