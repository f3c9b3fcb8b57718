package shard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgts/pgts/internal/catalog"
	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pg"
)

// MoveResult says what a Move did.
type MoveResult struct {
	Table        string
	Partition    int
	From, To     string
	Rows         int64 // rows copied (0 when only the old copy was left to drop)
	Ledgers      int   // load ledgers moved with the rows
	AlreadyThere bool  // nothing to do
}

// Move moves partition part of sharded table name to shard to, whole:
//
//  1. the coordinator records the move (placement.move_peer = to);
//  2. on the old shard, one transaction S locks the partition's series
//     table in SHARE mode (writers wait; reads go on) and holds it to the
//     end; on the new shard, the series table is made with the same time
//     partitions, and one transaction T empties it, copies every row
//     (binary COPY from S) and the partition's load ledgers (load IDs
//     ending in "/" + its name), and commits;
//  3. one transaction on the coordinator replaces the foreign-table
//     partition by one on the new shard's server and switches the
//     placement;
//  4. S drops the old series table, its catalog row and ledgers, and
//     commits; writers that waited fail, and a rerun of their load (which
//     reads the placement again) resumes on the new shard from the moved
//     ledger: every row once.
//
// Until step 3 commits the old shard holds the truth and a rerun copies
// again from scratch (step 2 empties the new copy first); after it, a
// rerun only drops the old copy. A move under way must be finished (run
// again with the same shard) before another move of the partition. now
// is the clock of the tables' accepted time window: a time partition
// outside it on the old shard (expired, not yet dropped) fails the move
// until pgts maintain drops it.
func (c *Coordinator) Move(ctx context.Context, name string, part int, to string, now func() time.Time) (*MoveResult, error) {
	if now == nil {
		now = time.Now
	}
	if err := catalog.Migrate(ctx, c.pool); err != nil {
		return nil, err
	}
	t, err := c.Table(ctx, name)
	if err != nil {
		return nil, err
	}
	if !t.Ready {
		return nil, fmt.Errorf("%s: %w", t, ErrNotReady)
	}
	if part < 0 || part >= t.Partitions {
		return nil, &pg.UsageError{Err: fmt.Errorf("partition %d: %s has partitions 0 to %d", part, t, t.Partitions-1)}
	}
	if err := c.refuseRollups(ctx, t, "moving a partition of"); err != nil {
		return nil, err
	}
	shards, err := c.List(ctx)
	if err != nil {
		return nil, err
	}
	byName := map[string]Shard{}
	for _, sh := range shards {
		byName[sh.Name] = sh
	}
	if _, ok := byName[to]; !ok {
		return nil, &pg.UsageError{Err: fmt.Errorf("no shard %q (pgts shard list)", to)}
	}
	res := &MoveResult{Table: t.String(), Partition: part, To: to}
	var cur string
	var peer *string
	if err := c.pool.QueryRow(ctx, `SELECT shard, move_peer FROM pgts.shard_placement WHERE table_schema = $1 AND table_name = $2 AND partition = $3`,
		t.Schema, t.Name, part).Scan(&cur, &peer); err != nil {
		return nil, fmt.Errorf("reading the placement of partition %d of %s: %w", part, t, err)
	}
	switch {
	case peer == nil && cur == to:
		res.From, res.AlreadyThere = cur, true
		return res, nil
	case peer == nil:
		if _, err := c.pool.Exec(ctx, `UPDATE pgts.shard_placement SET move_peer = $4 WHERE table_schema = $1 AND table_name = $2 AND partition = $3`,
			t.Schema, t.Name, part, to); err != nil {
			return nil, err
		}
	case cur == to: // switched; the old copy is left to drop
		res.From = *peer
		return res, c.dropMoved(ctx, t, part, byName[*peer])
	case *peer != to:
		return nil, &pg.UsageError{Err: fmt.Errorf("a move of partition %d of %s to shard %q is under way: finish it first (pgts shard move %s %d %s)", part, t, *peer, t, part, *peer)}
	}
	res.From = cur
	from, ok := byName[cur]
	if !ok {
		return nil, fmt.Errorf("partition %d of %s is on shard %q, which is not recorded", part, t, cur)
	}
	if err := c.copyAndSwitch(ctx, t, part, from, byName[to], res, now); err != nil {
		return res, fmt.Errorf("moving partition %d of %s from shard %q to %q (run the same move again to finish): %w", part, t, cur, to, err)
	}
	c.log.Info("moved partition", "table", t.String(), "partition", part, "from", cur, "to", to, "rows", res.Rows, "ledgers", res.Ledgers)
	return res, nil
}

