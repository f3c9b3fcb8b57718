package rollup

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/pgts/pgts/internal/catalog"
	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pg"
)

// Range records (pgts.rollup_invalidation_range, catalog migration 10)
// are what pgts' own writers record: one per batch and partition, the
// batch's times [lo_us, hi_us) and, per group-by column, the values the
// batch wrote (vals; NULL: any key, as a write naming a partition by
// someone else records for the partition's whole range). A record covers
// every bucket overlapping its times and every key whose columns each
// take one of the recorded values: for one group-by column exactly the
// keys written, for several a superset (the product of the values),
// which costs reading more rows but is never wrong.

// RecordedSetting is the transaction setting a writer that records its
// own writes sets, to the rollup ids it records (",1,2,"), so that the
// partitions' statement triggers record nothing for them.
const RecordedSetting = "pgts.rollup_recorded"

// readKeyTypes reads the SQL types of r's group-by columns (those of its
// data table, which has the source's types).
func readKeyTypes(ctx context.Context, db catalog.DB, r *Rollup) error {
	if r.keyTypes != nil || len(r.GroupBy) == 0 {
		return nil
	}
	rows, err := db.Query(ctx, `SELECT attname::text, format_type(atttypid, atttypmod) FROM pg_attribute
		WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped`, r.data())
	if err != nil {
		return fmt.Errorf("reading the columns of %s: %w", r.data(), err)
	}
	types := map[string]string{}
	var name, typ string
	if _, err := pgx.ForEachRow(rows, []any{&name, &typ}, func() error { types[name] = typ; return nil }); err != nil {
		return fmt.Errorf("reading the columns of %s: %w", r.data(), err)
	}
	kt := make([]string, len(r.GroupBy))
	for i, g := range r.GroupBy {
		if kt[i] = types[g]; kt[i] == "" {
			return fmt.Errorf("rollup %s: its data table %s has no column %q", r, r.data(), g)
		}
	}
	r.keyTypes = kt
	return nil
}

// rangeLo is the start of the first bucket a record of times from lo
// (micros, an SQL expression) overlaps, in the time type; rangeHi the
// end of the last bucket a record of times before hi overlaps.
func (r *Rollup) rangeLo(lo string) string { return r.ts.bucket(r.ts.from(lo)) }
func (r *Rollup) rangeHi(hi string) string {
	return r.ts.step(r.ts.bucket(r.ts.from("("+hi+") - 1")), 1)
}

// rangeKeyFilter is the condition that the row aliased alias has a key
// recorded in vals (a jsonb expression: an array per group-by column of
// values as text), true when vals is NULL.
func (r *Rollup) rangeKeyFilter(alias, vals string) string {
	if len(r.GroupBy) == 0 {
		return "true"
	}
	conds := make([]string, len(r.GroupBy))
	for i, g := range r.GroupBy {
		c := alias + "." + pg.QuoteIdent(g)
		conds[i] = fmt.Sprintf("(%s = ANY (ARRAY(SELECT v.x::%s FROM jsonb_array_elements_text(%s -> %d) AS v(x))) OR (%s IS NULL AND (%s -> %d) @> '[null]'))",
			c, r.keyTypes[i], vals, i, c, vals, i)
	}
	return "(" + vals + " IS NULL OR (" + strings.Join(conds, " AND ") + "))"
}

// rangeCovers is the condition that a range record of r below the
// watermark covers the row aliased alias (a row of the data table or of
// the view's aggregates: bucket and the group-by columns).
func (r *Rollup) rangeCovers(alias, watermark string) string {
	return fmt.Sprintf(`EXISTS (SELECT 1 FROM pgts.rollup_invalidation_range g WHERE g.rollup_id = %d AND g.lo_us < %s
		AND %s.bucket >= %s AND %s.bucket < %s AND %s)`, r.ID, watermark, alias, r.rangeLo("g.lo_us"), alias, r.ts.from("g.hi_us"),
		r.rangeKeyFilter(alias, "g.vals"))
}

