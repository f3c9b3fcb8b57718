package copyload

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgts/pgts/internal/pg"
)

// sendOp is one transaction a worker sends with retries: a batch, or a
// bulk partition loaded as a unit.
type sendOp struct {
	retryMsg string // the warning logged before each retry
	attrs    []any  // log attributes naming it
	seq      int64  // the ledger number that tells whether it committed
	// try runs one attempt on conn: its whole transaction.
	try func(ctx context.Context, conn *pgx.Conn) error
	// committed counts it once committed (start: the attempt's start).
	committed func(start time.Time) error
	// fail wraps the error that ends it.
	fail func(error) error
	// other, when set, decides for an error that neither broke the
	// connection nor left the COMMIT's outcome unknown: handled false
	// ends the op with fail(err); again true runs another attempt at
	// once, not counted; otherwise it ends with ret.
	other func(ctx context.Context, err error) (handled, again bool, ret error)
}

// sendRetrying runs op on the worker's connection (acquired when nil,
// dropped when broken) until it commits, its outcome is known from the
// ledger, or the retries run out. Retries back off exponentially and
// are each logged with their reason and attempt.
func (l *Loader) sendRetrying(ctx context.Context, conn **pgxpool.Conn, op sendOp) error {
	delay := l.cfg.Retry.BaseDelay
	var lastErr error
	for attempt := 1; attempt <= l.cfg.Retry.Attempts; attempt++ {
		if attempt > 1 {
			l.retries.Add(1)
			l.log.Warn(op.retryMsg, append(op.attrs, "attempt", attempt, "of", l.cfg.Retry.Attempts,
				"reason", retryReason(lastErr), "err", lastErr, "backoff", delay)...)
			if err := sleepCtx(ctx, delay); err != nil {
				return err
			}
			delay = min(delay*2, l.cfg.Retry.MaxDelay)
		}
		if *conn == nil {
			c, err := l.pool.Acquire(ctx)
			if err != nil {
				lastErr = err
				if pg.Retryable(err) {
					continue
				}
				return op.fail(err)
			}
			*conn = c
		}
		start := time.Now()
		err := op.try(ctx, (*conn).Conn())
		if err == nil {
			return op.committed(start)
		}
		lastErr = err
		broken := (*conn).Conn().IsClosed() || pg.Retryable(err)
		if broken {
			(*conn).Conn().Close(context.Background()) //nolint:errcheck // the pool drops closed connections
			(*conn).Release()
			*conn = nil
		}
		if errors.Is(err, errUnknownOutcome) {
			if l.cfg.LoadID == "" {
				return op.fail(fmt.Errorf("%w; rerun with --load-id for exactly-once loading", err))
			}
			ok, cerr := l.committedAfterRetry(ctx, op.seq)
			if cerr != nil {
				return op.fail(fmt.Errorf("%w, and the ledger could not be read to tell: %w", err, explain(cerr)))
			}
			if ok {
				return op.committed(start)
			}
			continue
		}
		if broken {
			continue
		}
		if op.other != nil {
			if handled, again, ret := op.other(ctx, err); handled {
				if again {
					attempt--
					continue
				}
				return ret
			}
		}
		return op.fail(err)
	}
	return op.fail(fmt.Errorf("giving up after %d attempts: %w", l.cfg.Retry.Attempts, lastErr))
}
