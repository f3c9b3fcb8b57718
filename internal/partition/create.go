package partition

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/pgts/pgts/internal/catalog"
	"github.com/pgts/pgts/internal/pg"
)

// IndexKind is the default index made on the time column.
type IndexKind int

// Index kinds: a btree on time (and on (hash column, time) when hash
// partitioned), a BRIN on time (small; for append-only data), or none.
const (
	IndexBtree IndexKind = iota
	IndexBRIN
	IndexNone
)

// CreateSpec describes a new series table.
type CreateSpec struct {
	Schema, Name string // Schema "" means the current schema
	// Columns is a column list in CREATE TABLE syntax, e.g.
	// "time timestamptz not null, device int not null, temp float8",
	// parsed and rebuilt by ColumnList (never spliced as given). Exactly
	// one of Columns and Like is set.
	Columns string
	// Like names an existing table whose columns, defaults, constraints and
	// indexes are adopted. When it names the table being created, that
	// table is either partitioned by range on the time column already, and
	// registered as it is (see adopt.go), or empty, and replaced by the
	// series table.
	Like           string
	TimeColumn     string
	EpochUnit      string // "s", "ms" or "us" for a bigint time column
	Interval       Interval
	HashColumn     string
	HashPartitions int
	Premake        int
	Retention      *Interval
	AcceptFuture   *Interval
	AcceptPast     *Interval
	Index          IndexKind
	// ExtraIndexes are column lists such as "device, time DESC"; each
	// becomes an index on the table.
	ExtraIndexes []string
}

// Validate checks what can be checked without a database.
func (s *CreateSpec) Validate() error {
	if err := pg.CheckIdent("table", s.Name); err != nil {
		return err
	}
	if s.Schema != "" {
		if err := pg.CheckIdent("schema", s.Schema); err != nil {
			return err
		}
	}
	if (s.Columns == "") == (s.Like == "") {
		return errors.New("give the columns (--columns) or a table to copy them from (--like), not both")
	}
	if s.Columns != "" {
		if _, err := ColumnList(s.Columns); err != nil {
			return err
		}
	}
	if err := pg.CheckIdent("time column", s.TimeColumn); err != nil {
		return err
	}
	if err := s.Interval.Validate(); err != nil {
		return err
	}
	if n := MaxTableNameBytes(s.Interval, s.HashPartitions); len(s.Name) > n {
		return fmt.Errorf("table name %q is %d bytes; with this interval its partition names need it to be at most %d bytes", s.Name, len(s.Name), n)
	}
	if (s.HashColumn == "") != (s.HashPartitions == 0) {
		return errors.New("--hash-column and --hash-partitions go together")
	}
	if s.HashColumn != "" {
		if err := pg.CheckIdent("hash column", s.HashColumn); err != nil {
			return err
		}
		if s.HashPartitions < 2 || s.HashPartitions > 1024 {
			return fmt.Errorf("--hash-partitions %d: must be between 2 and 1024", s.HashPartitions)
		}
	}
	if s.Premake < 0 || s.Premake > 1000 {
		return fmt.Errorf("--premake %d: must be between 0 and 1000", s.Premake)
	}
	for _, iv := range []*Interval{s.Retention, s.AcceptFuture, s.AcceptPast} {
		if iv != nil && (iv.Months < 0 || iv.Days < 0 || iv.Micros < 0 || *iv == (Interval{})) {
			return fmt.Errorf("interval %s must be positive", iv)
		}
	}
	for _, cols := range s.ExtraIndexes {
		if _, err := IndexColumns(cols); err != nil {
			return err
		}
	}
	return nil
}

