package copyload

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgts/pgts/internal/catalog"
	"github.com/pgts/pgts/internal/partition"
)

// Abandoned says what Abandon removed.
type Abandoned struct {
	LoadID     string   `json:"load_id"`
	Target     string   `json:"target,omitempty"`   // "" when the ledger was gone already
	Batches    int64    `json:"ledger_batches"`     // ledger rows deleted
	Partitions []string `json:"partitions_dropped"` // unattached bulk partitions dropped
	Rows       int64    `json:"rows_dropped"`       // the rows they held
}

// ErrNoSuchLoad is returned by Abandon for a load ID with no ledger and
// no unattached partition.
var ErrNoSuchLoad = errors.New("no such load")

// Abandon gives up an interrupted load: the unattached partitions its bulk
// path left are dropped (their rows were never visible) and its ledger is
// deleted, in one transaction, so that its ID can start afresh. Rows it
// committed into attached partitions stay. A load that is running (its
// lock is held) is refused with ErrLoadRunning.
func Abandon(ctx context.Context, pool *pgxpool.Pool, loadID string) (Abandoned, error) {
	out := Abandoned{LoadID: loadID}
	if err := catalog.Migrate(ctx, pool); err != nil {
		return out, err
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return out, err
	}
	defer conn.Release()
	var ok bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1, hashtext($2))`, catalog.LoadLockKey, loadID).Scan(&ok); err != nil {
		return out, fmt.Errorf("locking load %q: %w", loadID, err)
	}
	if !ok {
		return out, fmt.Errorf("load %q: %w: stop it first", loadID, ErrLoadRunning)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1, hashtext($2))`, catalog.LoadLockKey, loadID) //nolint:errcheck // the session's end releases it too
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		dropped, err := partition.DropPendingBulk(ctx, tx, "", loadID)
		if err != nil {
			return err
		}
		for _, d := range dropped {
			out.Partitions = append(out.Partitions, d.Name)
			out.Target, out.Rows = d.Target, out.Rows+d.Rows
		}
		var target *string
		err = tx.QueryRow(ctx, `WITH l AS (DELETE FROM pgts.load WHERE load_id = $1 RETURNING target)
			SELECT (SELECT target FROM l), (SELECT count(*) FROM pgts.load_batch WHERE load_id = $1)`, loadID).Scan(&target, &out.Batches)
		if err != nil {
			return err
		}
		if target != nil {
			out.Target = *target
		} else if len(out.Partitions) == 0 {
			return fmt.Errorf("load %q: %w (pgts loads lists the loads with a ledger)", loadID, ErrNoSuchLoad)
		}
		return nil
	})
	if err != nil && !errors.Is(err, ErrNoSuchLoad) {
		return out, fmt.Errorf("abandoning load %q: %w", loadID, err)
	}
	return out, err
}

// LoadInfo describes a load with a ledger (pgts.load).
type LoadInfo struct {
	LoadID     string     `json:"load_id"`
	Target     string     `json:"target"`
	StartedAt  time.Time  `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
	RunPID     *int32     `json:"run_pid,omitempty"`
	RunHost    *string    `json:"run_host,omitempty"`
	Running    bool       `json:"running"` // a run holds its lock now
	Batches    int64      `json:"batches"`
	Rows       int64      `json:"rows"`
	Rejected   int64      `json:"rejected"`
	// Pending counts its unattached bulk partitions (rows not visible).
	Pending int `json:"pending_partitions"`
}

// Loads lists the loads with a ledger, the newest first.
func Loads(ctx context.Context, db catalog.DB) ([]LoadInfo, error) {
	if err := catalog.Migrate(ctx, db); err != nil {
		return nil, err
	}
	rows, err := db.Query(ctx, `SELECT l.load_id, l.target, l.started_at, l.finished_at, l.run_pid, l.run_host,
			EXISTS (SELECT 1 FROM pg_locks k WHERE k.locktype = 'advisory' AND k.granted AND k.database = (SELECT oid FROM pg_database WHERE datname = current_database())
				AND k.classid::bigint = $1 AND k.objid::bigint = (hashtext(l.load_id)::bigint & 4294967295) AND k.objsubid = 2),
			coalesce(b.batches, 0), coalesce(b.rows, 0), coalesce(b.rejected, 0),
			(SELECT count(*) FROM pgts.bulk_partition p WHERE p.load_id = l.load_id)
		FROM pgts.load l
		LEFT JOIN (SELECT load_id, count(*) AS batches, sum(rows)::bigint AS rows, sum(rejected)::bigint AS rejected
			FROM pgts.load_batch GROUP BY load_id) b ON b.load_id = l.load_id
		ORDER BY l.started_at DESC, l.load_id`, catalog.LoadLockKey)
	if err != nil {
		return nil, fmt.Errorf("listing loads: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (LoadInfo, error) {
		var i LoadInfo
		err := row.Scan(&i.LoadID, &i.Target, &i.StartedAt, &i.FinishedAt, &i.RunPID, &i.RunHost, &i.Running, &i.Batches, &i.Rows, &i.Rejected, &i.Pending)
		return i, err
	})
}
