package rollup

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
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

// rangeRecord is a row of pgts.rollup_invalidation_range, with the
// buckets it covers [lo, hi) (micros, bucket starts).
type rangeRecord struct {
	id     int64
	lo, hi int64
	vals   [][]*string // nil: any key
}

// keySet is what a segment of buckets covers of the keys: any key (all),
// or per group-by column the values (as text, sorted, distinct) and
// whether NULL is one of them.
type keySet struct {
	all   bool
	vals  [][]string
	nulls []bool
}

func (k keySet) equal(o keySet) bool {
	if k.all || o.all {
		return k.all == o.all
	}
	for i := range k.vals {
		if k.nulls[i] != o.nulls[i] || !slices.Equal(k.vals[i], o.vals[i]) {
			return false
		}
	}
	return true
}

// segment is a stretch of buckets [lo, hi) (micros) to rewrite for the
// keys of keys.
type segment struct {
	lo, hi int64
	keys   keySet
}

// mergeRanges merges range records' parts (each already clipped to the
// buckets to rewrite) into disjoint segments: the stretch between two
// consecutive bounds of any record covers, per group-by column, the
// union of the values of the records overlapping it (any key if one of
// them says any key); neighbouring stretches of the same keys are one
// segment. Every bucket and key a record covers is in one segment only,
// so each source row is read once and each (bucket, key) aggregated
// once, however many records overlap. For several group-by columns a
// segment covers the product of the columns' values: a superset of the
// keys written, as a single record already is.
func mergeRanges(parts []rangeRecord, ncols int) []segment {
	var bounds []int64
	for _, p := range parts {
		bounds = append(bounds, p.lo, p.hi)
	}
	slices.Sort(bounds)
	bounds = slices.Compact(bounds)
	var out []segment
	for i := 0; i+1 < len(bounds); i++ {
		lo, hi := bounds[i], bounds[i+1]
		var ks keySet
		var sets []map[string]bool
		covered := false
		for _, p := range parts {
			if p.lo >= hi || p.hi <= lo {
				continue
			}
			covered = true
			if ks.all {
				continue
			}
			if p.vals == nil || ncols == 0 {
				ks.all = true
				continue
			}
			if sets == nil {
				sets, ks.nulls = make([]map[string]bool, ncols), make([]bool, ncols)
				for c := range sets {
					sets[c] = map[string]bool{}
				}
			}
			for c := 0; c < ncols; c++ {
				if c >= len(p.vals) {
					continue
				}
				for _, v := range p.vals[c] {
					if v == nil {
						ks.nulls[c] = true
					} else {
						sets[c][*v] = true
					}
				}
			}
		}
		if !covered {
			continue
		}
		if !ks.all {
			ks.vals = make([][]string, ncols)
			for c, set := range sets {
				for v := range set {
					ks.vals[c] = append(ks.vals[c], v)
				}
				slices.Sort(ks.vals[c])
			}
		} else {
			ks.nulls = nil
		}
		if n := len(out); n > 0 && out[n-1].hi == lo && out[n-1].keys.equal(ks) {
			out[n-1].hi = hi
			continue
		}
		out = append(out, segment{lo: lo, hi: hi, keys: ks})
	}
	return out
}

