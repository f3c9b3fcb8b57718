package copyload

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgts/pgts/internal/pg"
)

// A bulk partition whose rows fit in a unit (BulkUnitRows) is loaded by
// one worker in one transaction, which makes the table, fills it with COPY
// FREEZE (its rows are written frozen and all-visible: no later pass sets
// hint bits or freezes them; with wal_level = minimal the server writes
// no WAL for them but syncs the table at COMMIT), builds its indexes,
// attaches it and records the ledger rows of all its batches:
//
//	BEGIN; CREATE TABLE P (LIKE parent ...); CHECK (bounds)
//	COPY P FROM STDIN (FORMAT binary, FREEZE)   all batches in one COPY
//	INSERT INTO ledger ...                      × each batch, one round trip
//	CREATE INDEX ON P ...                       × each index of the parent
//	advisory lock; ATTACH PARTITION P; DROP CONSTRAINT bounds; COMMIT
//
// The partition commits as a whole or not at all: a rerun finds it
// attached, with every batch in the ledger, or missing, with none. A batch
// the server refuses (bad data) rolls the unit back; the partition is then
// loaded the split way (table made and committed first, each batch in its
// own transaction through conflict.go's isolation), so rejects keep their
// lines and reasons. Several units (partitions) load at once, one per
// worker, while the router reads on.

// errUnitData marks a unit rolled back because the server refused a row.
var errUnitData = errors.New("the server refused a row of the unit")

// bulkSendUnit queues pending partition p, closed, as one unit on a
// carrier batch. Router only.
func (r *router) bulkSendUnit(ctx context.Context, p *bulkPart) error {
	p.pending = false
	held := p.held
	p.held = nil
	if len(held) == 0 {
		// Every batch was in the ledger already: nothing to make.
		close(p.done)
		return nil
	}
	c := &batch{unit: held, bulk: p, table: p.table, leaf: p.name, lo: p.lo, hi: p.hi}
	select {
	case r.l.queue <- c:
		return nil
	case <-ctx.Done():
		for _, b := range held {
			r.l.release(b)
		}
		p.err = ctx.Err()
		close(p.done)
		return ctx.Err()
	}
}

// sendUnit loads unit c on the worker's connection, with the retries of
// a batch. It closes the partition's done channel when it ends.
func (l *Loader) sendUnit(ctx context.Context, conn **pgxpool.Conn, id int, c *batch) (err error) {
	p, batches := c.bulk, c.unit
	defer func() {
		for _, b := range batches {
			l.release(b)
		}
		p.err = err
		if err == nil && ctx.Err() != nil {
			p.err = ctx.Err()
		}
		close(p.done)
	}()
	if ctx.Err() != nil {
		return nil // drain: another worker failed
	}
	if l.cfg.LoadID != "" {
		for _, b := range batches {
			b.digest = batchDigest(b)
		}
	}
	return l.sendRetrying(ctx, conn, sendOp{
		retryMsg: "retrying a bulk partition",
		attrs:    []any{"partition", p.name, "worker", id},
		seq:      batches[0].seq,
		try: func(ctx context.Context, c *pgx.Conn) error {
			return l.tryUnit(ctx, c, p, batches)
		},
		committed: func(start time.Time) error {
			l.unitCommitted(id, batches, start)
			return nil
		},
		fail: func(err error) error { return l.unitErr(p, batches, err) },
		other: func(ctx context.Context, err error) (bool, bool, error) {
			if !errors.Is(err, errUnitData) {
				return false, false, nil
			}
			l.log.Info("bulk path: a row of the partition was refused; loading it batch by batch to set the refused rows aside",
				"partition", p.name, "err", err)
			return true, false, l.unitSplit(ctx, conn, id, p, batches)
		},
	})
}

// tryUnit is the unit's transaction.
func (l *Loader) tryUnit(ctx context.Context, conn *pgx.Conn, p *bulkPart, batches []*batch) error {
	tx, err := conn.BeginTx(ctx, l.txOpts)
	if err != nil {
		return err
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck // no-op after commit
	t0 := time.Now()
	if _, err := tx.Exec(ctx, l.createSQL(p), pgx.QueryExecModeSimpleProtocol); err != nil {
		return fmt.Errorf("creating partition %q for the bulk path: %w", p.name, err)
	}
	created := time.Since(t0)
	// One COPY for the whole unit: each COPY costs the server a set-up
	// and tear-down of its insert buffer's thousand slots that grows with
	// their square (about 1 ms here), which per 10,000-row batch was a
	// tenth of the server's time for the unit.
	sql := "COPY " + p.table + strings.TrimSuffix(l.copyTail, ")") + ", FREEZE)"
	if _, err := conn.PgConn().CopyFrom(ctx, unitReader(batches, l.binary), sql); err != nil {
		if pg.DataError(err) {
			return fmt.Errorf("%w: %w", errUnitData, err)
		}
		return err
	}
	if l.cfg.LoadID != "" {
		if err := l.recordUnit(ctx, tx, batches); err != nil {
			return err
		}
	}
	t1 := time.Now()
	t2, err := l.indexAndAttach(ctx, tx, p, l.cfg.Workers > 1)
	if err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		if conn.IsClosed() || pg.Retryable(err) {
			return fmt.Errorf("%w: %v", errUnknownOutcome, err)
		}
		return err
	}
	l.created.Add(1)
	l.bulk.mu.Lock()
	l.bulk.times.Create += created
	l.bulk.mu.Unlock()
	l.attached(p, t1, t2, "one transaction")
	return nil
}

// unitCommitted counts the unit's batches as committed.
func (l *Loader) unitCommitted(worker int, batches []*batch, start time.Time) {
	for _, b := range batches {
		l.committed1(b, worker, int64(b.rows()), nil, start)
	}
}

// unitSplit loads a unit the server refused a row of the split way: the
// table made and committed, each batch in its own transaction with the
// refused rows set aside, then indexes and ATTACH.
func (l *Loader) unitSplit(ctx context.Context, conn **pgxpool.Conn, id int, p *bulkPart, batches []*batch) error {
	if err := l.bulkCreate(ctx, p); err != nil {
		return err
	}
	for _, b := range batches {
		if err := l.sendWithRetry(ctx, conn, id, b); err != nil {
			return err
		}
	}
	return l.bulkFinish(ctx, p)
}

func (l *Loader) unitErr(p *bulkPart, batches []*batch, err error) error {
	first, last := batches[0], batches[len(batches)-1]
	src := ""
	if len(first.srcs) > 0 && int(first.srcs[0]) < len(l.sources) {
		src = l.sources[first.srcs[0]]
	}
	var lo, hi int64
	if len(first.lines) > 0 {
		lo = first.lines[0]
	}
	if n := len(last.lines); n > 0 {
		hi = last.lines[n-1]
	}
	return &BatchError{Batch: first.seq, Table: p.name, Source: src, FirstLine: lo, LastLine: hi,
		Err: fmt.Errorf("bulk partition of batches %d-%d: %w", first.seq, last.seq, explain(err))}
}