// copyAndSwitch is steps 2 to 4 of Move.
func (c *Coordinator) copyAndSwitch(ctx context.Context, t *Table, part int, from, to Shard, res *MoveResult, now func() time.Time) error {
	if err := c.createOnShard(ctx, t, to, []int{part}, now); err != nil {
		return fmt.Errorf("creating the partition on shard %q: %w", to.Name, err)
	}
	src, err := openShard(ctx, from, 3)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := openShard(ctx, to, 3)
	if err != nil {
		return err
	}
	defer dst.Close()
	name := PartitionName(t.Name, part)
	qn := pg.QuoteQualified(t.Schema, name)

	sconn, err := src.Acquire(ctx)
	if err != nil {
		return err
	}
	defer sconn.Release()
	stx, err := sconn.Begin(ctx)
	if err != nil {
		return err
	}
	defer stx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // after Commit: no-op
	// all its time partitions too (LOCK recurses); attaching new ones waits
	if _, err := stx.Exec(ctx, "LOCK TABLE "+qn+" IN SHARE MODE"); err != nil {
		return fmt.Errorf("locking %s on shard %q: %w", qn, from.Name, err)
	}
	if err := ensureSamePartitions(ctx, src, dst, qn, now); err != nil {
		return err
	}
	rows, err := stx.Query(ctx, `SELECT quote_ident(attname) FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped ORDER BY attnum`, qn)
	if err != nil {
		return err
	}
	cols, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	colList := strings.Join(cols, ", ")

	suffix := "/" + name
	err = pgx.BeginFunc(ctx, dst, func(dtx pgx.Tx) error {
		if _, err := dtx.Exec(ctx, "TRUNCATE "+qn); err != nil {
			return err
		}
		pr, pw := io.Pipe()
		done := make(chan error, 1)
		go func() {
			_, err := stx.Conn().PgConn().CopyTo(ctx, pw, "COPY (SELECT "+colList+" FROM "+qn+") TO STDOUT (FORMAT binary)")
			pw.CloseWithError(err)
			done <- err
		}()
		tag, err := dtx.Conn().PgConn().CopyFrom(ctx, pr, "COPY "+qn+" ("+colList+") FROM STDIN (FORMAT binary)")
		// The source's COPY stops when the destination's did: its own
		// error is then errCopyStopped, and the destination is to blame.
		pr.CloseWithError(errCopyStopped)
		cerr := <-done
		if cerr != nil && !errors.Is(cerr, errCopyStopped) {
			return fmt.Errorf("reading %s on shard %q: %w", qn, from.Name, cerr)
		}
		if err != nil {
			return fmt.Errorf("writing %s on shard %q: %w", qn, to.Name, err)
		}
		if cerr != nil {
			return fmt.Errorf("writing %s on shard %q: %w", qn, to.Name, cerr)
		}
		res.Rows = tag.RowsAffected()
		n, err := moveLedgers(ctx, stx, dtx, suffix)
		res.Ledgers = n
		return err
	})
	if err != nil {
		return err
	}

	key := t.Schema + "." + t.Name
	err = pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, catalog.LockKey, key); err != nil {
			return err
		}
		ft := pg.QuoteQualified(t.Schema, name)
		if _, err := tx.Exec(ctx, "DROP FOREIGN TABLE "+ft); err != nil {
			return fmt.Errorf("detaching partition %d on the coordinator: %w", part, err)
		}
		stmt := fmt.Sprintf("CREATE FOREIGN TABLE %s PARTITION OF %s FOR VALUES WITH (MODULUS %d, REMAINDER %d) SERVER %s OPTIONS (schema_name %s, table_name %s)",
			ft, t.Qualified(), t.Partitions, part, pg.QuoteIdent(ServerName(to.Name)), pg.QuoteLiteral(t.Schema), pg.QuoteLiteral(name))
		if _, err := tx.Exec(ctx, stmt); err != nil {
			return fmt.Errorf("attaching partition %d on shard %q on the coordinator: %w", part, to.Name, err)
		}
		_, err := tx.Exec(ctx, `UPDATE pgts.shard_placement SET shard = $4, move_peer = $5 WHERE table_schema = $1 AND table_name = $2 AND partition = $3`,
			t.Schema, t.Name, part, to.Name, from.Name)
		return err
	})
	if err != nil {
		return err
	}

	if err := dropPartitionTx(ctx, stx, t, name); err != nil {
		return fmt.Errorf("the partition is on shard %q now; dropping the old copy on shard %q: %w", to.Name, from.Name, err)
	}
	if err := stx.Commit(ctx); err != nil {
		return fmt.Errorf("the partition is on shard %q now; dropping the old copy on shard %q: %w", to.Name, from.Name, err)
	}
	_, err = c.pool.Exec(ctx, `UPDATE pgts.shard_placement SET move_peer = NULL WHERE table_schema = $1 AND table_name = $2 AND partition = $3`, t.Schema, t.Name, part)
	return err
}

