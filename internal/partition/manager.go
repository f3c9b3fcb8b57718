package partition

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgts/pgts/internal/catalog"
	"github.com/pgts/pgts/internal/pg"
)

// Manager creates, lists and drops the partitions of series tables. It is
// safe for concurrent use by many goroutines, and many processes may run
// Managers on one database at once: partition creation is serialised per
// table by an advisory lock in the database, and every creator re-reads the
// partitions under that lock.
type Manager struct {
	db  catalog.DB
	log *slog.Logger
	now func() time.Time

	mu    sync.Mutex
	known map[string]map[int64]bool // table → lower bounds of partitions known to exist
}

// NewManager returns a Manager on db (a pool, usually). now is the clock
// (time.Now in production).
func NewManager(db catalog.DB, log *slog.Logger, now func() time.Time) *Manager {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if now == nil {
		now = time.Now
	}
	return &Manager{db: db, log: log, now: now, known: map[string]map[int64]bool{}}
}

// Now returns the manager's clock reading.
func (m *Manager) Now() time.Time { return m.now() }

// Table reads a series table's definition from the catalog. name may be
// qualified ("schema.table", quoted parts allowed); an unqualified name is
// looked up on the search path.
func (m *Manager) Table(ctx context.Context, name string) (*Table, error) {
	schema, rel, err := pg.SplitQualified(name)
	if err != nil {
		return nil, err
	}
	if err := catalog.Migrate(ctx, m.db); err != nil {
		return nil, err
	}
	if schema == "" {
		if schema, err = resolveSchema(ctx, m.db, rel); err != nil {
			listed, ok := m.listedSchema(ctx, rel)
			if !ok {
				return nil, err
			}
			schema = listed
		}
	}
	return m.loadTable(ctx, schema, rel)
}

// resolveSchema finds the schema of an unqualified table on the search path.
func resolveSchema(ctx context.Context, db catalog.DB, rel string) (string, error) {
	var schema *string
	err := db.QueryRow(ctx, `SELECT n.nspname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE c.oid = to_regclass($1)`, pg.QuoteIdent(rel)).Scan(&schema)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", &TableNotFoundError{Name: rel}
	}
	if err != nil {
		return "", fmt.Errorf("looking up table %q: %w", rel, err)
	}
	if schema == nil {
		return "", &TableNotFoundError{Name: rel}
	}
	return *schema, nil
}

// TableNotFoundError says no table of that name exists. Stale is set when
// the catalog still listed it (the entry has been removed).
type TableNotFoundError struct {
	Name  string
	Stale *StaleEntry
}

func (e *TableNotFoundError) Error() string {
	if e.Stale != nil {
		return fmt.Sprintf("table %q does not exist: it was dropped outside pgts, and %s", e.Name, staleNote(e.Stale))
	}
	return fmt.Sprintf("table %q does not exist", e.Name)
}

// Tables lists every series table in the catalog that matches the
// database; stale entries are logged and removed (see CheckedTables).
func (m *Manager) Tables(ctx context.Context) ([]*Table, error) {
	tables, _, err := m.CheckedTables(ctx)
	return tables, err
}

// Partition is one time partition of a series table, with bounds as the
// database has them.
type Partition struct {
	Name       string
	Lo, Hi     int64 // [Lo, Hi) in micros
	Rows       int64 // estimate (pg_class.reltuples), -1 when never analysed
	TableBytes int64
	IndexBytes int64
}

