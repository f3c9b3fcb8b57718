package rollup

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pg"
)

// The bucket holding now is materialized in part (catalog migration 12):
// once the watermark has reached it, a refresh stores that bucket's rows
// older than now, its row time T (pgts.rollup.partial_us), as the
// bucket's partial states in the data table, and the real-time view
// combines them with the source's rows at or after T (view.go). Without
// it the view aggregates every raw row of the current bucket at each
// query: for hourly buckets of a row every 10 s, more rows than a week of
// stored ones.
//
// Exactly-once: one transaction at repeatable read rewrites the bucket's
// rows from its snapshot and deletes the invalidation records at or past
// the watermark that the snapshot holds (their rows before T are in the
// states written, those at or after T are the view's raw part, and the
// materialization past the watermark later reads them again from its own
// snapshot). A write committed after the snapshot keeps its record: a
// pair of the bucket, or a range record starting before T, makes the view
// re-aggregate that bucket and key from the raw rows until the next
// refresh; a range record of times at or after T costs nothing.

// materializePartial materializes the rows of the bucket at the watermark
// with times before now, when the watermark is the bucket holding now,
// for a real-time rollup of a series table (a rollup on a rollup, whose
// source is materialized by bucket, does not).
func (rs *Rollups) materializePartial(ctx context.Context, r *Rollup, data *partition.Table, now time.Time, st *Stats) error {
	if !r.RealTime || r.Parent != nil {
		return nil
	}
	t := "r." + pg.QuoteIdent(r.TimeColumn)
	cols := "(" + joinCols(r.dataColumns()) + ")"
	T := now.UnixMicro()
	var b int64 // the bucket holding now
	if err := rs.cfg.DB.QueryRow(ctx, "SELECT "+r.ts.us(r.ts.bucket(r.ts.from("$1::bigint"))), T).Scan(&b); err != nil {
		return fmt.Errorf("refreshing %s: %w", r, err)
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		tx, err := rs.lockTx(ctx, r, pgx.RepeatableRead)
		if err != nil {
			return err
		}
		did, err := func() (bool, error) {
			var w int64
			if err := tx.QueryRow(ctx, `SELECT watermark FROM pgts.rollup WHERE id = $1`, r.ID).Scan(&w); err != nil {
				return false, err
			}
			if w != b || T <= w {
				return false, nil
			}
			n0, err := rs.sourceRowsRead(ctx, tx, r)
			if err != nil {
				return false, err
			}
			// first: another refresh's step that changed the row since
			// this snapshot makes this one fail (40001) and run again
			if _, err := tx.Exec(ctx, `UPDATE pgts.rollup SET partial_us = $2 WHERE id = $1`, r.ID, T); err != nil {
				return false, err
			}
			if err := rs.ensure(ctx, data, []int64{w}); err != nil {
				return false, err
			}
			if _, err := tx.Exec(ctx, fmt.Sprintf("DELETE FROM %s WHERE bucket = %s", r.data(), r.ts.from("$1")), w); err != nil {
				return false, err
			}
			tag, err := tx.Exec(ctx, "INSERT INTO "+r.data()+" "+cols+" "+r.aggSelect(r.source()+" r",
				fmt.Sprintf("%s >= %s AND %s < %s", t, r.ts.from("$1"), t, r.ts.from("$2"))), w, T)
			if err != nil {
				return false, err
			}
			st.RowsWritten += tag.RowsAffected()
			if _, err := tx.Exec(ctx, `DELETE FROM pgts.rollup_invalidation WHERE rollup_id = $1 AND bucket_us >= $2`, r.ID, w); err != nil {
				return false, err
			}
			if _, err := tx.Exec(ctx, `DELETE FROM pgts.rollup_invalidation_range WHERE rollup_id = $1 AND lo_us >= $2`, r.ID, w); err != nil {
				return false, err
			}
			if err := rs.countRead(ctx, tx, r, n0, st); err != nil {
				return false, err
			}
			rs.beforeCommit()
			return true, tx.Commit(ctx)
		}()
		_ = tx.Rollback(ctx)
		if pg.SQLState(err) == "40001" {
			continue // another refresh moved on: read it again
		}
		if err != nil {
			return fmt.Errorf("refreshing %s: materializing the current bucket: %w", r, err)
		}
		if did {
			st.Transactions++
		}
		return nil
	}
}
