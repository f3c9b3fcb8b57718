package rollup

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/pgts/pgts/internal/catalog"
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
// of the groups of buckets before c (micros: the watermark, or the end of
// the bucket partly materialized) and not frozen (at or after f) that
// have an invalidation: those of pairs (each bucket read once for its
// pairs' keys, pairsSelectKeyed), and those a range record starting
// before p (the row time materialized up to) covers and no pair does (per
// record, the rows of its buckets with the recorded values, or all of
// them for a record of any key, aggregated; records that overlap give the
// same group twice, the same aggregate of the same rows: one is kept).
func (r *Rollup) invalidatedSelect(c, p, f string) string {
	minLit := fmt.Sprintf("%d", partition.MinMicros)
	pairs := r.pairsSelectKeyed(fmt.Sprintf("(SELECT bucket_us, key FROM pgts.rollup_invalidation WHERE rollup_id = %d AND bucket_us < %s AND bucket_us >= %s)",
		r.ID, c, f), nil)
	t := "s." + pg.QuoteIdent(r.TimeColumn)
	times := fmt.Sprintf("%s >= greatest(%s, %s) AND %s < least(%s, %s)",
		t, r.rangeLo("g.lo_us"), r.ts.from("greatest("+f+", "+minLit+")"), t, r.rangeHi("g.hi_us"), r.ts.from(c))
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
		strings.Join(on, ", "), agg, r.ID, p, r.ts.us("a.bucket"), f, r.rangeKeyFilter("a", "g.vals"),
		r.ID, r.ts.us("a.bucket"), r.key("a"))
	return pairs + "\nUNION ALL\n" + ranges
}

// realTimeStates is the query of the real-time view's partial states:
//
//	materialized rows below the watermark W, except the groups invalidated
//	UNION ALL  the rows of the function pgts."rollup_ID_invalidated"():
//	  the bucket at W: its partial states (rows before the row time P,
//	  partial.go) and the source's rows at or after P, aggregated,
//	  combined; except the groups invalidated
//	  UNION ALL  the invalidated groups below C (W, or the end of the
//	  bucket at W when it is partly materialized), re-aggregated
//
// The stored rows' check against the invalidations costs little per row:
// a row is looked up among the pairs only when its bucket has one (a
// hashed NOT IN of the few invalidated buckets), and among the range
// records only when its bucket lies between the first and the last bucket
// the records below the watermark cover (none, usually: pgts load's
// records of new rows are past it). The source's rows past P are read in
// a lateral subquery (never a parallel plan, whose workers' start costs
// more than the few thousand rows of a bucket), bounded above too so that
// the planner estimates them as a narrow range.
func (r *Rollup) realTimeStates() string {
	w := fmt.Sprintf("(SELECT watermark FROM pgts.rollup WHERE id = %d)", r.ID)
	f := fmt.Sprintf("(SELECT coalesce(frozen_below, -9223372036854775808) FROM pgts.rollup WHERE id = %d)", r.ID)
	return r.storedStates(w, f) + "\nUNION ALL\nSELECT * FROM " + r.invalidatedFunctionName() + "()"
}

// currentStates is the bucket at the watermark W: its partial states
// (rows before P) and the source's rows at or after P, aggregated,
// combined; except its invalidated groups.
func (r *Rollup) currentStates() string {
	q := pg.QuoteIdent
	cols := r.dataColumns()
	rollup := func(expr string) string {
		return fmt.Sprintf("(SELECT %s FROM pgts.rollup WHERE id = %d)", expr, r.ID)
	}
	w := rollup("watermark")
	pt := "greatest(watermark, coalesce(partial_us, watermark))"
	p := rollup(pt)
	c := rollup(r.ts.us(r.rangeHi(pt)))
	mcols := make([]string, len(cols))
	for i, c := range cols {
		mcols[i] = "m." + c
	}
	st := "s." + q(r.TimeColumn)
	raw := r.aggSelect(fmt.Sprintf("%s pt CROSS JOIN LATERAL (SELECT * FROM %s s WHERE %s >= %s AND %s <= (SELECT %s) OFFSET 0) r",
		rollup(pt+" AS p"), r.source(), st, r.ts.from("pt.p"), st, r.ts.maxLit()), "")
	partial := fmt.Sprintf("SELECT %s FROM %s m WHERE m.bucket >= %s AND m.bucket < %s", strings.Join(mcols, ", "), r.data(), r.ts.from(w), r.ts.from(c))
	var sel, group strings.Builder
	sel.WriteString("SELECT r.bucket")
	group.WriteString(" GROUP BY r.bucket")
	for _, g := range r.GroupBy {
		sel.WriteString(", r." + q(g))
		group.WriteString(", r." + q(g))
	}
	for _, a := range r.Aggs {
		exprs := combinedStates(a, a)
		for i, sc := range stateColumns(a) {
			x := exprs[i]
			if typ := r.stateSQLTypes[sc]; typ != "" {
				x = "(" + x + ")::" + typ
			}
			sel.WriteString(", " + x + " AS " + q(sc))
		}
	}
	return fmt.Sprintf(`SELECT a.* FROM (%s FROM (%s
UNION ALL
%s) r%s) a
WHERE NOT (a.bucket < %s AND (EXISTS (SELECT 1 FROM pgts.rollup_invalidation i WHERE i.rollup_id = %d AND i.bucket_us = %s AND i.key = %s)
	OR %s))`, sel.String(), partial, raw, group.String(), r.ts.from(c), r.ID, r.ts.us("a.bucket"), r.key("a"), r.rangeCovers("a", p))
}