// errCopyStopped ends the source's side of a move's copy once the
// destination's side has ended.
var errCopyStopped = errors.New("the copy to the new shard stopped")

// ensureSamePartitions makes on dst the time partitions table qn has on
// src (src's list is stable: the caller holds a SHARE lock on it).
func ensureSamePartitions(ctx context.Context, src, dst *pgxpool.Pool, qn string, now func() time.Time) error {
	sm := partition.NewManager(src, nil, now)
	st, err := sm.Table(ctx, qn)
	if err != nil {
		return err
	}
	parts, err := sm.Partitions(ctx, st)
	if err != nil {
		return err
	}
	dm := partition.NewManager(dst, nil, now)
	dt, err := dm.Table(ctx, qn)
	if err != nil {
		return err
	}
	// each partition by its time closest to now, the likeliest inside the
	// table's accepted window (a partition's bounds may both lie outside
	// it when the window is shorter than the interval)
	n := now().UnixMicro()
	times := make([]int64, len(parts))
	for i, p := range parts {
		times[i] = min(max(n, p.Lo), p.Hi-1)
	}
	if _, err := dm.Ensure(ctx, dt, times); err != nil {
		if errors.Is(err, partition.ErrOutsideWindow) {
			return fmt.Errorf("making the time partitions of %s on the new shard: %w (expired partitions: run pgts maintain first)", qn, err)
		}
		return fmt.Errorf("making the time partitions of %s on the new shard: %w", qn, err)
	}
	return nil
}

