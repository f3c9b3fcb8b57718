// Package rollup keeps rollups (continuous aggregates) of series tables:
// per time bucket and group key, partial aggregate states in a series
// table of their own, refreshed incrementally from the (key, bucket) pairs
// written since the last refresh, and a view that shows the final values.
//
// Glossary:
//
//	source        the series table a rollup aggregates (or the data table
//	              of another rollup: daily from hourly)
//	data table    the series table NAME_data holding one row of partial
//	              states per bucket and group key (bucket is its time column)
//	view          NAME: bucket, the group-by columns, one column per aggregate
//	invalidation  a row of pgts.rollup_invalidation: (bucket, group key)
//	              written since the rollup last rewrote that bucket
//	watermark     buckets starting before it are materialized; later ones
//	              are not yet (the real-time view aggregates them on the fly)
//	frozen        buckets starting before the source's retention cutoff:
//	              their raw rows may be gone, so the rollup keeps them as
//	              they are and ignores writes to them
//
// Every writer records invalidations in its own transaction: statement
// triggers with transition tables (one row per statement, bucket and key,
// on the source and on each of its partitions, since PostgreSQL fires a
// partitioned table's statement triggers only for statements naming it).
// A refresh deletes the invalidations it handles in the transaction that
// rewrites their buckets, so it is exactly-once and resumable after a
// crash; it takes no lock a writer of the source waits for.
package rollup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/pgts/pgts/internal/catalog"
	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pg"
)

// LockKey is the first key of the advisory lock a refresh of a rollup
// holds in each of its transactions; the second is the rollup's ID.
const LockKey = catalog.LockKey + 2

// Config is what a Rollups needs.
type Config struct {
	DB      catalog.DB
	Manager *partition.Manager // on DB; its clock is the refresh's
	Log     *slog.Logger
	// PairsPerTx bounds the (bucket, key) pairs a refresh rewrites in one
	// transaction; BucketsPerTx the buckets it materializes past the
	// watermark in one transaction.
	PairsPerTx   int
	BucketsPerTx int
	// BeforeCommit, when set, is called before each refresh transaction
	// commits (tests kill the process there).
	BeforeCommit func()
}

// DefaultConfig returns a Config with the default bounds.
func DefaultConfig(db catalog.DB, m *partition.Manager, log *slog.Logger) Config {
	return Config{DB: db, Manager: m, Log: log, PairsPerTx: 1000, BucketsPerTx: 100}
}

// Validate checks the config.
func (c *Config) Validate() error {
	switch {
	case c.DB == nil || c.Manager == nil:
		return errors.New("rollup config: DB and Manager are required")
	case c.PairsPerTx < 1 || c.BucketsPerTx < 1:
		return errors.New("rollup config: PairsPerTx and BucketsPerTx must be at least 1")
	}
	return nil
}

// Rollups creates, lists, refreshes and drops rollups. It is safe for
// concurrent use; many processes may refresh at once (a rollup's refresh
// transactions are serialised by an advisory lock).
type Rollups struct {
	cfg Config
	log *slog.Logger
}

func (rs *Rollups) beforeCommit() {
	if rs.cfg.BeforeCommit != nil {
		rs.cfg.BeforeCommit()
	}
}

// New returns Rollups on cfg.
func New(cfg Config) (*Rollups, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Rollups{cfg: cfg, log: log}, nil
}

// Rollup is a rollup's definition and state, as the catalog has it.
type Rollup struct {
	ID                       int
	Schema, Name             string
	SourceSchema, SourceName string
	Parent                   *Rollup // the rollup whose data table is the source, or nil
	TimeColumn               string  // of the source
	TimeType                 partition.TimeType
	Bucket                   partition.Interval
	GroupBy                  []string
	Aggs                     []Agg
	RealTime                 bool
	DataName                 string // the data table, in Schema
	Watermark                int64  // micros: buckets starting before it are materialized
	FrozenBelow              *int64 // micros: buckets starting before it are kept as they are
	CreatedAt                time.Time
	RefreshedAt              *time.Time

	ts          timeSQL
	parentTypes map[string]string // parent's data table column → its SQL type
	keyTypes    []string          // SQL types of GroupBy (readKeyTypes)
	// SQL types of the data table's columns (readStateTypes, view.go)
	stateSQLTypes map[string]string
}

// String is schema.name.
func (r *Rollup) String() string { return r.Schema + "." + r.Name }

func (r *Rollup) view() string   { return pg.QuoteQualified(r.Schema, r.Name) }
func (r *Rollup) data() string   { return pg.QuoteQualified(r.Schema, r.DataName) }
func (r *Rollup) source() string { return pg.QuoteQualified(r.SourceSchema, r.SourceName) }

