package copyload

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgts/pgts/internal/pg"
)

// BatchError is a permanent failure of one batch, mapped back to its input.
type BatchError struct {
	Batch     int64
	Table     string
	Source    string
	FirstLine int64
	LastLine  int64
	Err       error
}

func (e *BatchError) Error() string {
	return fmt.Sprintf("batch %d (%s, %s lines %d-%d): %v", e.Batch, e.Table, e.Source, e.FirstLine, e.LastLine, e.Err)
}

func (e *BatchError) Unwrap() error { return e.Err }

// errUnknownOutcome marks a COMMIT whose connection broke before the
// server answered: the batch may or may not have been stored.
var errUnknownOutcome = errors.New("the connection broke during COMMIT: the batch may or may not be stored")

// worker sends batches from the queue until it is closed. It finishes the
// batch in hand even when the load is interrupted.
func (l *Loader) worker(ctx context.Context, id int) error {
	var conn *pgxpool.Conn
	defer func() {
		if conn != nil {
			conn.Release()
		}
	}()
	for b := range l.queue {
		if b.unit != nil {
			if err := l.sendUnit(ctx, &conn, id, b); err != nil {
				return err
			}
			continue
		}
		if ctx.Err() != nil {
			l.release(b)
			continue // drain: another worker failed
		}
		if err := l.sendWithRetry(ctx, &conn, id, b); err != nil {
			l.release(b)
			return err
		}
		l.bulkCommitted(b)
		l.release(b)
	}
	return nil
}

func (l *Loader) sendWithRetry(ctx context.Context, conn **pgxpool.Conn, id int, b *batch) error {
	if l.cfg.LoadID != "" && b.digest == nil {
		b.digest = batchDigest(b)
	}
	var loaded int64
	var rejects []Reject
	missingRetried := false
	return l.sendRetrying(ctx, conn, sendOp{
		retryMsg: "retrying batch",
		attrs:    []any{"batch", b.seq, "worker", id},
		seq:      b.seq,
		try: func(ctx context.Context, c *pgx.Conn) (err error) {
			loaded, rejects, err = l.tryBatch(ctx, c, b)
			return err
		},
		// After a COMMIT whose outcome the ledger told, it is counted from
		// what was sent (the ledger row holds the same numbers).
		committed: func(start time.Time) error {
			l.committed1(b, id, loaded, rejects, start)
			return l.emitRejects(rejects)
		},
		fail: func(err error) error { return l.batchErr(b, err) },
		other: func(ctx context.Context, err error) (bool, bool, error) {
			if pg.SQLState(err) != "42P01" || l.target.Series == nil || missingRetried {
				return false, false, nil
			}
			// The partition vanished (dropped by someone): make it again.
			missingRetried = true
			l.mgr.Forget(l.target.Series)
			if _, err := l.mgr.Ensure(ctx, l.target.Series, []int64{b.lo}); err != nil {
				return true, false, l.batchErr(b, err)
			}
			return true, true, nil
		},
	})
}

// committedAfterRetry reads the ledger, retrying while the server is away.
func (l *Loader) committedAfterRetry(ctx context.Context, seq int64) (bool, error) {
	delay := l.cfg.Retry.BaseDelay
	var err error
	for i := 0; i < l.cfg.Retry.Attempts; i++ {
		var ok bool
		if ok, err = l.committed(ctx, seq); err == nil {
			return ok, nil
		}
		l.log.Warn("reading the ledger after a broken COMMIT", "batch", seq, "attempt", i+1, "of", l.cfg.Retry.Attempts,
			"reason", retryReason(err), "err", err, "backoff", delay)
		if e := sleepCtx(ctx, delay); e != nil {
			return false, e
		}
		delay = min(delay*2, l.cfg.Retry.MaxDelay)
	}
	return false, err
}

func (l *Loader) committed1(b *batch, worker int, loaded int64, rejects []Reject, start time.Time) {
	l.loaded.Add(loaded)
	l.inserted.Add(b.inserted)
	l.updated.Add(b.updated)
	l.kept.Add(b.kept)
	l.batches.Add(1)
	n := int64(len(b.enc.Bytes()))
	l.bytes.Add(n)
	l.partsMu.Lock()
	l.parts[b.table] = true
	l.partsMu.Unlock()
	if l.cfg.OnBatch != nil {
		l.cfg.OnBatch(BatchInfo{Seq: b.seq, Worker: worker, Table: b.leafOrTable(), Rows: loaded, Rejected: int64(len(rejects)),
			Bytes: n, Start: start, Duration: time.Since(start)})
	}
}

// emitRejects reports a batch's server-side rejects, in one write when
// the sink takes batches.
func (l *Loader) emitRejects(rejects []Reject) error {
	if bs, ok := l.cfg.Rejects.(BatchRejectSink); ok && len(rejects) > 1 {
		if err := bs.RejectBatch(rejects); err != nil {
			return err
		}
		n := l.rejected.Add(int64(len(rejects)))
		if l.cfg.MaxRejects >= 0 && n > l.cfg.MaxRejects {
			r := rejects[len(rejects)-1]
			return fmt.Errorf("%w: more than %d (the last: %s line %d: %s)", ErrTooManyRejects, l.cfg.MaxRejects, r.Source, r.Line, r.Reason)
		}
		return nil
	}
	for _, r := range rejects {
		if err := l.reject(r); err != nil {
			return err
		}
	}
	return nil
}