// IndexColumns parses and quotes an index column list such as
// `device, "Time" DESC`: each element is an identifier (folded to lower
// case unless quoted) with an optional ASC or DESC. Anything else is
// refused, so the list cannot smuggle SQL.
func IndexColumns(list string) (string, error) {
	var out []string
	for _, part := range splitTopLevel(list) {
		f := strings.Fields(part)
		if len(f) == 0 {
			return "", fmt.Errorf("index column list %q has an empty element", list)
		}
		order := ""
		if n := len(f); n > 1 {
			switch strings.ToUpper(f[n-1]) {
			case "ASC", "DESC":
				order = " " + strings.ToUpper(f[n-1])
				f = f[:n-1]
			}
		}
		_, name, err := pg.SplitQualified(strings.Join(f, " "))
		if err != nil || strings.ContainsAny(strings.Join(f, " "), "()") {
			return "", fmt.Errorf("index column list %q: %q is not a column name (quote names with spaces: \"my col\")", list, part)
		}
		if len(f) > 1 && !strings.HasPrefix(f[0], `"`) {
			return "", fmt.Errorf("index column list %q: %q is not a column name (quote names with spaces: \"my col\")", list, part)
		}
		out = append(out, pg.QuoteIdent(name)+order)
	}
	return strings.Join(out, ", "), nil
}

