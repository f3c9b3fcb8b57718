package rollup

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pg"
)

// Stats says what a refresh did.
type Stats struct {
	Rollup       string
	Buckets      int64 // bucket ranges past the old watermark materialized (transactions)
	Pairs        int64 // invalidated (bucket, key) pairs rewritten
	Ranges       int64 // range records (pgts load's, one per batch and partition) rewritten below the watermark
	Frozen       int64 // invalidated pairs in frozen buckets, discarded
	RowsWritten  int64 // rows inserted into the data table
	Transactions int64
	RowsRead     int64 // rows of the source read (sequential scans' rows and index scans' fetches)
	Watermark    int64 // micros, after the refresh
	Took         time.Duration
}

// Refresh brings r up to date: it materializes the buckets between the
// watermark and the bucket holding now (for a rollup on a rollup, up to
// that rollup's watermark), then rewrites the invalidated (bucket, key)
// pairs below the watermark, each step in its own bounded transaction
// that deletes the invalidations it handles. Killed at any point, it
// loses nothing: a rerun continues. It never waits for the source's
// writers (it reads the source and writes only the data table and the
// invalidations).
func (rs *Rollups) Refresh(ctx context.Context, r *Rollup) (Stats, error) {
	start := time.Now()
	st := Stats{Rollup: r.String()}
	now := rs.cfg.Manager.Now()
	data, err := rs.cfg.Manager.Table(ctx, r.data())
	if err != nil {
		return st, fmt.Errorf("refreshing %s: its data table: %w", r, err)
	}
	frozen, err := rs.frozenBelow(ctx, r, data, now)
	if err != nil {
		return st, err
	}
	if err := readKeyTypes(ctx, rs.cfg.DB, r); err != nil {
		return st, err
	}
	if err := rs.advance(ctx, r, data, now, &st); err != nil {
		return st, err
	}
	// The invalidations come and go in bursts, faster than autovacuum
	// analyzes them; the rewrite's and the real-time view's joins need
	// their statistics (ANALYZE does not block writers).
	if _, err := rs.cfg.DB.Exec(ctx, `ANALYZE pgts.rollup_invalidation, pgts.rollup_invalidation_range`); err != nil {
		return st, fmt.Errorf("refreshing %s: %w", r, err)
	}
	if err := rs.rewriteRanges(ctx, r, data, frozen, &st); err != nil {
		return st, err
	}
	if err := rs.rewrite(ctx, r, data, frozen, &st); err != nil {
		return st, err
	}
	if err := rs.materializePartial(ctx, r, data, now, &st); err != nil { // partial.go
		return st, err
	}
	if _, err := rs.cfg.DB.Exec(ctx, `UPDATE pgts.rollup SET refreshed_at = now() WHERE id = $1`, r.ID); err != nil {
		return st, err
	}
	if err := rs.cfg.DB.QueryRow(ctx, `SELECT watermark FROM pgts.rollup WHERE id = $1`, r.ID).Scan(&st.Watermark); err != nil {
		return st, err
	}
	st.Took = time.Since(start)
	return st, nil
}

// shiftBack is now minus iv on UTC's calendar, in micros.
func shiftBack(now time.Time, iv partition.Interval) int64 {
	return now.UTC().AddDate(0, -int(iv.Months), -int(iv.Days)).Add(-time.Duration(iv.Micros) * time.Microsecond).UnixMicro()
}

// frozenBelow raises r's frozen bound to the retention cutoffs of its
// source and of its data table: buckets starting before it may have lost
// raw rows (or their own partition), so they are kept as they are.
func (rs *Rollups) frozenBelow(ctx context.Context, r *Rollup, data *partition.Table, now time.Time) (int64, error) {
	cut := int64(partition.MinMicros)
	src, err := rs.cfg.Manager.Table(ctx, r.source())
	if err != nil {
		return 0, fmt.Errorf("refreshing %s: its source: %w", r, err)
	}
	for _, t := range []*partition.Table{src, data} {
		if t.Retention != nil {
			cut = max(cut, shiftBack(now, *t.Retention))
		}
	}
	var f int64
	err = rs.cfg.DB.QueryRow(ctx, `UPDATE pgts.rollup SET frozen_below = greatest(frozen_below, $2) WHERE id = $1
		RETURNING coalesce(frozen_below, $2)`, r.ID, cut).Scan(&f)
	if err != nil {
		return 0, fmt.Errorf("refreshing %s: %w", r, err)
	}
	r.FrozenBelow = &f
	return f, nil
}