func (b *batch) leafOrTable() string {
	if b.leaf != "" {
		return b.leaf
	}
	return b.table
}

func (l *Loader) batchErr(b *batch, err error) error {
	src := ""
	if len(b.srcs) > 0 && int(b.srcs[0]) < len(l.sources) {
		src = l.sources[b.srcs[0]]
	}
	var first, last int64
	if n := len(b.lines); n > 0 {
		first, last = b.lines[0], b.lines[n-1]
	}
	return &BatchError{Batch: b.seq, Table: b.leafOrTable(), Source: src, FirstLine: first, LastLine: last, Err: explain(err)}
}

// tryBatch sends the batch in one transaction. A batch the server refuses
// for its data is sent again through a staging table that isolates the
// refused rows (isolate); the good rows commit with the ledger row.
func (l *Loader) tryBatch(ctx context.Context, conn *pgx.Conn, b *batch) (int64, []Reject, error) {
	upsert := l.cfg.OnConflict != ConflictReject
	if upsert {
		// Every row goes through the stage: INSERT ... ON CONFLICT.
		if err := l.ensureStage(ctx, conn); err != nil {
			return 0, nil, err
		}
	}
	tx, err := conn.BeginTx(ctx, l.txOpts)
	if err != nil {
		return 0, nil, err
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck // no-op after commit
	b.inserted, b.updated, b.kept = 0, 0, 0
	var rejects []Reject
	n := b.rows()
	loaded := int64(n)
	if upsert {
		if loaded, rejects, err = l.isolate(ctx, conn, tx, b); err != nil {
			return 0, nil, err
		}
	} else {
		_, err = conn.PgConn().CopyFrom(ctx, b.copyReader(0, n, l.binary), "COPY "+b.table+l.copyTail)
	}
	if err != nil {
		if !pg.DataError(err) {
			return 0, nil, err
		}
		// Start over through the staging table (see isolate).
		if rerr := tx.Rollback(ctx); rerr != nil {
			return 0, nil, rerr
		}
		l.splits.Add(1)
		if err := l.ensureStage(ctx, conn); err != nil {
			return 0, nil, err
		}
		if tx, err = conn.BeginTx(ctx, l.txOpts); err != nil {
			return 0, nil, err
		}
		if loaded, rejects, err = l.isolate(ctx, conn, tx, b); err != nil {
			return 0, nil, err
		}
	}
	if err := l.recordRollups(ctx, tx, b); err != nil {
		return 0, nil, err
	}
	if l.cfg.LoadID != "" {
		if err := l.recordBatch(ctx, tx, b, loaded, rejects); err != nil {
			return 0, nil, err
		}
	}
	if err := tx.Commit(ctx); err != nil {
		if conn.IsClosed() || pg.Retryable(err) {
			return loaded, rejects, fmt.Errorf("%w: %v", errUnknownOutcome, err)
		}
		return 0, nil, err
	}
	return loaded, rejects, nil
}

// serverReject describes row i of b refused by the server. conn is in
// the batch's transaction, usable (the savepoint was rolled back).
func (l *Loader) serverReject(ctx context.Context, conn *pgx.Conn, b *batch, i int, err error) Reject {
	r := Reject{Line: b.lines[i], Reason: err.Error()}
	r.Record, r.RecordForm = l.inputRecord(b, i)
	if int(b.srcs[i]) < len(l.sources) {
		r.Source = l.sources[b.srcs[i]]
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		r.Reason = pgErr.Message
		if pgErr.Detail != "" {
			r.Reason += ": " + pgErr.Detail
		}
		if pgErr.Hint != "" {
			r.Reason += " Hint: " + pgErr.Hint
		}
		r.Reason += " (SQLSTATE " + pgErr.Code + ")"
		r.Column = pgErr.ColumnName
		if r.Column == "" {
			// "COPY t, line 1, column x: ..."
			if _, after, ok := strings.Cut(pgErr.Where, ", column "); ok {
				r.Column, _, _ = strings.Cut(after, ":")
			}
		}
		if r.Column == "" && pgErr.ConstraintName != "" && pgErr.TableName != "" {
			r.Column = l.constraintColumn(ctx, conn, pgErr.SchemaName, pgErr.TableName, pgErr.ConstraintName)
		}
	}
	return r
}

// constraintColumn names the column of a constraint on exactly one column
// (a CHECK (v <> 13), a unique key on one column), "" otherwise.
func (l *Loader) constraintColumn(ctx context.Context, conn *pgx.Conn, schema, table, name string) string {
	key := schema + "\x00" + table + "\x00" + name
	if v, ok := l.colOf.Load(key); ok {
		return v.(string)
	}
	var col string
	err := conn.QueryRow(ctx, `SELECT a.attname FROM pg_constraint c
		JOIN pg_class t ON t.oid = c.conrelid
		JOIN pg_namespace n ON n.oid = t.relnamespace
		JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
		WHERE n.nspname = $1 AND t.relname = $2 AND c.conname = $3 AND cardinality(c.conkey) = 1`,
		schema, table, name).Scan(&col)
	if err != nil {
		col = "" // unknown, several columns, or an expression: leave it blank
	}
	l.colOf.Store(key, col)
	return col
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