// NotFoundError says there is no rollup of that name.
type NotFoundError struct{ Name string }

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("rollup %q does not exist (pgts rollup list)", e.Name)
}

const selectRollup = `SELECT id, rollup_schema, rollup_name, source_schema, source_name, source_rollup, time_column,
	time_type, bucket, group_by, aggs::text, real_time, data_name, watermark, frozen_below, created_at, refreshed_at
	FROM pgts.rollup`

func (rs *Rollups) scan(ctx context.Context, row pgx.Row) (*Rollup, error) {
	r := &Rollup{}
	var parent *int
	var tt, aggs string
	var bucket partition.Interval
	var iv pgtype.Interval
	if err := row.Scan(&r.ID, &r.Schema, &r.Name, &r.SourceSchema, &r.SourceName, &parent, &r.TimeColumn, &tt, &iv,
		&r.GroupBy, &aggs, &r.RealTime, &r.DataName, &r.Watermark, &r.FrozenBelow, &r.CreatedAt, &r.RefreshedAt); err != nil {
		return nil, err
	}
	bucket = partition.Interval{Months: iv.Months, Days: iv.Days, Micros: iv.Microseconds}
	r.Bucket = bucket
	var err error
	if r.TimeType, err = parseTimeType(tt); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(aggs), &r.Aggs); err != nil {
		return nil, fmt.Errorf("reading rollup %s: %w", r, err)
	}
	if r.ts, err = newTimeSQL(r.TimeType, r.Bucket); err != nil {
		return nil, fmt.Errorf("reading rollup %s: %w", r, err)
	}
	if parent != nil {
		if r.Parent, err = rs.byID(ctx, *parent); err != nil {
			return nil, fmt.Errorf("reading the rollup %s is built on: %w", r, err)
		}
		if err := rs.readParentTypes(ctx, r); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// readParentTypes reads the column types of the parent's data table, so
// that combined sums keep them (PostgreSQL's sum of a bigint is numeric).
func (rs *Rollups) readParentTypes(ctx context.Context, r *Rollup) error {
	rows, err := rs.cfg.DB.Query(ctx, `SELECT attname::text, format_type(atttypid, atttypmod) FROM pg_attribute
		WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped`, r.Parent.data())
	if err != nil {
		return fmt.Errorf("reading the columns of %s: %w", r.Parent.data(), err)
	}
	r.parentTypes = map[string]string{}
	var name, typ string
	_, err = pgx.ForEachRow(rows, []any{&name, &typ}, func() error { r.parentTypes[name] = typ; return nil })
	return err
}

func (rs *Rollups) byID(ctx context.Context, id int) (*Rollup, error) {
	return rs.scan(ctx, rs.cfg.DB.QueryRow(ctx, selectRollup+` WHERE id = $1`, id))
}

// resolve finds the schema of a relation (table or view) named as the
// user gave it; an unqualified name is looked up on the search path.
func resolve(ctx context.Context, db catalog.DB, name string) (schema, rel string, err error) {
	schema, rel, err = pg.SplitQualified(name)
	if err != nil {
		return "", "", err
	}
	var got *string
	if err := db.QueryRow(ctx, `SELECT n.nspname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.oid = to_regclass($1)`, pg.QuoteQualified(schema, rel)).Scan(&got); err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return "", "", fmt.Errorf("looking up %q: %w", name, err)
	}
	if got == nil {
		if schema == "" {
			if err := db.QueryRow(ctx, `SELECT current_schema()::text`).Scan(&schema); err != nil {
				return "", "", err
			}
		}
		return schema, rel, nil
	}
	return *got, rel, nil
}

// Get reads the rollup named name ("schema.name" or a name on the search
// path).
func (rs *Rollups) Get(ctx context.Context, name string) (*Rollup, error) {
	if err := catalog.Migrate(ctx, rs.cfg.DB); err != nil {
		return nil, err
	}
	schema, rel, err := resolve(ctx, rs.cfg.DB, name)
	if err != nil {
		return nil, err
	}
	r, err := rs.scan(ctx, rs.cfg.DB.QueryRow(ctx, selectRollup+` WHERE rollup_schema = $1 AND rollup_name = $2`, schema, rel))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, &NotFoundError{Name: name}
	}
	return r, err
}