// storedStates is the real-time view's materialized rows below the
// watermark w that no invalidation record (not frozen: f) covers.
func (r *Rollup) storedStates(w, f string) string {
	cols := r.dataColumns()
	mcols := make([]string, len(cols))
	for i, c := range cols {
		mcols[i] = "m." + c
	}
	// IS TRUE: not an index condition. The planner cannot estimate a
	// bound that is a parameter and took an index scan of the rows
	// below it, in the order of the index, for a few rows: a query's own
	// bounds on bucket choose the scan.
	return "SELECT " + strings.Join(mcols, ", ") + " FROM " + r.data() + " m WHERE (m.bucket < " + r.ts.from(w) + ") IS TRUE" +
		fmt.Sprintf("\nAND (m.bucket NOT IN (SELECT %s FROM pgts.rollup_invalidation i WHERE i.rollup_id = %d AND i.bucket_us < %s AND i.bucket_us >= %s)",
			r.ts.from("i.bucket_us"), r.ID, w, f) +
		fmt.Sprintf("\n\tOR NOT EXISTS (SELECT 1 FROM pgts.rollup_invalidation i WHERE i.rollup_id = %d AND i.bucket_us = %s AND i.bucket_us >= %s AND i.key = %s))",
			r.ID, r.ts.us("m.bucket"), f, r.key("m")) +
		fmt.Sprintf("\nAND (m.bucket < (SELECT coalesce(min(%s), %s) FROM pgts.rollup_invalidation_range g WHERE g.rollup_id = %d AND g.lo_us < %s)",
			r.rangeLo("g.lo_us"), r.ts.from(w), r.ID, w) +
		fmt.Sprintf("\n\tOR m.bucket >= (SELECT max(%s) FROM pgts.rollup_invalidation_range g WHERE g.rollup_id = %d AND g.lo_us < %s)",
			r.rangeHi("g.hi_us"), r.ID, w) +
		fmt.Sprintf("\n\tOR %s < %s OR NOT %s)", r.ts.us("m.bucket"), f, r.rangeCovers("m", w))
}

// maxLit is the largest value of the time type, as SQL.
func (ts timeSQL) maxLit() string {
	switch ts.tt {
	case partition.Timestamptz:
		return "'infinity'::timestamptz"
	case partition.Timestamp:
		return "'infinity'::timestamp"
	case partition.Date:
		return "'infinity'::date"
	}
	return "9223372036854775807::bigint"
}

// readStateTypes reads the SQL types of the columns of r's data table,
// which the real-time view's combined states are cast to (a sum of
// bigints is numeric).
func readStateTypes(ctx context.Context, db catalog.DB, r *Rollup) error {
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
	r.stateSQLTypes = types
	return nil
}

func (r *Rollup) invalidatedFunctionName() string {
	return "pgts." + pg.QuoteIdent(fmt.Sprintf("rollup_%d_invalidated", r.ID))
}

// invalidatedFunction is the function returning the real-time view's
// rows not stored: the current bucket (currentStates) and the invalidated
// groups re-aggregated (invalidatedSelect), a few rows, and none from the
// invalidated part most of the time. In the view, their query would be
// planned at every query, over every partition of the source, in each of
// its four scans of it: nearly all of the view's planning. A PL/pgSQL
// function plans it once per session (the cached plan is made again when
// a partition is added or dropped); the query's own filters apply to its
// rows after.
func (r *Rollup) invalidatedFunction() string {
	rollup := func(expr string) string {
		return fmt.Sprintf("(SELECT %s FROM pgts.rollup WHERE id = %d)", expr, r.ID)
	}
	f := rollup("coalesce(frozen_below, -9223372036854775808)")
	pt := "greatest(watermark, coalesce(partial_us, watermark))"
	body := "\nBEGIN\nRETURN QUERY " + r.currentStates() + "\nUNION ALL\n" + r.invalidatedSelect(rollup(r.ts.us(r.rangeHi(pt))), rollup(pt), f) + ";\nEND\n"
	return fmt.Sprintf("CREATE OR REPLACE FUNCTION %s() RETURNS SETOF %s LANGUAGE plpgsql STABLE ROWS 10 AS %s",
		r.invalidatedFunctionName(), r.data(), dollarQuote(body))
}