// lockTx begins a transaction holding r's refresh lock.
func (rs *Rollups) lockTx(ctx context.Context, r *Rollup, iso pgx.TxIsoLevel) (pgx.Tx, error) {
	tx, err := rs.cfg.DB.Begin(ctx)
	if err != nil {
		return nil, err
	}
	if iso == pgx.RepeatableRead {
		if _, err := tx.Exec(ctx, `SET TRANSACTION ISOLATION LEVEL REPEATABLE READ`); err != nil {
			_ = tx.Rollback(ctx)
			return nil, err
		}
	}
	// Waits for another refresh's transaction (bounded); a step at
	// repeatable read took its snapshot before the wait, and fails on the
	// watermark row another step updated (40001), then runs again.
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, $2)`, LockKey, r.ID); err != nil {
		_ = tx.Rollback(ctx)
		return nil, err
	}
	if err := checkUnaltered(ctx, tx, r); err != nil { // alter.go
		_ = tx.Rollback(ctx)
		return nil, err
	}
	return tx, nil
}

// ensure makes the data table's partitions for bucket starts in [lo, hi).
func (rs *Rollups) ensure(ctx context.Context, data *partition.Table, starts []int64) error {
	_, err := rs.cfg.Manager.Ensure(ctx, data, starts)
	return err
}

// partitionStarts lists one time in each data partition that [lo, hi)
// touches (the data table's partitions are whole days).
func partitionStarts(data *partition.Table, lo, hi int64) []int64 {
	step := int64(data.Interval.Days)*dayMicros + data.Interval.Micros
	if step <= 0 {
		step = dayMicros
	}
	var out []int64
	for t := lo; t < hi; t += step {
		out = append(out, t)
	}
	if len(out) == 0 || out[len(out)-1] != hi-1 {
		out = append(out, hi-1)
	}
	return out
}

// advance materializes the buckets from the watermark up to the bucket
// holding now, BucketsPerTx buckets per transaction, skipping stretches
// without rows.
func (rs *Rollups) advance(ctx context.Context, r *Rollup, data *partition.Table, now time.Time, st *Stats) error {
	db := rs.cfg.DB
	t := "r." + pg.QuoteIdent(r.TimeColumn)
	var target int64
	if err := db.QueryRow(ctx, "SELECT "+r.ts.us(r.ts.bucket(r.ts.from("$1::bigint"))), now.UnixMicro()).Scan(&target); err != nil {
		return fmt.Errorf("refreshing %s: %w", r, err)
	}
	if r.Parent != nil {
		var pw int64
		if err := db.QueryRow(ctx, "SELECT "+r.ts.us(r.ts.bucket(r.ts.from("(SELECT watermark FROM pgts.rollup WHERE id = $1)"))), r.Parent.ID).Scan(&pw); err != nil {
			return fmt.Errorf("refreshing %s: reading the watermark of %s: %w", r, r.Parent, err)
		}
		target = min(target, pw)
	}
	cols := "(" + joinCols(r.dataColumns()) + ")"
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		// One snapshot for the whole step (repeatable read): the rows
		// aggregated are exactly those whose invalidations it deletes.
		tx, err := rs.lockTx(ctx, r, pgx.RepeatableRead)
		if err != nil {
			return err
		}
		done, err := func() (bool, error) {
			var w int64
			if err := tx.QueryRow(ctx, `SELECT watermark FROM pgts.rollup WHERE id = $1`, r.ID).Scan(&w); err != nil {
				return false, err
			}
			if w >= target {
				return true, nil
			}
			n0, err := rs.sourceRowsRead(ctx, tx, r)
			if err != nil {
				return false, err
			}
			var next *int64
			if err := tx.QueryRow(ctx, fmt.Sprintf("SELECT %s FROM %s r WHERE %s >= %s AND %s < %s", r.ts.us(r.ts.bucket("min("+t+")")),
				r.source(), t, r.ts.from("$1"), t, r.ts.from("$2")), w, target).Scan(&next); err != nil {
				return false, err
			}
			hi := target
			if next != nil {
				lo := max(w, *next)
				if err := tx.QueryRow(ctx, "SELECT "+r.ts.us(r.ts.step(r.ts.from("$1"), rs.cfg.BucketsPerTx)), lo).Scan(&hi); err != nil {
					return false, err
				}
				hi = min(hi, target)
				if err := rs.ensure(ctx, data, partitionStarts(data, lo, hi)); err != nil {
					return false, err
				}
			}
			if _, err := tx.Exec(ctx, `UPDATE pgts.rollup SET watermark = $2 WHERE id = $1`, r.ID, hi); err != nil {
				return false, err
			}
			if _, err := tx.Exec(ctx, `DELETE FROM pgts.rollup_invalidation WHERE rollup_id = $1 AND bucket_us >= $2 AND bucket_us < $3`, r.ID, w, hi); err != nil {
				return false, err
			}
			// range records whose buckets all lie in [w, hi): their rows
			// are in this step's snapshot
			if _, err := tx.Exec(ctx, fmt.Sprintf(`DELETE FROM pgts.rollup_invalidation_range g WHERE g.rollup_id = $1
				AND g.lo_us >= $2 AND %s <= %s`, r.rangeHi("g.hi_us"), r.ts.from("$3")), r.ID, w, hi); err != nil {
				return false, err
			}
			if next == nil {
				// no rows: the bucket's partial states, if any, go too
				if _, err := tx.Exec(ctx, fmt.Sprintf("DELETE FROM %s WHERE bucket >= %s AND bucket < %s", r.data(), r.ts.from("$1"), r.ts.from("$2")), w, hi); err != nil {
					return false, err
				}
				rs.beforeCommit()
				return false, tx.Commit(ctx)
			}
			if _, err := tx.Exec(ctx, fmt.Sprintf("DELETE FROM %s WHERE bucket >= %s AND bucket < %s", r.data(), r.ts.from("$1"), r.ts.from("$2")), w, hi); err != nil {
				return false, err
			}
			tag, err := tx.Exec(ctx, "INSERT INTO "+r.data()+" "+cols+" "+r.aggSelect(r.source()+" r",
				fmt.Sprintf("%s >= %s AND %s < %s", t, r.ts.from("$1"), t, r.ts.from("$2"))), w, hi)
			if err != nil {
				return false, err
			}
			st.RowsWritten += tag.RowsAffected()
			st.Buckets++
			if err := rs.countRead(ctx, tx, r, n0, st); err != nil {
				return false, err
			}
			rs.beforeCommit()
			return false, tx.Commit(ctx)
		}()
		_ = tx.Rollback(ctx)
		if pg.SQLState(err) == "40001" {
			continue // another refresh moved the watermark: read it again
		}
		if err != nil {
			return fmt.Errorf("refreshing %s: materializing past the watermark: %w", r, err)
		}
		if done {
			return nil
		}
		st.Transactions++
	}
}

func joinCols(c []string) string {
	s := ""
	for i, x := range c {
		if i > 0 {
			s += ", "
		}
		s += x
	}
	return s
}

// rewrite recomputes the invalidated (bucket, key) pairs below the
// watermark, PairsPerTx per transaction: it deletes their invalidations,
// their rows in the data table, and inserts them again from the source,
// all in one statement (one snapshot). Pairs in frozen buckets are
// discarded.
func (rs *Rollups) rewrite(ctx context.Context, r *Rollup, data *partition.Table, frozen int64, st *Stats) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		tx, err := rs.lockTx(ctx, r, pgx.ReadCommitted)
		if err != nil {
			return err
		}
		n, err := func() (int, error) {
			n0, err := rs.sourceRowsRead(ctx, tx, r)
			if err != nil {
				return 0, err
			}
			buckets, keys, err := nextPairs(ctx, tx, r, rs.cfg.PairsPerTx)
			if err != nil {
				return 0, err
			}
			if len(buckets) == 0 {
				return 0, nil
			}
			var starts []int64
			for _, b := range buckets {
				if b >= frozen && !slices.Contains(starts, b) {
					starts = append(starts, b)
				}
			}
			if len(starts) > 0 {
				if err := rs.ensure(ctx, data, starts); err != nil {
					return 0, err
				}
			}
			var claimed, inserted int64
			if err := tx.QueryRow(ctx, r.pairsRewriteSQL(keyNulls(keys, len(r.GroupBy))), r.ID, buckets, keys, frozen).Scan(&claimed, &inserted); err != nil {
				return 0, err
			}
			for _, b := range buckets {
				if b < frozen {
					st.Frozen++
				} else {
					st.Pairs++
				}
			}
			st.RowsWritten += inserted
			if err := rs.countRead(ctx, tx, r, n0, st); err != nil {
				return 0, err
			}
			rs.beforeCommit()
			return len(buckets), tx.Commit(ctx)
		}()
		_ = tx.Rollback(ctx)
		if err != nil {
			return fmt.Errorf("refreshing %s: rewriting invalidated buckets: %w", r, err)
		}
		if n == 0 {
			return nil
		}
		st.Transactions++
	}
}

// nextPairs reads up to limit invalidated (bucket, key) pairs of r below
// its watermark, in order (keys as jsonb text).
func nextPairs(ctx context.Context, tx pgx.Tx, r *Rollup, limit int) ([]int64, []string, error) {
	var buckets []int64
	var keys []string
	rows, err := tx.Query(ctx, `SELECT bucket_us, key::text FROM (SELECT DISTINCT bucket_us, key FROM pgts.rollup_invalidation
		WHERE rollup_id = $1 AND bucket_us < (SELECT watermark FROM pgts.rollup WHERE id = $1)) p
		ORDER BY bucket_us, key LIMIT $2`, r.ID, limit)
	if err != nil {
		return nil, nil, err
	}
	var b int64
	var k string
	_, err = pgx.ForEachRow(rows, []any{&b, &k}, func() error {
		buckets, keys = append(buckets, b), append(keys, k)
		return nil
	})
	return buckets, keys, err
}

// pairsRewriteSQL is the statement that rewrites a transaction's pairs
// ($2 buckets, $3 keys as jsonb text) of r ($1) not frozen (at or after
// $4): it deletes their invalidations, their rows of the data table, and
// inserts them again aggregated from the source; nulls[i] says a key has
// NULL in group-by column i.
//
// The pairs' rows of the data table are found by bucket and by each
// group-by column's value (typed, so that the index on the group-by
// columns and the bucket finds them, or a hash join on them), then
// checked against the whole key: comparing each pair to every row of its
// bucket (the key as jsonb) made 1,000 pairs of a bucket of 1,000 keys
// cost a million comparisons. A key with NULL in it cannot match by
// equality: those pairs (rare) are deleted by bucket and whole key.
func (r *Rollup) pairsRewriteSQL(nulls []bool) string {
	cols := "(" + joinCols(r.dataColumns()) + ")"
	var typed, eq, withNulls string
	var nullCols []string
	for i, g := range r.GroupBy {
		c := fmt.Sprintf("k%d", i)
		typed += fmt.Sprintf(", (key ->> %d)::%s AS %s", i, r.keyTypes[i], c)
		eq += fmt.Sprintf(" AND m.%s = c.%s", pg.QuoteIdent(g), c)
		nullCols = append(nullCols, "m."+pg.QuoteIdent(g)+" IS NULL")
	}
	if slices.Contains(nulls, true) {
		withNulls = fmt.Sprintf(`
	gone_nulls AS (DELETE FROM %s m USING live c WHERE c.key @> '[null]' AND m.bucket = %s AND %s = c.key AND (%s) RETURNING 1),`,
			r.data(), r.ts.from("c.bucket_us"), r.key("m"), strings.Join(nullCols, " OR "))
	}
	return fmt.Sprintf(`WITH pairs AS (SELECT * FROM unnest($2::bigint[], $3::text[]) AS p(bucket_us, key_text)),
	claimed AS (DELETE FROM pgts.rollup_invalidation i USING pairs p
		WHERE i.rollup_id = $1 AND i.bucket_us = p.bucket_us AND i.key = p.key_text::jsonb RETURNING 1),
	live AS (SELECT bucket_us, key_text::jsonb AS key FROM pairs WHERE bucket_us >= $4),
	gone AS (DELETE FROM %s m USING (SELECT %s AS bucket, key%s FROM live) c
		WHERE m.bucket = c.bucket%s AND %s = c.key RETURNING 1),%s
	ins AS (INSERT INTO %s %s %s RETURNING 1)
	SELECT (SELECT count(*) FROM claimed), (SELECT count(*) FROM ins)`,
		r.data(), r.ts.from("bucket_us"), typed, eq, r.key("m"), withNulls,
		r.data(), cols, r.pairsSelectKeyed("live", nulls))
}

// Invalidate records every (bucket, key) pair of r with rows in the
// source or in the data table between from and to (micros; buckets
// starting in [from, to)), so that the next refresh rewrites them: pgts
// rollup refresh --from --to.
func (rs *Rollups) Invalidate(ctx context.Context, r *Rollup, from, to int64) (int64, error) {
	t := "r." + pg.QuoteIdent(r.TimeColumn)
	lo, hi := r.ts.from("$2"), r.ts.from("$3")
	tag, err := rs.cfg.DB.Exec(ctx, fmt.Sprintf(`INSERT INTO pgts.rollup_invalidation (rollup_id, bucket_us, key)
		SELECT $1, b, k FROM (SELECT %s AS b, %s AS k FROM %s r WHERE %s >= %s AND %s < %s
			UNION SELECT %s, %s FROM %s m WHERE m.bucket >= %s AND m.bucket < %s) x WHERE b >= $2 AND b < $3`,
		r.ts.us(r.ts.bucket(t)), r.key("r"), r.source(), t, r.ts.bucket(lo), t, hi,
		r.ts.us("m.bucket"), r.key("m"), r.data(), lo, hi), r.ID, from, to)
	if err != nil {
		return 0, fmt.Errorf("invalidating %s: %w", r, err)
	}
	return tag.RowsAffected(), nil
}
