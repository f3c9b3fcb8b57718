package rollup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/pgts/pgts/internal/catalog"
	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pg"
)

// Spec describes a new rollup.
type Spec struct {
	Schema, Name string // Schema "" means the current schema
	On           string // the series table or rollup aggregated
	Bucket       partition.Interval
	GroupBy      []string
	Aggs         []Agg
	Retention    *partition.Interval // of the data table; nil keeps every bucket
	RealTime     bool
}

// DataSuffix ends the name of a rollup's data table.
const DataSuffix = "_data"

// Validate checks what can be checked without a database.
func (s *Spec) Validate() error {
	if err := pg.CheckIdent("rollup", s.Name); err != nil {
		return err
	}
	if s.Schema != "" {
		if err := pg.CheckIdent("schema", s.Schema); err != nil {
			return err
		}
	}
	if s.On == "" {
		return errors.New("--on: name the series table (or rollup) to aggregate")
	}
	if len(s.Aggs) == 0 {
		return errors.New("--agg: give at least one aggregate")
	}
	if n := partition.MaxTableNameBytes(dataInterval(s.Bucket), 0); len(s.Name)+len(DataSuffix) > n {
		return fmt.Errorf("rollup name %q is %d bytes; its data table %s needs it to be at most %d", s.Name, len(s.Name), s.Name+DataSuffix, n-len(DataSuffix))
	}
	if s.Retention != nil && (s.Retention.Months < 0 || s.Retention.Days < 0 || s.Retention.Micros < 0 || *s.Retention == (partition.Interval{})) {
		return fmt.Errorf("--retention %s must be positive", s.Retention.Human())
	}
	return nil
}

// dataInterval is the partition interval of a data table: each partition
// holds some hundreds of buckets.
func dataInterval(bucket partition.Interval) partition.Interval {
	d := int64(bucket.Months)*30*dayMicros + int64(bucket.Days)*dayMicros + bucket.Micros
	switch {
	case d < 3600*secondMicros:
		return partition.Interval{Days: 1}
	case d < dayMicros:
		return partition.Interval{Days: 30}
	}
	return partition.Interval{Days: 3650}
}

func epochUnit(tt partition.TimeType) string {
	switch tt {
	case partition.EpochSeconds:
		return "s"
	case partition.EpochMillis:
		return "ms"
	case partition.EpochMicros:
		return "us"
	}
	return ""
}

