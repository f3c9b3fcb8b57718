package partition

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgts/pgts/internal/catalog"
	"github.com/pgts/pgts/internal/pg"
)

// A bulk load (package copyload, --bulk) may fill a partition as a
// standalone table over several transactions and attach it only once its
// rows are in. Until then the table is pending: it is listed in
// pgts.bulk_partition with the one load ID that owns it. Only a run of
// that load may fill it further or attach it; any other writer of its
// range is refused with a *BulkPendingError naming the load, and the
// owner is finished (rerun) or abandoned (copyload.Abandon). Dropping or
// replacing the series table drops its pending tables too (forgetLoads).

// PendingBulk is an unattached partition of a bulk load.
type PendingBulk struct {
	Schema, Name string // the standalone table
	Target       string // the series table, schema.name (as pgts.load.target)
	LoadID       string
	Lower, Upper string // its bounds, as the partition will have them
	Rows         int64  // estimate: the server's count of live rows
	Bytes        int64
	CreatedAt    time.Time
}

// BulkPendingError reports a partition that a bulk load holds unattached,
// met by another load or by partition creation.
type BulkPendingError struct {
	Target, Partition, LoadID string
}

func (e *BulkPendingError) Error() string {
	return fmt.Sprintf("partition %q of %s is held by the interrupted bulk load %q (its rows are committed but not attached yet): "+
		"finish that load (rerun its command, with --load-id %s --bulk) or abandon it (pgts loads abandon %s), then rerun this one",
		e.Partition, e.Target, e.LoadID, e.LoadID, e.LoadID)
}

// PendingBulkPartitions lists the unattached bulk partitions of target
// (schema.name; "" for every table), by target and lower bound.
func PendingBulkPartitions(ctx context.Context, db catalog.DB, target string) ([]PendingBulk, error) {
	if err := catalog.Migrate(ctx, db); err != nil {
		return nil, err
	}
	rows, err := db.Query(ctx, `SELECT b.partition_schema, b.partition_name, b.target, b.load_id, b.lower_bound, b.upper_bound,
			coalesce(greatest(s.n_live_tup, c.reltuples::bigint), 0), coalesce(pg_table_size(c.oid), 0), b.created_at
		FROM pgts.bulk_partition b
		LEFT JOIN pg_class c ON c.oid = to_regclass(quote_ident(b.partition_schema) || '.' || quote_ident(b.partition_name))
		LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
		WHERE $1 = '' OR b.target = $1
		ORDER BY b.target, b.lower_bound, b.partition_name`, target)
	if err != nil {
		return nil, fmt.Errorf("listing pending bulk partitions: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (PendingBulk, error) {
		var p PendingBulk
		err := row.Scan(&p.Schema, &p.Name, &p.Target, &p.LoadID, &p.Lower, &p.Upper, &p.Rows, &p.Bytes, &p.CreatedAt)
		return p, err
	})
}

// PendingOwner returns the load ID holding table schema.name unattached,
// or "" when no bulk load does.
func PendingOwner(ctx context.Context, db catalog.DB, schema, name string) (string, error) {
	var id string
	err := db.QueryRow(ctx, `SELECT load_id FROM pgts.bulk_partition WHERE partition_schema = $1 AND partition_name = $2`,
		schema, name).Scan(&id)
	if err == pgx.ErrNoRows {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("looking for a bulk load holding %q: %w", name, err)
	}
	return id, nil
}

// checkFree refuses to create partition name of t when a table of that
// name exists that is not its partition: held by a bulk load (a
// *BulkPendingError), or anything else. Called under t's creation lock.
func checkFree(ctx context.Context, db catalog.DB, t *Table, name string) error {
	var exists bool
	if err := db.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, pg.QuoteQualified(t.Schema, name)).Scan(&exists); err != nil {
		return fmt.Errorf("checking partition %q: %w", name, err)
	}
	if !exists {
		return nil
	}
	owner, err := PendingOwner(ctx, db, t.Schema, name)
	if err != nil {
		return err
	}
	if owner != "" {
		return &BulkPendingError{Target: t.String(), Partition: name, LoadID: owner}
	}
	return fmt.Errorf("cannot create partition %q of %s: a table of that name exists and is not its partition: rename or drop it", name, t)
}

// DroppedBulk is an unattached bulk partition DropPendingBulk dropped.
type DroppedBulk struct {
	Name   string // schema.name
	Target string
	Rows   int64 // the rows it held, never visible
}

// DropPendingBulk drops, in tx, the unattached bulk partitions of the
// series table target (schema.name), or those of load loadID when target
// is "", and forgets them. A table attached by hand meanwhile is a
// partition now: forgotten, never dropped.
func DropPendingBulk(ctx context.Context, tx pgx.Tx, target, loadID string) ([]DroppedBulk, error) {
	rows, err := tx.Query(ctx, `DELETE FROM pgts.bulk_partition b WHERE (b.target = $1 OR ($1 = '' AND b.load_id = $2))
		AND NOT coalesce((SELECT c.relispartition FROM pg_class c
			WHERE c.oid = to_regclass(quote_ident(b.partition_schema) || '.' || quote_ident(b.partition_name))), false)
		RETURNING b.partition_schema, b.partition_name, b.target,
			to_regclass(quote_ident(b.partition_schema) || '.' || quote_ident(b.partition_name)) IS NOT NULL`, target, loadID)
	if err != nil {
		return nil, fmt.Errorf("forgetting pending bulk partitions: %w", err)
	}
	var out []DroppedBulk
	var exists []bool
	var quoted []string
	for rows.Next() {
		var schema, name, t string
		var ok bool
		if err := rows.Scan(&schema, &name, &t, &ok); err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, DroppedBulk{Name: schema + "." + name, Target: t})
		exists, quoted = append(exists, ok), append(quoted, pg.QuoteQualified(schema, name))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("forgetting pending bulk partitions: %w", err)
	}
	for i, q := range quoted {
		if !exists[i] {
			continue
		}
		if err := tx.QueryRow(ctx, "SELECT count(*) FROM "+q).Scan(&out[i].Rows); err != nil {
			return nil, fmt.Errorf("counting the rows of pending bulk partition %s: %w", q, err)
		}
		if _, err := tx.Exec(ctx, "DROP TABLE "+q); err != nil {
			return nil, fmt.Errorf("dropping pending bulk partition %s: %w", q, err)
		}
	}
	return out, nil
}