// pairsSelectKeyed is pairsSelect reading, of each bucket, only the rows
// whose group-by columns take the values of the bucket's pairs (the keys'
// values in the WHERE: an index on the group-by columns and the time
// reads only those keys' rows; without one, the bucket's rows are read
// once, as pairsSelect does). nulls[i] says a pair's key has NULL in
// column i; nil nulls reads the rows with NULL in any column too.
func (r *Rollup) pairsSelectKeyed(pairs string, nulls []bool) string {
	if len(r.GroupBy) == 0 {
		return r.pairsSelect(pairs)
	}
	t := "s." + pg.QuoteIdent(r.TimeColumn)
	conds := make([]string, len(r.GroupBy))
	for i, g := range r.GroupBy {
		c := "s." + pg.QuoteIdent(g)
		conds[i] = fmt.Sprintf("%s = ANY (ARRAY(SELECT (p.key ->> %d)::%s FROM %s p WHERE p.bucket_us = cb.bucket_us))", c, i, r.keyTypes[i], pairs)
		if nulls == nil || nulls[i] {
			conds[i] = "(" + conds[i] + " OR " + c + " IS NULL)"
		}
	}
	agg := r.aggSelect(fmt.Sprintf("(SELECT DISTINCT bucket_us FROM %s p) cb CROSS JOIN LATERAL (SELECT * FROM %s s WHERE %s >= %s AND %s < %s AND %s OFFSET 0) r",
		pairs, r.source(), t, r.ts.from("cb.bucket_us"), t, r.ts.step(r.ts.from("cb.bucket_us"), 1), strings.Join(conds, " AND ")), "")
	return fmt.Sprintf("SELECT a.* FROM (%s) a WHERE EXISTS (SELECT 1 FROM %s p WHERE p.bucket_us = %s AND p.key = %s)",
		agg, pairs, r.ts.us("a.bucket"), r.key("a"))
}

// keyNulls says, per group-by column, whether one of keys (jsonb arrays,
// as text) has NULL in it.
func keyNulls(keys []string, n int) []bool {
	out := make([]bool, n)
	for _, k := range keys {
		if !strings.Contains(k, "null") {
			continue
		}
		var vals []any
		if err := json.Unmarshal([]byte(k), &vals); err != nil {
			for i := range out {
				out[i] = true // unreadable: read NULLs too, never fewer rows
			}
			return out
		}
		for i, v := range vals {
			if i < n && v == nil {
				out[i] = true
			}
		}
	}
	return out
}

// rangeRecord is a row of pgts.rollup_invalidation_range.
type rangeRecord struct {
	id     int64
	lo, hi int64
	vals   [][]*string // nil: any key
}

// rewriteRanges rewrites what the range records of r below the watermark
// cover, BucketsPerTx records per transaction, each transaction deleting
// the records it handled: per record, one statement deletes the covered
// rows of the data table and inserts them again aggregated from the
// source's rows of the record's buckets and keys (the keys in the WHERE,
// so that an index on them and the time is used). Parts of a record in
// frozen buckets are discarded; parts at or past the watermark are left
// to the materialization past it (whose snapshot, later than the record's
// commit, holds the record's rows).
func (rs *Rollups) rewriteRanges(ctx context.Context, r *Rollup, data *partition.Table, frozen int64, st *Stats) error {
	frozen = max(frozen, partition.MinMicros)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		tx, err := rs.lockTx(ctx, r, pgx.ReadCommitted)
		if err != nil {
			return err
		}
		n, err := func() (int, error) {
			var w int64
			if err := tx.QueryRow(ctx, `SELECT watermark FROM pgts.rollup WHERE id = $1`, r.ID).Scan(&w); err != nil {
				return 0, err
			}
			n0, err := rs.sourceRowsRead(ctx, tx, r)
			if err != nil {
				return 0, err
			}
			rows, err := tx.Query(ctx, `SELECT id, lo_us, hi_us, vals::text FROM pgts.rollup_invalidation_range
				WHERE rollup_id = $1 AND lo_us < $2 ORDER BY id LIMIT $3`, r.ID, w, rs.cfg.BucketsPerTx)
			if err != nil {
				return 0, err
			}
			var recs []rangeRecord
			for rows.Next() {
				var rec rangeRecord
				var vals *string
				if err := rows.Scan(&rec.id, &rec.lo, &rec.hi, &vals); err != nil {
					rows.Close()
					return 0, err
				}
				if vals != nil {
					if err := json.Unmarshal([]byte(*vals), &rec.vals); err != nil {
						rows.Close()
						return 0, fmt.Errorf("range invalidation %d: %w", rec.id, err)
					}
				}
				recs = append(recs, rec)
			}
			if err := rows.Err(); err != nil {
				return 0, err
			}
			if len(recs) == 0 {
				return 0, nil
			}
			var done, kept []int64
			for _, rec := range recs {
				past, err := rs.rewriteRange(ctx, tx, r, data, rec, frozen, w, st)
				if err != nil {
					return 0, err
				}
				if past {
					kept = append(kept, rec.id)
				} else {
					done = append(done, rec.id)
				}
			}
			if _, err := tx.Exec(ctx, `DELETE FROM pgts.rollup_invalidation_range WHERE id = ANY($1)`, done); err != nil {
				return 0, err
			}
			// What remains of them is past the watermark: the
			// materialization past it deletes them (a step of it may hold
			// a snapshot older than them while it waits for this one).
			if _, err := tx.Exec(ctx, `UPDATE pgts.rollup_invalidation_range SET lo_us = greatest(lo_us, $2) WHERE id = ANY($1)`, kept, w); err != nil {
				return 0, err
			}
			if err := rs.countRead(ctx, tx, r, n0, st); err != nil {
				return 0, err
			}
			rs.beforeCommit()
			return len(recs), tx.Commit(ctx)
		}()
		_ = tx.Rollback(ctx)
		if err != nil {
			return fmt.Errorf("refreshing %s: rewriting recorded ranges: %w", r, err)
		}
		if n == 0 {
			return nil
		}
		st.Transactions++
	}
}