// Create makes a rollup: its data table (a series table), the triggers
// recording invalidations on the source and its partitions, the catalog
// row and the view. Rows already in the source are materialized by the
// first refresh (the real-time view shows them at once).
func (rs *Rollups) Create(ctx context.Context, s Spec) (*Rollup, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	db := rs.cfg.DB
	if err := catalog.Migrate(ctx, db); err != nil {
		return nil, err
	}
	if s.Schema == "" {
		if err := db.QueryRow(ctx, `SELECT current_schema()::text`).Scan(&s.Schema); err != nil {
			return nil, fmt.Errorf("finding the current schema: %w", err)
		}
	}
	if s.GroupBy == nil {
		s.GroupBy = []string{}
	}
	r := &Rollup{Schema: s.Schema, Name: s.Name, Bucket: s.Bucket, GroupBy: s.GroupBy, Aggs: s.Aggs,
		RealTime: s.RealTime, DataName: s.Name + DataSuffix}
	if _, err := rs.Get(ctx, pg.QuoteQualified(s.Schema, s.Name)); err == nil {
		return nil, fmt.Errorf("rollup %s already exists (pgts rollup show %s)", r, r)
	}
	srcSchema, srcName, err := resolve(ctx, db, s.On)
	if err != nil {
		return nil, fmt.Errorf("--on: %w", err)
	}
	if parent, err := rs.Get(ctx, pg.QuoteQualified(srcSchema, srcName)); err == nil {
		r.Parent = parent
		r.SourceSchema, r.SourceName = parent.Schema, parent.DataName
		r.TimeColumn, r.TimeType = "bucket", parent.TimeType
		if err := rs.readParentTypes(ctx, r); err != nil {
			return nil, err
		}
		for _, g := range r.GroupBy {
			if !slices.Contains(parent.GroupBy, g) {
				return nil, fmt.Errorf("--group-by: rollup %s is not grouped by %q (a rollup on a rollup groups by some of its columns)", parent, g)
			}
		}
		for _, a := range r.Aggs {
			if _, err := parentAgg(a, parent.Aggs); err != nil {
				return nil, err
			}
		}
	} else if !errors.As(err, new(*NotFoundError)) {
		return nil, err
	} else {
		t, err := rs.cfg.Manager.Table(ctx, pg.QuoteQualified(srcSchema, srcName))
		if err != nil {
			return nil, fmt.Errorf("--on: %w", err)
		}
		r.SourceSchema, r.SourceName, r.TimeColumn, r.TimeType = t.Schema, t.Name, t.TimeColumn, t.TimeType
	}
	if r.ts, err = newTimeSQL(r.TimeType, r.Bucket); err != nil {
		return nil, fmt.Errorf("--bucket: %w", err)
	}
	if err := r.checkNames(); err != nil {
		return nil, err
	}
	var exists bool
	if err := db.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL OR to_regclass($2) IS NOT NULL`, r.view(), r.data()).Scan(&exists); err != nil {
		return nil, err
	}
	if exists {
		return nil, fmt.Errorf("%s or %s already exists: choose another rollup name", r.view(), r.data())
	}

	// The data table: made plain with the types the states have, then
	// turned into a series table partitioned by bucket.
	if _, err := db.Exec(ctx, "CREATE TABLE "+r.data()+" AS "+r.aggSelect(r.source()+" r", "")+" WITH NO DATA"); err != nil {
		return nil, fmt.Errorf("rollup %s: %w", r, err)
	}
	spec := partition.CreateSpec{Schema: r.Schema, Name: r.DataName, Like: r.data(), TimeColumn: "bucket",
		EpochUnit: epochUnit(r.TimeType), Interval: dataInterval(r.Bucket), Premake: 1, Retention: s.Retention}
	if len(r.GroupBy) > 0 {
		cols := ""
		for _, g := range r.GroupBy {
			cols += pg.QuoteIdent(g) + ", "
		}
		spec.ExtraIndexes = []string{cols + "bucket"}
	}
	data, err := rs.cfg.Manager.Create(ctx, spec)
	if err != nil {
		_, _ = db.Exec(ctx, "DROP TABLE IF EXISTS "+r.data())
		return nil, fmt.Errorf("rollup %s: making its data table: %w", r, err)
	}
	if err := rs.install(ctx, r); err != nil {
		if derr := rs.cfg.Manager.Drop(ctx, data); derr != nil {
			rs.log.Warn("dropping the data table of a rollup not created", "table", data.String(), "err", derr)
		}
		return nil, err
	}
	return rs.Get(ctx, pg.QuoteQualified(r.Schema, r.Name))
}

// install records r in the catalog and makes its trigger function,
// triggers, watermark and view, in one transaction.
func (rs *Rollups) install(ctx context.Context, r *Rollup) error {
	aggs, err := json.Marshal(r.Aggs)
	if err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, rs.cfg.DB, func(tx pgx.Tx) error {
		var parent *int
		if r.Parent != nil {
			parent = &r.Parent.ID
		}
		err := tx.QueryRow(ctx, `INSERT INTO pgts.rollup (rollup_schema, rollup_name, source_schema, source_name, source_rollup,
				time_column, time_type, bucket, group_by, aggs, real_time, data_name, watermark)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11, $12, 0) RETURNING id`,
			r.Schema, r.Name, r.SourceSchema, r.SourceName, parent, r.TimeColumn, timeTypeNames[r.TimeType],
			pgtype.Interval{Months: r.Bucket.Months, Days: r.Bucket.Days, Microseconds: r.Bucket.Micros, Valid: true},
			r.GroupBy, string(aggs), r.RealTime, r.DataName).Scan(&r.ID)
		if err != nil {
			return fmt.Errorf("recording rollup %s: %w", r, err)
		}
		if _, err := tx.Exec(ctx, r.triggerFunction()); err != nil {
			return fmt.Errorf("rollup %s: making its trigger function: %w", r, err)
		}
		if _, err := tx.Exec(ctx, r.relFunction()); err != nil {
			return fmt.Errorf("rollup %s: making its function for attached partitions: %w", r, err)
		}
		// CREATE TRIGGER waits for the source's writers under way; every
		// later write records its invalidations, so the watermark read
		// after it misses nothing.
		if _, err := tx.Exec(ctx, `SELECT pgts.rollup_add_triggers($1, relid) FROM pg_partition_tree($2::regclass)`, r.ID, r.source()); err != nil {
			return fmt.Errorf("rollup %s: making its triggers on %s: %w", r, r.source(), err)
		}
		t := "r." + pg.QuoteIdent(r.TimeColumn)
		now := rs.cfg.Manager.Now().UnixMicro()
		if _, err := tx.Exec(ctx, fmt.Sprintf(`UPDATE pgts.rollup SET watermark = coalesce((SELECT %s FROM %s r), %s) WHERE id = $2`,
			r.ts.us(r.ts.bucket("min("+t+")")), r.source(), r.ts.us(r.ts.bucket(r.ts.from("$1::bigint")))), now, r.ID); err != nil {
			return fmt.Errorf("rollup %s: setting its watermark: %w", r, err)
		}
		return makeView(ctx, tx, r)
	})
}

// makeView makes (or replaces) r's view over its data table as it is in
// tx, with its comment.
func makeView(ctx context.Context, tx pgx.Tx, r *Rollup) error {
	if err := readKeyTypes(ctx, tx, r); err != nil {
		return err
	}
	if err := readStateTypes(ctx, tx, r); err != nil {
		return err
	}
	floats := map[string]bool{}
	for _, a := range r.Aggs {
		if a.Func != Avg {
			continue
		}
		var typ string
		if err := tx.QueryRow(ctx, `SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = $1::regclass AND attname = $2`,
			r.data(), stateColumns(a)[0]).Scan(&typ); err != nil {
			return fmt.Errorf("rollup %s: reading its column types: %w", r, err)
		}
		floats[a.Name] = typ == "double precision" || typ == "real"
	}
	if r.RealTime {
		for _, f := range r.realTimeFunctions() {
			if _, err := tx.Exec(ctx, f); err != nil {
				return fmt.Errorf("rollup %s: making the functions of its real-time view: %w", r, err)
			}
		}
	}
	if _, err := tx.Exec(ctx, r.viewSQL(floats)); err != nil {
		return fmt.Errorf("rollup %s: making its view: %w", r, err)
	}
	_, err := tx.Exec(ctx, fmt.Sprintf("COMMENT ON VIEW %s IS %s", r.view(),
		pg.QuoteLiteral(fmt.Sprintf("Rollup of %s by %s (pgts rollup show %s).", r.source(), r.Bucket.Human(), r))))
	return err
}

// Drop removes a rollup: its view, triggers, trigger function,
// invalidations, catalog row and data table. A rollup that another is
// built on is refused.
func (rs *Rollups) Drop(ctx context.Context, r *Rollup) error {
	err := pgx.BeginFunc(ctx, rs.cfg.DB, func(tx pgx.Tx) error {
		var child *string
		if err := tx.QueryRow(ctx, `SELECT min(rollup_schema || '.' || rollup_name) FROM pgts.rollup WHERE source_rollup = $1`, r.ID).Scan(&child); err != nil {
			return err
		}
		if child != nil {
			return fmt.Errorf("rollup %s is the source of rollup %s: drop that first", r, *child)
		}
		if _, err := tx.Exec(ctx, "DROP VIEW IF EXISTS "+r.view()); err != nil {
			return fmt.Errorf("dropping rollup %s: %w", r, err)
		}
		rows, err := tx.Query(ctx, `SELECT relid::text FROM pg_partition_tree(to_regclass($1))`, r.source())
		if err != nil {
			return err
		}
		rels, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		for _, rel := range rels {
			for _, suffix := range []string{"_ins", "_upd", "_del", "_w"} {
				if _, err := tx.Exec(ctx, fmt.Sprintf("DROP TRIGGER IF EXISTS %s ON %s",
					pg.QuoteIdent(fmt.Sprintf("pgts_rollup_%d%s", r.ID, suffix)), rel)); err != nil {
					return fmt.Errorf("dropping rollup %s: %w", r, err)
				}
			}
		}
		if _, err := tx.Exec(ctx, "DROP FUNCTION IF EXISTS "+r.functionName()+"(); DROP FUNCTION IF EXISTS "+r.relFunctionName()+"(regclass);"+r.dropRealTimeFunctions(),
			pgx.QueryExecModeSimpleProtocol); err != nil {
			return fmt.Errorf("dropping rollup %s: %w", r, err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM pgts.rollup_invalidation WHERE rollup_id = $1`, r.ID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM pgts.rollup_invalidation_range WHERE rollup_id = $1`, r.ID); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM pgts.rollup WHERE id = $1`, r.ID)
		return err
	})
	if err != nil {
		return err
	}
	t, err := rs.cfg.Manager.Table(ctx, r.data())
	if err != nil {
		var nf *partition.TableNotFoundError
		if errors.As(err, &nf) {
			return nil
		}
		return err
	}
	return rs.cfg.Manager.Drop(ctx, t)
}
