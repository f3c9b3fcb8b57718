package partition

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/pgts/pgts/internal/catalog"
	"github.com/pgts/pgts/internal/pg"
)

// The catalog must agree with the database: a row of pgts.series_table
// whose table was dropped, or replaced by a table that is not partitioned by
// range on its time column (plain SQL can do either), is stale. Every read
// of the catalog checks each row against pg_class in the same statement;
// a stale row is reported once (a warning, and StaleEntry values for
// `table list`) and removed, so that `table drop`, `table create` and
// `load` treat the name as what it now is.

// tableColumns are the catalog columns scanTable reads, qualified by s.
const tableColumns = `s.table_schema, s.table_name, s.time_column, s.time_type,
	s.interval_months, s.interval_days, s.interval_micros, s.hash_column, s.hash_partitions,
	s.premake, s.retention, s.accept_future, s.accept_past, s.created_at`

// staleFrom joins each catalog row s to its table; staleReason is NULL for
// a row that matches a table range-partitioned on its time column, else
// says what is wrong.
const staleFrom = ` FROM pgts.series_table s
	LEFT JOIN pg_namespace n ON n.nspname = s.table_schema
	LEFT JOIN pg_class c ON c.relnamespace = n.oid AND c.relname = s.table_name
	LEFT JOIN pg_partitioned_table p ON p.partrelid = c.oid
	LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = p.partattrs[0] AND p.partnatts = 1`

// reasonMissing is the staleReason of a row whose table does not exist.
const reasonMissing = "does not exist (it was dropped outside pgts)"

const staleReason = `CASE
	WHEN c.oid IS NULL THEN '` + reasonMissing + `'
	WHEN c.relkind <> 'p' THEN 'is not a partitioned table (it was replaced outside pgts)'
	WHEN p.partstrat <> 'r' THEN 'is not partitioned by range'
	WHEN a.attname IS DISTINCT FROM s.time_column THEN 'is not partitioned by range on its time column ' || quote_ident(s.time_column)
END`

// StaleEntry is a catalog row that no longer matched its table, and was
// removed.
type StaleEntry struct {
	Schema, Name string
	Reason       string // e.g. "does not exist (it was dropped outside pgts)"
	Removed      bool   // false when the role may not delete from the catalog
}

// String returns schema.name unquoted, for messages.
func (s StaleEntry) String() string { return s.Schema + "." + s.Name }

// removeStale deletes the catalog row of schema.name if it is still stale,
// under the table's advisory lock (a concurrent `table create` holds it
// while it replaces the row). It logs the removal once; a role that may not
// delete is told to run pgts as the table's owner.
func (m *Manager) removeStale(ctx context.Context, schema, name, reason string) StaleEntry {
	e := StaleEntry{Schema: schema, Name: name, Reason: reason}
	err := pgx.BeginFunc(ctx, m.db, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, catalog.LockKey, e.String()); err != nil {
			return err
		}
		n, err := deleteStale(ctx, tx, schema, name)
		e.Removed = n > 0
		return err
	})
	if err != nil {
		m.log.Warn("the pgts catalog lists a table that "+reason+"; removing the entry failed", "table", e.String(), "err", err)
		return e
	}
	if e.Removed {
		m.log.Warn("removed a stale entry from the pgts catalog: the table "+reason, "table", e.String())
	}
	return e
}

// deleteStale deletes schema.name's catalog row when it is stale, and
// returns how many rows it deleted (0 or 1). The caller holds the table's
// advisory lock.
func deleteStale(ctx context.Context, db catalog.DB, schema, name string) (int64, error) {
	tag, err := db.Exec(ctx, `DELETE FROM pgts.series_table d WHERE d.table_schema = $1 AND d.table_name = $2
		AND EXISTS (SELECT 1`+staleFrom+` WHERE s.table_schema = d.table_schema AND s.table_name = d.table_name
			AND (`+staleReason+`) IS NOT NULL)`, schema, name)
	if err != nil {
		return 0, fmt.Errorf("removing the stale catalog entry of %s.%s: %w", schema, name, err)
	}
	return tag.RowsAffected(), nil
}

// scanChecked scans a row of tableColumns followed by staleReason.
func scanChecked(row pgx.Row) (*Table, *string, error) {
	var reason *string
	t, err := scanTable(row, &reason)
	return t, reason, err
}

// CheckedTables lists the catalog's series tables that match the database,
// and the stale entries it found (and removed), ordered by name.
func (m *Manager) CheckedTables(ctx context.Context) ([]*Table, []StaleEntry, error) {
	if err := catalog.Migrate(ctx, m.db); err != nil {
		return nil, nil, err
	}
	rows, err := m.db.Query(ctx, `SELECT `+tableColumns+`, `+staleReason+staleFrom+` ORDER BY s.table_schema, s.table_name`)
	if err != nil {
		return nil, nil, fmt.Errorf("listing series tables: %w", err)
	}
	var tables []*Table
	type staleRow struct{ schema, name, reason string }
	var stale []staleRow
	for rows.Next() {
		t, reason, err := scanChecked(rows)
		if err != nil {
			rows.Close()
			return nil, nil, err
		}
		if reason != nil {
			stale = append(stale, staleRow{t.Schema, t.Name, *reason})
			continue
		}
		tables = append(tables, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("listing series tables: %w", err)
	}
	var entries []StaleEntry
	for _, s := range stale {
		entries = append(entries, m.removeStale(ctx, s.schema, s.name, s.reason))
	}
	return tables, entries, nil
}

// loadTable reads one catalog row and checks it against the database. A
// stale row is removed, and the error says why: a *TableNotFoundError when
// the table is gone, else a *NotSeriesTableError, each with Stale set.
func (m *Manager) loadTable(ctx context.Context, schema, name string) (*Table, error) {
	row := m.db.QueryRow(ctx, `SELECT `+tableColumns+`, `+staleReason+staleFrom+`
		WHERE s.table_schema = $1 AND s.table_name = $2`, schema, name)
	t, reason, err := scanChecked(row)
	if err == pgx.ErrNoRows {
		return nil, &NotSeriesTableError{Schema: schema, Name: name}
	}
	if err != nil {
		return nil, fmt.Errorf("reading the catalog entry of %s: %w", pg.QuoteQualified(schema, name), err)
	}
	if reason != nil {
		e := m.removeStale(ctx, schema, name, *reason)
		if *reason == reasonMissing {
			return nil, &TableNotFoundError{Name: name, Stale: &e}
		}
		return nil, &NotSeriesTableError{Schema: schema, Name: name, Stale: &e}
	}
	return t, nil
}

// listedSchema returns the first schema on the search path whose catalog
// lists a series table named rel, for an unqualified name whose table no
// longer exists.
func (m *Manager) listedSchema(ctx context.Context, rel string) (string, bool) {
	var schema string
	err := m.db.QueryRow(ctx, `SELECT s.table_schema FROM pgts.series_table s
		JOIN unnest(current_schemas(false)) WITH ORDINALITY AS sp(name, i) ON sp.name = s.table_schema
		WHERE s.table_name = $1 ORDER BY sp.i LIMIT 1`, rel).Scan(&schema)
	return schema, err == nil
}

// staleNote is the end of the messages about a stale entry.
func staleNote(e *StaleEntry) string {
	if !e.Removed {
		return "its stale catalog entry could not be removed (run pgts as the table's owner)"
	}
	return "its stale catalog entry was removed"
}
