package rollup

import (
	"fmt"
	"strings"

	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pg"
)

// The real-time view's parts that read the source (statesSQL): the rows
// of the invalidated groups below the watermark, re-aggregated. As the
// refresh does, they read of each bucket only the rows of the keys
// written (the keys' values in the WHERE: an index on the group-by
// columns and the time reads only those), so a backfill of one device
// costs the view that device's rows, not the bucket's.

// invalidatedSelect aggregates, for the real-time view, the source's rows
// of the groups below the watermark w (and not frozen: at or after f)
// that have an invalidation: those of pairs (each bucket read once for
// its pairs' keys, pairsSelectKeyed), and those a range record covers and
// no pair does (per record, the rows of its buckets with the recorded
// values, or all of them for a record of any key, aggregated; records
// that overlap give the same group twice, the same aggregate of the same
// rows: one is kept).
func (r *Rollup) invalidatedSelect(w, f string) string {
	minLit := fmt.Sprintf("%d", partition.MinMicros)
	pairs := r.pairsSelectKeyed(fmt.Sprintf("(SELECT bucket_us, key FROM pgts.rollup_invalidation WHERE rollup_id = %d AND bucket_us < %s AND bucket_us >= %s)",
		r.ID, w, f), nil)
	t := "s." + pg.QuoteIdent(r.TimeColumn)
	times := fmt.Sprintf("%s >= greatest(%s, %s) AND %s < least(%s, %s)",
		t, r.rangeLo("g.lo_us"), r.ts.from("greatest("+f+", "+minLit+")"), t, r.rangeHi("g.hi_us"), r.ts.from(w))
	// A record of any key reads its buckets' rows; one of values only
	// the rows with them (or NULL: a superset, the groups are filtered
	// after). Each scan runs only for its kind of record.
	rows := fmt.Sprintf("SELECT * FROM %s s WHERE %s", r.source(), times)
	if len(r.GroupBy) > 0 {
		rows += " AND g.vals IS NULL"
		keyed := make([]string, len(r.GroupBy))
		for i, g := range r.GroupBy {
			c := "s." + pg.QuoteIdent(g)
			keyed[i] = fmt.Sprintf("(%s = ANY (ARRAY(SELECT v.x::%s FROM jsonb_array_elements_text(g.vals -> %d) AS v(x))) OR %s IS NULL)", c, r.keyTypes[i], i, c)
		}
		rows += fmt.Sprintf("\nUNION ALL SELECT * FROM %s s WHERE %s AND g.vals IS NOT NULL AND %s", r.source(), times, strings.Join(keyed, " AND "))
	}
	agg := r.aggSelect("("+rows+" OFFSET 0) r", "")
	on := []string{"a.bucket"}
	for _, g := range r.GroupBy {
		on = append(on, "a."+pg.QuoteIdent(g))
	}
	ranges := fmt.Sprintf(`SELECT DISTINCT ON (%s) a.* FROM pgts.rollup_invalidation_range g CROSS JOIN LATERAL (%s) a
		WHERE g.rollup_id = %d AND g.lo_us < %s AND %s >= %s AND %s
		AND NOT EXISTS (SELECT 1 FROM pgts.rollup_invalidation p WHERE p.rollup_id = %d AND p.bucket_us = %s AND p.key = %s)`,
		strings.Join(on, ", "), agg, r.ID, w, r.ts.us("a.bucket"), f, r.rangeKeyFilter("a", "g.vals"),
		r.ID, r.ts.us("a.bucket"), r.key("a"))
	return pairs + "\nUNION ALL\n" + ranges
}

// realTimeStates is the query of the real-time view's partial states:
//
//	materialized rows below the watermark, except the groups invalidated
//	UNION ALL  the source's rows at or after the watermark, aggregated
//	UNION ALL  the invalidated groups below the watermark, re-aggregated
//
// The stored rows' check against the invalidations costs little per row:
// a row is looked up among the pairs only when its bucket has one (a
// hashed NOT IN of the few invalidated buckets), and among the range
// records only when its bucket lies between the first and the last bucket
// the records below the watermark cover (none, usually: pgts load's
// records of new rows are past it).
func (r *Rollup) realTimeStates() string {
	q := pg.QuoteIdent
	cols := r.dataColumns()
	w := fmt.Sprintf("(SELECT watermark FROM pgts.rollup WHERE id = %d)", r.ID)
	f := fmt.Sprintf("(SELECT coalesce(frozen_below, -9223372036854775808) FROM pgts.rollup WHERE id = %d)", r.ID)
	mcols := make([]string, len(cols))
	for i, c := range cols {
		mcols[i] = "m." + c
	}
	t := "r." + q(r.TimeColumn)
	stored := "SELECT " + strings.Join(mcols, ", ") + " FROM " + r.data() + " m WHERE m.bucket < " + r.ts.from(w) +
		fmt.Sprintf("\nAND (m.bucket NOT IN (SELECT %s FROM pgts.rollup_invalidation i WHERE i.rollup_id = %d AND i.bucket_us < %s AND i.bucket_us >= %s)",
			r.ts.from("i.bucket_us"), r.ID, w, f) +
		fmt.Sprintf("\n\tOR NOT EXISTS (SELECT 1 FROM pgts.rollup_invalidation i WHERE i.rollup_id = %d AND i.bucket_us = %s AND i.bucket_us >= %s AND i.key = %s))",
			r.ID, r.ts.us("m.bucket"), f, r.key("m")) +
		fmt.Sprintf("\nAND (m.bucket < (SELECT coalesce(min(%s), %s) FROM pgts.rollup_invalidation_range g WHERE g.rollup_id = %d AND g.lo_us < %s)",
			r.rangeLo("g.lo_us"), r.ts.from(w), r.ID, w) +
		fmt.Sprintf("\n\tOR m.bucket >= (SELECT max(%s) FROM pgts.rollup_invalidation_range g WHERE g.rollup_id = %d AND g.lo_us < %s)",
			r.rangeHi("g.hi_us"), r.ID, w) +
		fmt.Sprintf("\n\tOR %s < %s OR NOT %s)", r.ts.us("m.bucket"), f, r.rangeCovers("m", w))
	return stored +
		"\nUNION ALL\n" + r.aggSelect(r.source()+" r", t+" >= "+r.ts.from(w)) +
		"\nUNION ALL\n" + r.invalidatedSelect(w, f)
}