// rewriteRanges rewrites what the range records of r below the watermark
// cover, BucketsPerTx records per transaction (in time order, so that the
// records of one transaction are neighbours), each transaction deleting
// the records it handled. The records of a transaction are merged into
// disjoint segments of buckets and keys (mergeRanges), and one statement
// deletes the segments' rows of the data table and inserts them again
// aggregated from the source's rows of the segments (the keys' values in
// the WHERE, so that an index on them and the time is used): a live
// load's records, which all cover the same recent buckets and devices,
// cost one read of those rows, not one per record. Parts of a record in
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
			// The segments' key values are constants of the plan (hashed
			// lists, index conditions), never a generic plan's parameters.
			// A segment's rows are read in the heap's order (a bitmap of
			// an index on the keys and the time, or of the time): a plain
			// index scan by key fetches each row from another page, 60
			// times the pages for a live load's minute of 1,000 devices.
			if _, err := tx.Exec(ctx, `SET LOCAL plan_cache_mode = force_custom_plan; SET LOCAL enable_indexscan = off`, pgx.QueryExecModeSimpleProtocol); err != nil {
				return 0, err
			}
			var w int64
			if err := tx.QueryRow(ctx, `SELECT watermark FROM pgts.rollup WHERE id = $1`, r.ID).Scan(&w); err != nil {
				return 0, err
			}
			n0, err := rs.sourceRowsRead(ctx, tx, r)
			if err != nil {
				return 0, err
			}
			rows, err := tx.Query(ctx, fmt.Sprintf(`SELECT id, %s, %s, vals::text FROM pgts.rollup_invalidation_range
				WHERE rollup_id = $1 AND lo_us < $2 ORDER BY lo_us, id LIMIT $3`, r.ts.us(r.rangeLo("lo_us")), r.ts.us(r.rangeHi("hi_us"))),
				r.ID, w, rs.cfg.BucketsPerTx)
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
			var parts []rangeRecord
			for _, rec := range recs {
				if rec.hi > w {
					kept = append(kept, rec.id)
				} else {
					done = append(done, rec.id)
				}
				if rec.lo < frozen {
					st.Frozen++
				}
				if lo, hi := max(rec.lo, frozen), min(rec.hi, w); lo < hi {
					st.Ranges++
					parts = append(parts, rangeRecord{id: rec.id, lo: lo, hi: hi, vals: rec.vals})
				}
			}
			if segs := mergeRanges(parts, len(r.GroupBy)); len(segs) > 0 {
				var starts []int64
				for _, sg := range segs {
					starts = append(starts, partitionStarts(data, sg.lo, sg.hi)...)
				}
				if err := rs.ensure(ctx, data, starts); err != nil {
					return 0, err
				}
				sql, args := r.segmentsRewriteSQL(segs, frozen)
				var inserted int64
				if err := tx.QueryRow(ctx, sql, args...).Scan(&inserted); err != nil {
					return 0, err
				}
				st.RowsWritten += inserted
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

// segmentsRewriteSQL is the statement (and its arguments) that rewrites
// the disjoint segments segs of r: it deletes their rows of the data
// table and inserts them again aggregated from the source's rows of the
// segments, read once each (one aggregate per segment, with its own time
// range and key values, in a UNION ALL: no group spans two segments, so
// each is aggregated once). Buckets starting before
// frozen are kept (the first segment may start inside one).
func (r *Rollup) segmentsRewriteSQL(segs []segment, frozen int64) (string, []any) {
	args := []any{frozen}
	param := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	t := "r." + pg.QuoteIdent(r.TimeColumn)
	var del, arms []string
	for _, sg := range segs {
		lo, hi := r.ts.from(param(sg.lo)), r.ts.from(param(sg.hi))
		mConds := []string{"m.bucket >= " + lo, "m.bucket < " + hi}
		sConds := []string{t + " >= " + lo, t + " < " + hi}
		if !sg.keys.all {
			for i, g := range r.GroupBy {
				p := param(sg.keys.vals[i]) + "::text[]::" + r.keyTypes[i] + "[]"
				for _, x := range []struct {
					alias string
					out   *[]string
				}{{"m", &mConds}, {"r", &sConds}} {
					c := x.alias + "." + pg.QuoteIdent(g)
					cond := c + " = ANY (" + p + ")"
					if sg.keys.nulls[i] {
						cond = "(" + cond + " OR " + c + " IS NULL)"
					}
					*x.out = append(*x.out, cond)
				}
			}
		}
		del = append(del, "("+strings.Join(mConds, " AND ")+")")
		arms = append(arms, "("+r.aggSelect(r.source()+" r", strings.Join(sConds, " AND "))+")")
	}
	return fmt.Sprintf(`WITH gone AS (DELETE FROM %s m WHERE %s RETURNING 1),
	ins AS (INSERT INTO %s (%s) SELECT * FROM (%s) a WHERE a.bucket >= %s RETURNING 1)
	SELECT count(*) FROM ins`,
		r.data(), strings.Join(del, " OR "),
		r.data(), joinCols(r.dataColumns()), strings.Join(arms, "\n\tUNION ALL "), r.ts.from("$1")), args
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