// splitTopLevel splits on commas outside double quotes.
func splitTopLevel(s string) []string {
	var parts []string
	inQuote := false
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			inQuote = !inQuote
		case ',':
			if !inQuote {
				parts = append(parts, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	return append(parts, strings.TrimSpace(s[start:]))
}

// ErrUniqueWithoutTime is wrapped when a unique constraint or primary key
// lacks the time column.
var ErrUniqueWithoutTime = errors.New("unique constraint without the time column")

// Create makes a series table: the partitioned parent, its indexes, its
// catalog row, its DEFAULT partition (EnsureDefault), and its first
// partitions (the current one and Premake more).
func (m *Manager) Create(ctx context.Context, s CreateSpec) (*Table, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if err := catalog.Migrate(ctx, m.db); err != nil {
		return nil, err
	}
	if s.Schema == "" {
		if err := m.db.QueryRow(ctx, `SELECT current_schema()::text`).Scan(&s.Schema); err != nil {
			return nil, fmt.Errorf("finding the current schema: %w", err)
		}
	}
	qname := pg.QuoteQualified(s.Schema, s.Name)
	t := &Table{Schema: s.Schema, Name: s.Name, TimeColumn: s.TimeColumn, Interval: s.Interval,
		HashColumn: s.HashColumn, HashPartitions: s.HashPartitions, Premake: s.Premake,
		Retention: s.Retention, AcceptFuture: s.AcceptFuture, AcceptPast: s.AcceptPast}
	err := pgx.BeginFunc(ctx, m.db, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, catalog.LockKey, t.String()); err != nil {
			return err
		}
		// A catalog entry whose table was dropped or replaced outside
		// pgts gives way to the new table.
		if n, err := deleteStale(ctx, tx, s.Schema, s.Name); err != nil {
			return err
		} else if n > 0 {
			m.log.Warn("replaced a stale entry in the pgts catalog (its table had been dropped or replaced outside pgts)", "table", t.String())
		}
		var exists, replace bool
		if err := tx.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, qname).Scan(&exists); err != nil {
			return err
		}
		if s.Like != "" {
			likeSchema, likeName, err := pg.SplitQualified(s.Like)
			if err != nil {
				return fmt.Errorf("--like: %w", err)
			}
			if likeSchema == "" {
				if likeSchema, err = resolveSchema(ctx, tx, likeName); err != nil {
					return fmt.Errorf("--like: %w", err)
				}
			}
			replace = likeSchema == s.Schema && likeName == s.Name
		}
		if exists && !replace {
			return fmt.Errorf("table %s already exists (pgts table show %s, or choose another name)", t, t)
		}
		adopt := false
		if replace {
			strategy, key, err := partitionedBy(ctx, tx, qname)
			if err != nil {
				return err
			}
			if adopt = strategy != 0; adopt {
				if err := checkAdoptable(s, qname, strategy, key); err != nil {
					return err
				}
			}
		}
		if !adopt {
			if err := createParent(ctx, tx, s, replace); err != nil {
				return err
			}
		}
		tt, err := checkColumns(ctx, tx, s, qname)
		if err != nil {
			return err
		}
		t.TimeType = tt
		if err := tt.CheckInterval(s.Interval); err != nil {
			return err
		}
		if adopt {
			if err := checkAdoptedPartitions(ctx, tx, s, tt, qname); err != nil {
				return err
			}
		}
		if err := createIndexes(ctx, tx, s, qname); err != nil {
			return err
		}
		hashCol, hashParts := (*string)(nil), (*int)(nil)
		if s.HashColumn != "" {
			hashCol, hashParts = &s.HashColumn, &s.HashPartitions
		}
		_, err = tx.Exec(ctx, `INSERT INTO pgts.series_table (table_schema, table_name, time_column, time_type,
				interval_months, interval_days, interval_micros, hash_column, hash_partitions, premake,
				retention, accept_future, accept_past)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
			s.Schema, s.Name, s.TimeColumn, timeTypeToCatalog(tt), s.Interval.Months, s.Interval.Days, s.Interval.Micros,
			hashCol, hashParts, s.Premake, toPG(s.Retention), toPG(s.AcceptFuture), toPG(s.AcceptPast))
		if err != nil {
			return fmt.Errorf("recording %s in the pgts catalog: %w", t, err)
		}
		// A load ledger of an earlier table of this name (dropped by
		// hand) would make a rerun of its load skip batches this new,
		// empty table never got.
		if err := forgetLoads(ctx, tx, t.String()); err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := m.EnsureDefault(ctx, t); err != nil {
		return t, fmt.Errorf("table %s created, but making its default partition failed (pgts maintain retries): %w", t, err)
	}
	if _, err := m.Premake(ctx, t); err != nil {
		return t, fmt.Errorf("table %s created, but making its first partitions failed (pgts maintain retries): %w", t, err)
	}
	return t, nil
}

// createParent runs CREATE TABLE ... PARTITION BY RANGE, translating the
// server's errors into advice.
func createParent(ctx context.Context, tx pgx.Tx, s CreateSpec, replace bool) error {
	qname := pg.QuoteQualified(s.Schema, s.Name)
	target := qname
	if replace {
		var hasRows bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM `+qname+`)`).Scan(&hasRows); err != nil {
			return fmt.Errorf("--like: %w", err)
		}
		if hasRows {
			return fmt.Errorf("table %s has rows and is not partitioned: pgts only converts an empty plain table in place (and adopts a table partitioned by range on its time column as it is); create a series table under another name and copy the rows (INSERT ... SELECT, or pgts load)", qname)
		}
		target = pg.QuoteQualified(s.Schema, "pgts_replacing")
	}
	var ddl string
	if s.Columns != "" {
		cols, err := ColumnList(s.Columns)
		if err != nil {
			return err
		}
		ddl = fmt.Sprintf("CREATE TABLE %s (%s) PARTITION BY RANGE (%s)", target, cols, pg.QuoteIdent(s.TimeColumn))
	} else {
		likeSchema, likeName, _ := pg.SplitQualified(s.Like)
		ddl = fmt.Sprintf("CREATE TABLE %s (LIKE %s INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES INCLUDING STORAGE INCLUDING COMMENTS) PARTITION BY RANGE (%s)",
			target, pg.QuoteQualified(likeSchema, likeName), pg.QuoteIdent(s.TimeColumn))
	}
	// One statement over the extended protocol: a column list cannot carry
	// a second statement.
	if err := pg.ExecOne(ctx, tx.Conn(), ddl); err != nil {
		return explainCreateError(err, s)
	}
	if replace {
		if _, err := tx.Exec(ctx, "DROP TABLE "+qname); err != nil {
			return fmt.Errorf("replacing %s: %w (drop the views or keys that depend on it first)", qname, err)
		}
		if _, err := tx.Exec(ctx, fmt.Sprintf("ALTER TABLE %s RENAME TO %s", target, pg.QuoteIdent(s.Name))); err != nil {
			return fmt.Errorf("replacing %s: %w", qname, err)
		}
	}
	return nil
}