// moveLedgers copies the load ledgers whose IDs end in suffix from the
// old shard's transaction to the new shard's, replacing any there.
func moveLedgers(ctx context.Context, from, to pgx.Tx, suffix string) (int, error) {
	if _, err := to.Exec(ctx, `DELETE FROM pgts.load WHERE right(load_id, $2) = $1`, suffix, len(suffix)); err != nil {
		return 0, err
	}
	var loads, batches []string
	if err := from.QueryRow(ctx, `SELECT coalesce(array_agg(to_jsonb(l)::text), '{}') FROM pgts.load l WHERE right(load_id, $2) = $1`, suffix, len(suffix)).Scan(&loads); err != nil {
		return 0, fmt.Errorf("reading the ledgers: %w", err)
	}
	if err := from.QueryRow(ctx, `SELECT coalesce(array_agg(to_jsonb(b)::text), '{}') FROM pgts.load_batch b WHERE right(load_id, $2) = $1`, suffix, len(suffix)).Scan(&batches); err != nil {
		return 0, fmt.Errorf("reading the ledgers: %w", err)
	}
	if _, err := to.Exec(ctx, `INSERT INTO pgts.load SELECT (jsonb_populate_record(NULL::pgts.load, j::jsonb)).* FROM unnest($1::text[]) j`, loads); err != nil {
		return 0, fmt.Errorf("writing the ledgers: %w", err)
	}
	if _, err := to.Exec(ctx, `INSERT INTO pgts.load_batch SELECT (jsonb_populate_record(NULL::pgts.load_batch, j::jsonb)).* FROM unnest($1::text[]) j`, batches); err != nil {
		return 0, fmt.Errorf("writing the ledgers: %w", err)
	}
	return len(loads), nil
}

// dropPartitionTx drops partition name of t (a series table), its
// catalog rows and its ledgers on a shard, in tx.
func dropPartitionTx(ctx context.Context, tx pgx.Tx, t *Table, name string) error {
	suffix := "/" + name
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{"DROP TABLE IF EXISTS " + pg.QuoteQualified(t.Schema, name), nil},
		{`DELETE FROM pgts.series_table WHERE table_schema = $1 AND table_name = $2`, []any{t.Schema, name}},
		{`DELETE FROM pgts.shard_member WHERE table_schema = $1 AND table_name = $2`, []any{t.Schema, name}},
		{`DELETE FROM pgts.load WHERE right(load_id, $2) = $1`, []any{suffix, len(suffix)}},
	} {
		if _, err := tx.Exec(ctx, q.sql, q.args...); err != nil {
			return err
		}
	}
	return nil
}

// dropMoved finishes a move whose switch committed: it drops the old copy
// on shard from and clears the move.
func (c *Coordinator) dropMoved(ctx context.Context, t *Table, part int, from Shard) error {
	pool, err := openShard(ctx, from, 2)
	if err != nil {
		return fmt.Errorf("partition %d of %s is on its new shard; dropping the old copy (run the same move again to finish): %w", part, t, err)
	}
	defer pool.Close()
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, catalog.LockKey, t.Schema+"."+PartitionName(t.Name, part)); err != nil {
			return err
		}
		return dropPartitionTx(ctx, tx, t, PartitionName(t.Name, part))
	})
	if err != nil {
		return fmt.Errorf("partition %d of %s is on its new shard; dropping the old copy on shard %q (run the same move again to finish): %w", part, t, from.Name, err)
	}
	_, err = c.pool.Exec(ctx, `UPDATE pgts.shard_placement SET move_peer = NULL WHERE table_schema = $1 AND table_name = $2 AND partition = $3`, t.Schema, t.Name, part)
	return err
}

// MovedError reports a load that failed because a partition it wrote to
// was moved to another shard meanwhile (or is being moved). Committed
// batches stay; with a load ID, a rerun of the same load completes it on
// the partition's new shard, every row once.
type MovedError struct {
	Table     string
	Partition int
	From, To  string
	LoadID    string // the load's, "" when it has none
	Err       error  // what the load met on the old shard
}

func (e *MovedError) Error() string {
	what := fmt.Sprintf("partition %d of %s was moved from shard %q to shard %q while this load wrote to it", e.Partition, e.Table, e.From, e.To)
	if e.LoadID == "" {
		return what + "; the batches committed before it stay (a rerun without --load-id loads them again): " + e.Err.Error()
	}
	return what + fmt.Sprintf("; rerun the same load with --load-id %s to complete it: the rerun loads each missing row once (%v)", e.LoadID, e.Err)
}

func (e *MovedError) Unwrap() error { return e.Err }