// List reads every rollup in the order they were made, so that a rollup
// comes after the rollup it is built on (refresh them in this order).
func (rs *Rollups) List(ctx context.Context) ([]*Rollup, error) {
	if err := catalog.Migrate(ctx, rs.cfg.DB); err != nil {
		return nil, err
	}
	rows, err := rs.cfg.DB.Query(ctx, `SELECT id FROM pgts.rollup ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("listing rollups: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		return nil, fmt.Errorf("listing rollups: %w", err)
	}
	out := make([]*Rollup, 0, len(ids))
	for _, id := range ids {
		r, err := rs.byID(ctx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// aggSelect is the query computing the partial states of r per bucket
// and key from rows of its source aliased r, read FROM from (which names
// the source as r) WHERE where.
func (r *Rollup) aggSelect(from, where string) string {
	q := pg.QuoteIdent
	var b strings.Builder
	b.WriteString("SELECT " + r.ts.bucket("r."+q(r.TimeColumn)) + " AS bucket")
	for _, g := range r.GroupBy {
		b.WriteString(", r." + q(g) + " AS " + q(g))
	}
	for _, a := range r.Aggs {
		exprs := rawStates(a)
		if r.Parent != nil {
			p, _ := parentAgg(a, r.Parent.Aggs)
			exprs = combinedStates(a, p)
			if typ := r.parentTypes[stateColumns(p)[0]]; typ != "" && (a.Func == Sum || a.Func == Avg) {
				exprs[0] += "::" + typ
			}
		}
		for i, c := range stateColumns(a) {
			b.WriteString(", " + exprs[i] + " AS " + q(c))
		}
	}
	b.WriteString(" FROM " + from)
	if where != "" {
		b.WriteString(" WHERE " + where)
	}
	b.WriteString(" GROUP BY 1")
	for _, g := range r.GroupBy {
		b.WriteString(", r." + q(g))
	}
	return b.String()
}

// pairsSelect aggregates the source's rows of the (bucket_us, key) pairs
// of the relation pairs: each bucket's rows are read once (a range of the
// time index: OFFSET 0 keeps the planner from flattening the lateral
// subquery into a scan of the whole source), aggregated per key, and the
// groups of the pairs kept; many keys of one bucket cost one scan, not
// one each.
func (r *Rollup) pairsSelect(pairs string) string {
	t := "s." + pg.QuoteIdent(r.TimeColumn)
	agg := r.aggSelect(fmt.Sprintf("(SELECT DISTINCT bucket_us FROM %s p) cb CROSS JOIN LATERAL (SELECT * FROM %s s WHERE %s >= %s AND %s < %s OFFSET 0) r",
		pairs, r.source(), t, r.ts.from("cb.bucket_us"), t, r.ts.step(r.ts.from("cb.bucket_us"), 1)), "")
	return fmt.Sprintf("SELECT a.* FROM (%s) a WHERE EXISTS (SELECT 1 FROM %s p WHERE p.bucket_us = %s AND p.key = %s)",
		agg, pairs, r.ts.us("a.bucket"), r.key("a"))
}

// key is the jsonb group key of a row aliased alias.
func (r *Rollup) key(alias string) string {
	cols := make([]string, len(r.GroupBy))
	for i, g := range r.GroupBy {
		cols[i] = alias + "." + pg.QuoteIdent(g)
	}
	return "jsonb_build_array(" + strings.Join(cols, ", ") + ")"
}

// dataColumns are the data table's columns, quoted, in order.
func (r *Rollup) dataColumns() []string {
	out := []string{"bucket"}
	for _, g := range r.GroupBy {
		out = append(out, pg.QuoteIdent(g))
	}
	for _, a := range r.Aggs {
		for _, c := range stateColumns(a) {
			out = append(out, pg.QuoteIdent(c))
		}
	}
	return out
}

func (r *Rollup) functionName() string {
	return "pgts." + pg.QuoteIdent(fmt.Sprintf("rollup_%d_invalidate", r.ID))
}

// dollarQuote quotes body with a dollar tag that does not occur in it.
func dollarQuote(body string) string {
	tag := "$pgts$"
	for i := 0; strings.Contains(body, tag); i++ {
		tag = fmt.Sprintf("$pgts%d$", i)
	}
	return tag + body + tag
}

// triggerFunction is the trigger function recording what a statement
// wrote (its new rows, and its old ones): the distinct (bucket, key)
// pairs, once per statement, in one INSERT. Recording a statement whose
// rows are all past the refresh's time as one range record instead (so
// that the real-time view reads them as rows since the refresh, not as
// pairs re-aggregating their keys' current bucket) cost 16 sessions of
// 1-row INSERTs a quarter of their rate (3,700 against 4,400-4,900
// statements/s: the range records' identity sequence and the rightmost
// page of their index, shared by every session), for a view over
// psql's rows since the refresh 2.0× rather than about 5× the
// materialized-only view: the writers' rate comes first.
func (r *Rollup) triggerFunction() string {
	pairs := func(tab string) string {
		return fmt.Sprintf("INSERT INTO pgts.rollup_invalidation (rollup_id, bucket_us, key) SELECT DISTINCT %d, %s, %s FROM %s r;\n",
			r.ID, r.ts.us(r.ts.bucket("r."+pg.QuoteIdent(r.TimeColumn))), r.key("r"), tab)
	}
	body := "\nBEGIN\n" +
		"IF TG_OP <> 'DELETE' THEN\n" + pairs("pgts_new") + "END IF;\n" +
		"IF TG_OP <> 'INSERT' THEN\n" + pairs("pgts_old") + "END IF;\n" +
		"RETURN NULL;\nEND\n"
	return fmt.Sprintf("CREATE OR REPLACE FUNCTION %s() RETURNS trigger LANGUAGE plpgsql AS %s", r.functionName(), dollarQuote(body))
}

func (r *Rollup) relFunctionName() string {
	return "pgts." + pg.QuoteIdent(fmt.Sprintf("rollup_%d_invalidate_rel", r.ID))
}

// relFunction is the function recording the (bucket, key) pairs of all
// rows of a relation: a partition the bulk loader filled before attaching
// it (pgts.rollup_partition_attached calls it in the ATTACH transaction).
func (r *Rollup) relFunction() string {
	body := fmt.Sprintf(`
BEGIN
EXECUTE format('INSERT INTO pgts.rollup_invalidation (rollup_id, bucket_us, key) SELECT DISTINCT %d, %s, %s FROM %%s r', rel);
END
`, r.ID, strings.ReplaceAll(r.ts.us(r.ts.bucket("r."+pg.QuoteIdent(r.TimeColumn))), "'", "''"), strings.ReplaceAll(r.key("r"), "'", "''"))
	return fmt.Sprintf("CREATE OR REPLACE FUNCTION %s(rel regclass) RETURNS void LANGUAGE plpgsql AS %s", r.relFunctionName(), dollarQuote(body))
}

// viewSQL is the view's definition. A real-time view computes the final
// values in each part of its union, so that they are computed in the
// scans of the data table's partitions as the materialized-only view's
// are, not in a node above the union.
func (r *Rollup) viewSQL(floatSums map[string]bool) string {
	if r.RealTime {
		stored, fresh := r.realTimeParts() // view.go
		return fmt.Sprintf("CREATE OR REPLACE VIEW %s AS %s\nUNION ALL\n%s", r.view(),
			finalSelect(stored, r.GroupBy, r.Aggs, floatSums), finalSelect(fresh, r.GroupBy, r.Aggs, floatSums))
	}
	return fmt.Sprintf("CREATE OR REPLACE VIEW %s AS %s", r.view(), finalSelect(r.statesSQL(), r.GroupBy, r.Aggs, floatSums))
}

// finalSelect is the query of the final values of aggs from the rows of
// partial states of the query states.
func finalSelect(states string, groupBy []string, aggs []Agg, floatSums map[string]bool) string {
	q := pg.QuoteIdent
	var b strings.Builder
	b.WriteString("SELECT s.bucket")
	for _, g := range groupBy {
		b.WriteString(", s." + q(g))
	}
	for _, a := range aggs {
		b.WriteString(", " + finalValue(a, floatSums[a.Name]) + " AS " + q(a.Name))
	}
	b.WriteString(" FROM (" + states + ") s")
	return b.String()
}

// statesSQL is the query of the view's partial states, with the data
// table's columns: the data table, and with real time the rows not
// materialized yet, aggregated.
func (r *Rollup) statesSQL() string {
	if r.RealTime {
		return r.realTimeStates() // view.go
	}
	return "SELECT " + strings.Join(r.dataColumns(), ", ") + " FROM " + r.data()
}

// checkNames refuses a definition whose columns would collide.
func (r *Rollup) checkNames() error {
	seen := map[string]string{"bucket": "the bucket column"}
	add := func(name, what string) error {
		if err := pg.CheckIdent(what, name); err != nil {
			return err
		}
		if prev, ok := seen[name]; ok {
			return fmt.Errorf("%s %q has the name of %s (name the aggregate with AS)", what, name, prev)
		}
		seen[name] = what
		return nil
	}
	for _, g := range r.GroupBy {
		if err := add(g, "group-by column"); err != nil {
			return err
		}
	}
	for _, a := range r.Aggs {
		for _, c := range stateColumns(a) {
			if err := add(c, "column "+a.Name+" of the data table"); err != nil {
				return err
			}
		}
	}
	if slices.Contains(r.GroupBy, r.TimeColumn) {
		return fmt.Errorf("group-by column %q is the time column", r.TimeColumn)
	}
	return nil
}