func explainCreateError(err error, s CreateSpec) error {
	msg := err.Error()
	switch pg.SQLState(err) {
	case "0A000":
		if strings.Contains(msg, "must include all partitioning columns") || strings.Contains(msg, "unique constraint on partitioned table") {
			return fmt.Errorf("%w: a series table is split into one table per time range, and PostgreSQL can only enforce "+
				"uniqueness inside each of them, so every PRIMARY KEY and UNIQUE constraint must include the time column %q. "+
				"Add it to the key, e.g. PRIMARY KEY (device, %s) instead of PRIMARY KEY (device) "+
				"(server said: %s)", ErrUniqueWithoutTime, s.TimeColumn, s.TimeColumn, msg)
		}
	case "42703":
		if strings.Contains(msg, "partition key") {
			return fmt.Errorf("time column %q is not one of the table's columns (--time-column names it; unquoted names are lower-cased)", s.TimeColumn)
		}
	case "42P01":
		if s.Like != "" {
			return fmt.Errorf("--like %q: no such table", s.Like)
		}
	}
	return fmt.Errorf("creating table %s.%s: %w", s.Schema, s.Name, err)
}

// checkColumns reads the time and hash columns' types and makes the time
// column NOT NULL (a row without a time fits no partition).
func checkColumns(ctx context.Context, tx pgx.Tx, s CreateSpec, qname string) (TimeType, error) {
	var typ string
	err := tx.QueryRow(ctx, `SELECT format_type(atttypid, atttypmod) FROM pg_attribute
		WHERE attrelid = to_regclass($1) AND attname = $2 AND attnum > 0 AND NOT attisdropped`, qname, s.TimeColumn).Scan(&typ)
	if err != nil {
		return 0, fmt.Errorf("time column %q: %w", s.TimeColumn, err)
	}
	tt, err := ParseTimeType(typ, s.EpochUnit)
	if err != nil {
		return 0, fmt.Errorf("column %q: %w", s.TimeColumn, err)
	}
	if _, err := tx.Exec(ctx, fmt.Sprintf("ALTER TABLE %s ALTER COLUMN %s SET NOT NULL", qname, pg.QuoteIdent(s.TimeColumn))); err != nil {
		return 0, fmt.Errorf("making time column %q NOT NULL: %w", s.TimeColumn, err)
	}
	if s.HashColumn != "" {
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM pg_attribute WHERE attrelid = to_regclass($1) AND attname = $2
			AND attnum > 0 AND NOT attisdropped`, qname, s.HashColumn).Scan(&n); err != nil {
			return 0, err
		}
		if n == 0 {
			return 0, fmt.Errorf("hash column %q does not exist in %s (unquoted names are lower-cased)", s.HashColumn, qname)
		}
		if s.HashColumn == s.TimeColumn {
			return 0, fmt.Errorf("hash column %q is the time column; choose a device or series column", s.HashColumn)
		}
	}
	return tt, nil
}

func createIndexes(ctx context.Context, tx pgx.Tx, s CreateSpec, qname string) error {
	col := pg.QuoteIdent(s.TimeColumn)
	var stmts []string
	switch s.Index {
	case IndexBtree:
		stmts = append(stmts, fmt.Sprintf("CREATE INDEX ON %s (%s)", qname, col))
		if s.HashColumn != "" {
			stmts = append(stmts, fmt.Sprintf("CREATE INDEX ON %s (%s, %s)", qname, pg.QuoteIdent(s.HashColumn), col))
		}
	case IndexBRIN:
		stmts = append(stmts, fmt.Sprintf("CREATE INDEX ON %s USING brin (%s)", qname, col))
	}
	for _, cols := range s.ExtraIndexes {
		list, err := IndexColumns(cols)
		if err != nil {
			return err
		}
		stmts = append(stmts, fmt.Sprintf("CREATE INDEX ON %s (%s)", qname, list))
	}
	for _, st := range stmts {
		if err := createIndexOnce(ctx, tx, qname, st); err != nil {
			return err
		}
	}
	return nil
}

// sameIndexSQL is true when index $1 has a twin on its table: same access
// method, columns, operator classes, orderings, collations, expressions and
// predicate, and a twin at least as unique.
const sameIndexSQL = `SELECT EXISTS (SELECT 1 FROM pg_index a JOIN pg_class ca ON ca.oid = a.indexrelid
	JOIN pg_index b ON b.indrelid = a.indrelid AND b.indexrelid <> a.indexrelid JOIN pg_class cb ON cb.oid = b.indexrelid
	WHERE a.indexrelid = $1 AND ca.relam = cb.relam AND a.indkey::text = b.indkey::text
		AND a.indclass::text = b.indclass::text AND a.indoption::text = b.indoption::text
		AND a.indcollation::text = b.indcollation::text AND b.indisunique >= a.indisunique
		AND pg_get_expr(a.indexprs, a.indrelid) IS NOT DISTINCT FROM pg_get_expr(b.indexprs, b.indrelid)
		AND pg_get_expr(a.indpred, a.indrelid) IS NOT DISTINCT FROM pg_get_expr(b.indpred, b.indrelid))`

// createIndexOnce runs one "CREATE INDEX ON qname ..." unless the table
// already has the same index (copied by --like, kept by an adopted table,
// or the time index repeated by --index-on): every extra index costs every
// insert. It first makes the index ON ONLY the parent, which builds
// nothing, compares it with the others, and drops it; then, when it is
// new, makes it for real.
func createIndexOnce(ctx context.Context, tx pgx.Tx, qname, stmt string) error {
	probe, ok := strings.CutPrefix(stmt, "CREATE INDEX ON ")
	if !ok {
		return fmt.Errorf("internal error: index statement %q", stmt)
	}
	dup, err := probeIndex(ctx, tx, qname, "CREATE INDEX ON ONLY "+probe)
	if err != nil || dup {
		return err
	}
	if _, err := tx.Exec(ctx, stmt); err != nil {
		return fmt.Errorf("creating index (%s): %w", stmt, err)
	}
	return nil
}

// probeIndex runs stmt, reports whether the index it made duplicates one
// the table had, and drops it again.
func probeIndex(ctx context.Context, tx pgx.Tx, qname, stmt string) (bool, error) {
	const oids = `SELECT coalesce(array_agg(indexrelid::int8), '{}') FROM pg_index WHERE indrelid = to_regclass($1)`
	var before, after []int64
	if err := tx.QueryRow(ctx, oids, qname).Scan(&before); err != nil {
		return false, fmt.Errorf("listing the indexes of %s: %w", qname, err)
	}
	if _, err := tx.Exec(ctx, stmt); err != nil {
		return false, fmt.Errorf("creating index (%s): %w", stmt, err)
	}
	if err := tx.QueryRow(ctx, oids, qname).Scan(&after); err != nil {
		return false, fmt.Errorf("listing the indexes of %s: %w", qname, err)
	}
	for _, oid := range after {
		if slices.Contains(before, oid) {
			continue
		}
		var dup bool
		var name string
		if err := tx.QueryRow(ctx, sameIndexSQL+`, $1::oid::regclass::text`, oid).Scan(&dup, &name); err != nil {
			return false, fmt.Errorf("comparing the indexes of %s: %w", qname, err)
		}
		// name is regclass output: quoted and qualified as needed.
		if _, err := tx.Exec(ctx, "DROP INDEX "+name); err != nil {
			return false, fmt.Errorf("dropping the probe index %s: %w", name, err)
		}
		return dup, nil
	}
	return false, fmt.Errorf("internal error: CREATE INDEX on %s made no index", qname)
}

// Drop removes a series table, its partitions, its catalog row and the
// ledgers of the loads into it.
func (m *Manager) Drop(ctx context.Context, t *Table) error {
	err := pgx.BeginFunc(ctx, m.db, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, catalog.LockKey, t.String()); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "DROP TABLE IF EXISTS "+t.Qualified()); err != nil {
			return fmt.Errorf("dropping %s: %w", t, err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM pgts.series_table WHERE table_schema = $1 AND table_name = $2`, t.Schema, t.Name); err != nil {
			return err
		}
		return forgetLoads(ctx, tx, t.String())
	})
	m.Forget(t)
	return err
}

// forgetLoads deletes the load ledgers (pgts.load, and its batches by
// cascade) of loads into target ("schema.name"): they describe rows of a
// table that is gone, and a rerun under one of their load IDs must load
// everything into the table that takes its name.
// The unattached partitions of its interrupted bulk loads are dropped
// with them: nothing could attach them any more.
func forgetLoads(ctx context.Context, tx pgx.Tx, target string) error {
	if _, err := DropPendingBulk(ctx, tx, target, ""); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM pgts.load WHERE target = $1`, target); err != nil {
		return fmt.Errorf("deleting the load ledgers of %s: %w", target, err)
	}
	return nil
}