// rewriteRange rewrites the buckets and keys rec covers in [frozen, w);
// past says rec covers buckets at or after w too.
func (rs *Rollups) rewriteRange(ctx context.Context, tx pgx.Tx, r *Rollup, data *partition.Table, rec rangeRecord, frozen, w int64, st *Stats) (past bool, err error) {
	// [lo, hi): the buckets rec covers, in micros, clipped
	var lo, hi int64
	if err := tx.QueryRow(ctx, fmt.Sprintf("SELECT %s, %s", r.ts.us(r.rangeLo("$1::bigint")), r.ts.us(r.rangeHi("$2::bigint"))),
		rec.lo, rec.hi).Scan(&lo, &hi); err != nil {
		return false, err
	}
	past = hi > w
	if lo < frozen {
		st.Frozen++
	}
	lo, hi = max(lo, frozen), min(hi, w)
	if lo >= hi {
		return past, nil
	}
	st.Ranges++
	if err := rs.ensure(ctx, data, partitionStarts(data, lo, hi)); err != nil {
		return false, err
	}
	args := []any{lo, hi}
	mKeys, sKeys := "true", "true"
	if rec.vals != nil && len(r.GroupBy) > 0 {
		var m, s []string
		for i, g := range r.GroupBy {
			var vals []string
			hasNull := false
			if i < len(rec.vals) {
				for _, v := range rec.vals[i] {
					if v == nil {
						hasNull = true
					} else {
						vals = append(vals, *v)
					}
				}
			}
			args = append(args, vals)
			p := fmt.Sprintf("$%d::text[]::%s[]", len(args), r.keyTypes[i])
			for _, x := range []struct {
				alias string
				out   *[]string
			}{{"m", &m}, {"r", &s}} {
				c := x.alias + "." + pg.QuoteIdent(g)
				cond := c + " = ANY (" + p + ")"
				if hasNull {
					cond = "(" + cond + " OR " + c + " IS NULL)"
				}
				*x.out = append(*x.out, cond)
			}
		}
		mKeys, sKeys = strings.Join(m, " AND "), strings.Join(s, " AND ")
	}
	t := "r." + pg.QuoteIdent(r.TimeColumn)
	stmt := fmt.Sprintf(`WITH gone AS (DELETE FROM %s m WHERE m.bucket >= %s AND m.bucket < %s AND %s RETURNING 1),
	ins AS (INSERT INTO %s (%s) %s RETURNING 1)
	SELECT (SELECT count(*) FROM ins)`,
		r.data(), r.ts.from("$1"), r.ts.from("$2"), mKeys,
		r.data(), joinCols(r.dataColumns()), "SELECT * FROM ("+r.aggSelect(r.source()+" r", fmt.Sprintf("%s >= %s AND %s < %s AND %s", t, r.ts.from("$1"), t, r.ts.from("$2"), sKeys))+
			") a WHERE a.bucket >= "+r.ts.from("$1")) // the first bucket may have started before $1 (frozen)
	var inserted int64
	if err := tx.QueryRow(ctx, stmt, args...).Scan(&inserted); err != nil {
		return false, err
	}
	st.RowsWritten += inserted
	return past, nil
}

// sourceRowsRead is the count of rows of the source's partitions that
// tx's backend read and has not reported yet (sequential scans' rows,
// index and bitmap scans' fetches): the difference of two counts in one
// transaction is what it read between them.
func (rs *Rollups) sourceRowsRead(ctx context.Context, tx pgx.Tx, r *Rollup) (int64, error) {
	var n int64
	// index scans count their fetches on the index (pg_stat_user_tables
	// sums them in idx_tup_fetch), bitmap scans on the table
	err := tx.QueryRow(ctx, `SELECT coalesce(sum(pg_stat_get_xact_tuples_returned(t.relid) + pg_stat_get_xact_tuples_fetched(t.relid)
			+ (SELECT coalesce(sum(pg_stat_get_xact_tuples_fetched(i.indexrelid)), 0) FROM pg_index i WHERE i.indrelid = t.relid)), 0)::bigint
		FROM pg_partition_tree(to_regclass($1)) t WHERE t.isleaf`, r.source()).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("counting the rows read: %w", err)
	}
	return n, nil
}

// countRead adds to st what tx read since its count was n0.
func (rs *Rollups) countRead(ctx context.Context, tx pgx.Tx, r *Rollup, n0 int64, st *Stats) error {
	n1, err := rs.sourceRowsRead(ctx, tx, r)
	st.RowsRead += n1 - n0
	return err
}