// Partitions reads the table's time partitions, their bounds and sizes,
// ordered by time; the DEFAULT partition (see Waiting) is not one of them.
func (m *Manager) Partitions(ctx context.Context, t *Table) ([]Partition, error) {
	rows, err := m.db.Query(ctx, `SELECT c.relname::text, pg_get_expr(c.relpartbound, c.oid),
			coalesce((SELECT sum(greatest(l.reltuples, 0))::bigint FROM pg_partition_tree(c.oid) p JOIN pg_class l ON l.oid = p.relid WHERE p.isleaf), 0),
			(SELECT bool_and(l.reltuples < 0) FROM pg_partition_tree(c.oid) p JOIN pg_class l ON l.oid = p.relid WHERE p.isleaf),
			coalesce((SELECT sum(pg_table_size(p.relid)) FROM pg_partition_tree(c.oid) p WHERE p.isleaf), 0)::bigint,
			coalesce((SELECT sum(pg_indexes_size(p.relid)) FROM pg_partition_tree(c.oid) p WHERE p.isleaf), 0)::bigint
		FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		WHERE i.inhparent = to_regclass($1)
			AND c.oid IS DISTINCT FROM (SELECT partdefid FROM pg_partitioned_table WHERE partrelid = to_regclass($1))`, t.Qualified())
	if err != nil {
		return nil, fmt.Errorf("listing partitions of %s: %w", t, err)
	}
	defer rows.Close()
	var out []Partition
	for rows.Next() {
		var p Partition
		var bound string
		var never *bool
		if err := rows.Scan(&p.Name, &bound, &p.Rows, &never, &p.TableBytes, &p.IndexBytes); err != nil {
			return nil, err
		}
		if never != nil && *never {
			p.Rows = -1
		}
		if p.Lo, p.Hi, err = ParseBound(t.TimeType, bound); err != nil {
			return nil, fmt.Errorf("partition %q of %s: %w", p.Name, t, err)
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b Partition) int { return cmpInt(a.Lo, b.Lo) })
	return out, nil
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// LeafName returns the partition name for the time micros (which must be
// in range), without touching the database.
func (t *Table) LeafName(micros int64) (string, error) {
	lo, _, err := Bounds(t.Interval, micros)
	if err != nil {
		return "", err
	}
	return Name(t.Name, t.Interval, lo)
}

// Ensure makes every partition needed to hold the given times (micros),
// creating the missing ones. Times outside the table's window at the
// manager's clock are refused before anything is created. It returns how
// many partitions it created. Partitions already known to this Manager cost
// no database round trip.
func (m *Manager) Ensure(ctx context.Context, t *Table, times []int64) (int, error) {
	now := m.now()
	los := make([]int64, 0, 4)
	for _, ts := range times {
		if err := t.CheckTime(ts, now); err != nil {
			return 0, fmt.Errorf("ensuring partitions of %s: %w", t, err)
		}
		lo, _, err := Bounds(t.Interval, ts)
		if err != nil {
			return 0, err
		}
		if !slices.Contains(los, lo) {
			los = append(los, lo)
		}
	}
	return m.ensureBounds(ctx, t, los)
}

// ensureBounds makes the partitions starting at the given lower bounds.
func (m *Manager) ensureBounds(ctx context.Context, t *Table, los []int64) (int, error) {
	key := t.String()
	m.mu.Lock()
	known, loaded := m.known[key]
	var missing []int64
	for _, lo := range los {
		if !known[lo] {
			missing = append(missing, lo)
		}
	}
	m.mu.Unlock()
	if len(missing) == 0 {
		return 0, nil
	}
	if !loaded {
		if err := m.refresh(ctx, t); err != nil {
			return 0, err
		}
		return m.ensureBounds(ctx, t, los)
	}
	slices.Sort(missing)
	created := 0
	for _, lo := range missing {
		ok, _, err := m.create(ctx, t, lo, createShare)
		if err != nil {
			return created, err
		}
		if ok {
			created++
		}
		m.mu.Lock()
		if m.known[key] == nil {
			m.known[key] = map[int64]bool{}
		}
		m.known[key][lo] = true
		m.mu.Unlock()
	}
	return created, nil
}

// refresh reloads the set of partitions that exist.
func (m *Manager) refresh(ctx context.Context, t *Table) error {
	parts, err := m.Partitions(ctx, t)
	if err != nil {
		return err
	}
	set := make(map[int64]bool, len(parts))
	for _, p := range parts {
		set[p.Lo] = true
	}
	m.mu.Lock()
	m.known[t.String()] = set
	m.mu.Unlock()
	return nil
}

// Forget drops what the Manager knows of a table's partitions, e.g. after
// COPY found one missing (dropped by someone else).
func (m *Manager) Forget(t *Table) {
	m.mu.Lock()
	delete(m.known, t.String())
	m.mu.Unlock()
}

// create makes the partition starting at lo unless another creator made it
// first, moving into it the rows of its range that wait in the table's
// DEFAULT partition (see MoveFromDefault; share says how it waits for
// writers into the parent); it returns whether it made the
// partition and the rows moved. It never blocks writers of existing
// partitions: the new table is built on its own (with a CHECK constraint
// equal to its bounds, so the ATTACH needs no validation scan), then
// attached, which takes only a SHARE UPDATE EXCLUSIVE lock on the parent
// (and ACCESS EXCLUSIVE on the DEFAULT partition); the CHECK is then
// dropped so rows are not checked twice.
func (m *Manager) create(ctx context.Context, t *Table, lo int64, share ShareLock) (bool, int64, error) {
	start := time.Now()
	hi := Next(t.Interval, lo)
	name, err := Name(t.Name, t.Interval, lo)
	if err != nil {
		return false, 0, err
	}
	leaf := pg.QuoteQualified(t.Schema, name)
	col := pg.QuoteIdent(t.TimeColumn)
	loLit, hiLit := BoundLiteral(t.TimeType, lo), BoundLiteral(t.TimeType, hi)
	tx, err := m.db.Begin(ctx)
	if err != nil {
		return false, 0, fmt.Errorf("creating partition %q: %w", name, err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // after Commit it is a no-op
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, catalog.LockKey, t.String()); err != nil {
		return false, 0, fmt.Errorf("locking %s for partition creation: %w", t, err)
	}
	var exists bool
	if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
			WHERE i.inhparent = to_regclass($1) AND c.relname = $2)`, t.Qualified(), name).Scan(&exists); err != nil {
		return false, 0, fmt.Errorf("checking partition %q: %w", name, err)
	}
	if exists {
		return false, 0, nil
	}
	if err := checkFree(ctx, tx, t, name); err != nil {
		return false, 0, err
	}
	// before the parent is touched: CREATE TABLE LIKE takes a weaker lock
	def, err := lockDefault(ctx, tx, t, share, m.log)
	if err != nil {
		return false, 0, fmt.Errorf("creating partition %q of %s: %w", name, t, err)
	}
	var ddl strings.Builder
	fmt.Fprintf(&ddl, "CREATE TABLE %s (LIKE %s INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE INCLUDING COMMENTS)", leaf, t.Qualified())
	if t.HashColumn != "" {
		fmt.Fprintf(&ddl, " PARTITION BY HASH (%s)", pg.QuoteIdent(t.HashColumn))
	}
	ddl.WriteString(";\n")
	check := pg.QuoteIdent(name + "_bounds")
	if len(name)+len("_bounds") > pg.MaxIdentifierBytes {
		check = pg.QuoteIdent("pgts_bounds")
	}
	fmt.Fprintf(&ddl, "ALTER TABLE %s ADD CONSTRAINT %s CHECK (%s IS NOT NULL AND %s >= %s AND %s < %s);\n", leaf, check, col, col, loLit, col, hiLit)
	for i := 0; i < t.HashPartitions; i++ {
		fmt.Fprintf(&ddl, "CREATE TABLE %s PARTITION OF %s FOR VALUES WITH (MODULUS %d, REMAINDER %d);\n",
			pg.QuoteQualified(t.Schema, HashName(name, i)), leaf, t.HashPartitions, i)
	}
	if _, err := tx.Exec(ctx, ddl.String(), pgx.QueryExecModeSimpleProtocol); err != nil {
		return false, 0, fmt.Errorf("creating partition %q of %s: %w", name, t, err)
	}
	moved, err := moveRows(ctx, tx, t, def, leaf, lo, hi)
	if err != nil {
		return false, 0, fmt.Errorf("creating partition %q of %s: %w", name, t, err)
	}
	// then the statement triggers of the table's rollups, for writes naming
	// the partition (catalog migration 9)
	attach := fmt.Sprintf("ALTER TABLE %s ATTACH PARTITION %s FOR VALUES FROM (%s) TO (%s);\nALTER TABLE %s DROP CONSTRAINT %s;\nSELECT pgts.rollup_partition_made(%s, %s);\n",
		t.Qualified(), leaf, loLit, hiLit, leaf, check, pg.QuoteLiteral(t.Qualified()), pg.QuoteLiteral(leaf))
	if _, err := tx.Exec(ctx, attach, pgx.QueryExecModeSimpleProtocol); err != nil {
		return false, 0, fmt.Errorf("creating partition %q of %s: %w", name, t, err)
	}
	if err := tx.Commit(ctx); err != nil {
		return false, 0, fmt.Errorf("creating partition %q of %s: %w", name, t, err)
	}
	m.log.Debug("created partition", "table", t.String(), "partition", name, "from", FormatMicros(lo), "to", FormatMicros(hi),
		"moved_rows", moved, "took", time.Since(start))
	return true, moved, nil
}

// Premake creates the partition holding now and the Premake partitions
// after it.
func (m *Manager) Premake(ctx context.Context, t *Table) (int, error) {
	lo, _, err := Bounds(t.Interval, m.now().UnixMicro())
	if err != nil {
		return 0, err
	}
	los := []int64{lo}
	for i := 0; i < t.Premake; i++ {
		lo = Next(t.Interval, lo)
		los = append(los, lo)
	}
	return m.ensureBounds(ctx, t, los)
}
