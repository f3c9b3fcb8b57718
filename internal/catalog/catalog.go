// Package catalog owns the "pgts" schema: the plain tables in which pgts
// records its series tables and its load ledgers, and the migrations that
// create and evolve them.
//
// Everything is a plain table keyed by names (never by OIDs, which change
// across pg_dump and restore), so a database dumped with pg_dump restores
// with pg_restore or psql and keeps working.
//
// Glossary:
//
//	series table  a table partitioned by range on a time column, managed by pgts
//	ledger        pgts.load_batch: one row per committed batch of a resumable load
//	version       the number of migrations applied, in pgts.schema_version
package catalog

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// DB is what pgts needs of a connection or a pool.
type DB interface {
	Begin(ctx context.Context) (pgx.Tx, error)
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Schema is the name of pgts' own schema.
const Schema = "pgts"

// LockKey is the first key of every advisory lock pgts takes ("pgts" in
// ASCII); the second key identifies the object.
const LockKey = 0x70677473

// migrations are applied in order, each once, each in its own transaction.
// Never edit a released migration: append a new one.
var migrations = []string{
	// 1: series tables and the load ledger.
	`CREATE TABLE pgts.series_table (
		table_schema     text NOT NULL,
		table_name       text NOT NULL,
		time_column      text NOT NULL,
		time_type        text NOT NULL,
		interval_months  integer NOT NULL,
		interval_days    integer NOT NULL,
		interval_micros  bigint NOT NULL,
		hash_column      text,
		hash_partitions  integer,
		premake          integer NOT NULL,
		retention        interval,
		accept_future    interval,
		accept_past      interval,
		created_at       timestamptz NOT NULL DEFAULT now(),
		PRIMARY KEY (table_schema, table_name),
		CHECK (premake >= 0),
		CHECK ((hash_column IS NULL) = (hash_partitions IS NULL))
	);
	COMMENT ON TABLE pgts.series_table IS 'Tables partitioned by time and managed by pgts (pgts table create).';
	CREATE TABLE pgts.load (
		load_id      text PRIMARY KEY,
		target       text NOT NULL,
		fingerprint  text NOT NULL,
		started_at   timestamptz NOT NULL DEFAULT now(),
		finished_at  timestamptz
	);
	COMMENT ON TABLE pgts.load IS 'Resumable loads (pgts load --load-id).';
	CREATE TABLE pgts.load_batch (
		load_id      text NOT NULL REFERENCES pgts.load ON DELETE CASCADE,
		batch        bigint NOT NULL,
		rows         bigint NOT NULL,
		rejected     bigint NOT NULL DEFAULT 0,
		rejects      jsonb,
		committed_at timestamptz NOT NULL DEFAULT now(),
		PRIMARY KEY (load_id, batch)
	);
	COMMENT ON TABLE pgts.load_batch IS 'One row per committed batch of a resumable load, written in the batch''s own transaction.';`,
}

// Version is the catalog version this build of pgts writes.
func Version() int { return len(migrations) }

// Migrate creates or upgrades the pgts schema. It is idempotent and safe to
// run from many processes at once (it serialises on an advisory lock). A
// database whose catalog is newer than this build is refused.
func Migrate(ctx context.Context, conn DB) error {
	var current int
	var present bool
	err := conn.QueryRow(ctx, `SELECT to_regclass('pgts.schema_version') IS NOT NULL`).Scan(&present)
	if err != nil {
		return fmt.Errorf("checking the pgts catalog: %w", err)
	}
	if present {
		if err := conn.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM pgts.schema_version`).Scan(&current); err != nil {
			return fmt.Errorf("reading the pgts catalog version: %w", err)
		}
		if current == len(migrations) {
			return nil
		}
	}
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, 0)`, LockKey); err != nil {
			return fmt.Errorf("locking the pgts catalog: %w", err)
		}
		if _, err := tx.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS pgts;
			CREATE TABLE IF NOT EXISTS pgts.schema_version (
				version    integer PRIMARY KEY,
				applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
			return fmt.Errorf("creating the pgts schema: %w", err)
		}
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM pgts.schema_version`).Scan(&current); err != nil {
			return fmt.Errorf("reading the pgts catalog version: %w", err)
		}
		if current > len(migrations) {
			return fmt.Errorf("the pgts catalog in this database is version %d, newer than this pgts (version %d): upgrade pgts", current, len(migrations))
		}
		for v := current + 1; v <= len(migrations); v++ {
			if _, err := tx.Exec(ctx, migrations[v-1]); err != nil {
				return fmt.Errorf("pgts catalog migration %d: %w", v, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO pgts.schema_version (version) VALUES ($1)`, v); err != nil {
				return fmt.Errorf("recording pgts catalog migration %d: %w", v, err)
			}
		}
		return nil
	})
}
