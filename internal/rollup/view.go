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
	return r.invalidatedPairs(c, f) + "\nUNION ALL\n" + r.invalidatedRanges(c, p, f)
}

// invalidatedPairs is the part of invalidatedSelect of the pairs.
func (r *Rollup) invalidatedPairs(c, f string) string {
	return r.pairsSelectKeyed(fmt.Sprintf("(SELECT bucket_us, key FROM pgts.rollup_invalidation WHERE rollup_id = %d AND bucket_us < %s AND bucket_us >= %s)",
		r.ID, c, f), nil)
}

// invalidatedRanges is the part of invalidatedSelect of the range records.
func (r *Rollup) invalidatedRanges(c, p, f string) string {
	minLit := fmt.Sprintf("%d", partition.MinMicros)
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
	return ranges
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
// The view plans about as the materialized-only one does: besides the
// scan of the data table it holds calls of the rollup's functions and no
// query of the catalog (each such subquery was planned at every query).
// Its stored rows are checked against the invalidations by comparisons
// with values computed once (pgts."rollup_ID_stored"() in InitPlans: W
// and the range [lo, hi) of the buckets below W that an invalidation
// covers, lo = hi = W when none does), so a row before lo costs one
// comparison; a row in [lo, hi) is looked up in the hashed set of the
// stored groups invalidated (pgts."rollup_ID_stale"(), called once, and
// only when such a row is met).
func (r *Rollup) realTimeStates() string {
	stored, fresh := r.realTimeParts()
	return stored + "\nUNION ALL\n" + fresh
}

// realTimeParts are the two parts of realTimeStates: the stored rows, and
// the function's rows.
func (r *Rollup) realTimeParts() (stored, fresh string) {
	cols := r.dataColumns()
	mcols := make([]string, len(cols))
	for i, c := range cols {
		mcols[i] = "m." + c
	}
	b := func(i int) string { return fmt.Sprintf("(SELECT (%s())[%d])", r.rtFunctionName("stored"), i) }
	// IS TRUE: not an index condition. The planner cannot estimate a
	// bound that is a parameter and took an index scan of the rows below
	// it, in the order of the index, for a few rows (or a BitmapOr of
	// two): a query's own bounds on bucket choose the scan. lo <= W.
	return "SELECT " + strings.Join(mcols, ", ") + " FROM " + r.data() + " m WHERE (m.bucket < " + b(2) +
			fmt.Sprintf("\n\tOR (m.bucket < %s AND (m.bucket >= %s OR (m.bucket, %s) NOT IN (SELECT x.bucket, x.key FROM %s() x)))) IS TRUE",
				b(1), b(3), r.key("m"), r.rtFunctionName("stale")),
		"SELECT * FROM " + r.invalidatedFunctionName() + "()"
}

// Variables of the real-time view's functions (PL/pgSQL, where a name
// that is a variable is the variable: every column their queries read is
// qualified). Their queries are planned once per session with the
// variables as parameters (plan_cache_mode = force_generic_plan), so the
// source's partitions outside the times they bound are pruned when the
// plan starts, not read nor opened.
const (
	vW = "pgts_w" // the watermark (micros)
	vP = "pgts_p" // the row time the bucket at W is materialized up to
	vC = "pgts_c" // the end of the bucket at W when partly materialized, else W
	vF = "pgts_f" // frozen_below, or the smallest bigint
	vN = "pgts_n" // how many buckets below C have pairs
	vB = "pgts_b" // one of them
	// its start and end, of the time type: compared with each row read,
	// not computed for each
	vLo = "pgts_lo"
	vHi = "pgts_hi"
)

// sqlType is the SQL type of the values from gives.
func (ts timeSQL) sqlType() string {
	switch ts.tt {
	case partition.Timestamptz:
		return "timestamptz"
	case partition.Timestamp:
		return "timestamp"
	case partition.Date:
		return "date"
	}
	return "bigint"
}

// loopBuckets is how many buckets with pairs the function of the rows
// not stored reads one by one (each in a plan pruned to its partition
// when it starts, the bucket a parameter); more are read in one query
// (each bucket a rescan of a plan that opens every partition of the
// source).
const loopBuckets = 8

// bucketPairsSelect aggregates the source's rows of the pairs of the
// bucket b (micros, a parameter; lo and hi its start and end in the time
// type): of that bucket, only the rows whose group-by columns take the
// values of its pairs (or NULL), the groups of the pairs kept.
func (r *Rollup) bucketPairsSelect(b, lo, hi string) string {
	t := "s." + pg.QuoteIdent(r.TimeColumn)
	pairs := fmt.Sprintf("pgts.rollup_invalidation p WHERE p.rollup_id = %d AND p.bucket_us = %s", r.ID, b)
	where := fmt.Sprintf("%s >= %s AND %s < %s", t, lo, t, hi)
	for i, g := range r.GroupBy {
		c := "s." + pg.QuoteIdent(g)
		where += fmt.Sprintf(" AND (%s = ANY (ARRAY(SELECT (p.key ->> %d)::%s FROM %s)) OR %s IS NULL)", c, i, r.keyTypes[i], pairs, c)
	}
	agg := r.aggSelect(fmt.Sprintf("(SELECT * FROM %s s WHERE %s) r", r.source(), where), "")
	return fmt.Sprintf("SELECT a.* FROM (%s) a WHERE EXISTS (SELECT 1 FROM %s AND p.key = %s)", agg, pairs, r.key("a"))
}

// currentStates is the bucket at the watermark W: its partial states
// (rows before P) and the source's rows at or after P, aggregated,
// combined; except its invalidated groups.
func (r *Rollup) currentStates() string {
	q := pg.QuoteIdent
	cols := r.dataColumns()
	mcols := make([]string, len(cols))
	for i, c := range cols {
		mcols[i] = "m." + c
	}
	st := "s." + q(r.TimeColumn)
	// bounded above too, so that the planner estimates a narrow range
	raw := r.aggSelect(fmt.Sprintf("(SELECT * FROM %s s WHERE %s >= %s AND %s <= %s) r",
		r.source(), st, r.ts.from(vP), st, r.ts.maxLit()), "")
	partial := fmt.Sprintf("SELECT %s FROM %s m WHERE m.bucket >= %s AND m.bucket < %s", strings.Join(mcols, ", "), r.data(), r.ts.from(vW), r.ts.from(vC))
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
	OR %s))`, sel.String(), partial, raw, group.String(), r.ts.from(vC), r.ID, r.ts.us("a.bucket"), r.key("a"), r.rangeCovers("a", vP))
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

func (r *Rollup) invalidatedFunctionName() string { return r.rtFunctionName("invalidated") }

// rtFunctionName names the real-time view's function pgts."rollup_ID_what".
func (r *Rollup) rtFunctionName(what string) string {
	return "pgts." + pg.QuoteIdent(fmt.Sprintf("rollup_%d_%s", r.ID, what))
}

// realTimeFunctions are the statements making the functions the
// real-time view calls (realTimeStates), in order.
func (r *Rollup) realTimeFunctions() []string {
	return []string{r.storedFunction(), r.staleFunction(), r.invalidatedFunction()}
}

// dropRealTimeFunctions drops them (and nothing else), for rollups made
// before some of them existed too.
func (r *Rollup) dropRealTimeFunctions() string {
	var b strings.Builder
	for _, what := range []string{"invalidated", "stale", "stored"} {
		b.WriteString("DROP FUNCTION IF EXISTS " + r.rtFunctionName(what) + "();")
	}
	return b.String()
}

// bucketType is the SQL type of the data table's bucket column.
func (r *Rollup) bucketType() string {
	if t := r.stateSQLTypes["bucket"]; t != "" {
		return t
	}
	return "bigint"
}

// storedFunction is the function of the values the view's stored rows
// are checked against, once per query: W, and the range [lo, hi) of the
// buckets below W that an invalidation not frozen covers (a pair's
// bucket; a range record's buckets starting before its end), as the
// bucket's type; lo = hi = W when none does. One query without
// parameters: planned once per session.
func (r *Rollup) storedFunction() string {
	minLit := "-9223372036854775808"
	w := r.ts.from("x.watermark")
	body := fmt.Sprintf(`
BEGIN
RETURN (SELECT ARRAY[%[1]s, coalesce(least(p.lo, g.lo), %[1]s), coalesce(greatest(p.hi, g.hi), %[1]s)]
	FROM pgts.rollup x,
	LATERAL (SELECT min(i.bucket_us) AS lo, max(i.bucket_us) AS hi FROM pgts.rollup_invalidation i
		WHERE i.rollup_id = %[2]d AND i.bucket_us < x.watermark AND i.bucket_us >= coalesce(x.frozen_below, %[3]s)) pi,
	LATERAL (SELECT %[4]s AS lo, %[5]s AS hi) p,
	LATERAL (SELECT min(%[6]s) AS lo, max(%[7]s) AS hi FROM pgts.rollup_invalidation_range g
		WHERE g.rollup_id = %[2]d AND g.lo_us < x.watermark) g
	WHERE x.id = %[2]d);
END
`, w, r.ID, minLit, r.ts.from("pi.lo"), r.ts.step(r.ts.from("pi.hi"), 1), r.rangeLo("g.lo_us"), r.ts.from("g.hi_us"))
	return fmt.Sprintf("CREATE OR REPLACE FUNCTION %s() RETURNS %s[] LANGUAGE plpgsql STABLE AS %s",
		r.rtFunctionName("stored"), r.bucketType(), dollarQuote(body))
}

// staleFunction is the function of the stored groups below W that an
// invalidation not frozen covers, (bucket, key): a pair's, and the
// data table's rows a range record covers (its buckets, its keys).
func (r *Rollup) staleFunction() string {
	minLit := "-9223372036854775808"
	body := fmt.Sprintf(`
BEGIN
RETURN QUERY SELECT %[1]s, i.key FROM pgts.rollup x JOIN pgts.rollup_invalidation i
		ON i.rollup_id = %[2]d AND i.bucket_us < x.watermark AND i.bucket_us >= coalesce(x.frozen_below, %[3]s)
	WHERE x.id = %[2]d
UNION ALL
SELECT m.bucket, %[4]s FROM pgts.rollup x JOIN pgts.rollup_invalidation_range g ON g.rollup_id = %[2]d AND g.lo_us < x.watermark
	JOIN %[5]s m ON m.bucket >= %[6]s AND m.bucket < %[7]s AND m.bucket < %[8]s AND %[9]s >= coalesce(x.frozen_below, %[3]s) AND %[10]s
	WHERE x.id = %[2]d;
END
`, r.ts.from("i.bucket_us"), r.ID, minLit, r.key("m"), r.data(), r.rangeLo("g.lo_us"), r.ts.from("g.hi_us"), r.ts.from("x.watermark"),
		r.ts.us("m.bucket"), r.rangeKeyFilter("m", "g.vals"))
	return fmt.Sprintf("CREATE OR REPLACE FUNCTION %s() RETURNS TABLE (bucket %s, key jsonb) LANGUAGE plpgsql STABLE ROWS 100 AS %s",
		r.rtFunctionName("stale"), r.bucketType(), dollarQuote(body))
}

// invalidatedFunction is the function returning the real-time view's
// rows not stored: the current bucket (currentStates) and the invalidated
// groups re-aggregated (invalidatedSelect), a few rows. Each part that
// reads invalidated groups runs only when a record of its kind exists
// (none most of the time). In the view, their queries would be planned
// at every query, over every partition of the source: a PL/pgSQL function
// plans them once per session (the cached plans are made again when a
// partition is added or dropped), with W, P, C and F as parameters; the
// query's own filters apply to its rows after.
func (r *Rollup) invalidatedFunction() string {
	minLit := "-9223372036854775808"
	pt := "greatest(x.watermark, coalesce(x.partial_us, x.watermark))"
	body := fmt.Sprintf(`
#variable_conflict use_variable
DECLARE
	%[1]s bigint; %[2]s bigint; %[3]s bigint; %[4]s bigint; %[13]s bigint; %[15]s bigint; %[16]s %[20]s; %[17]s %[20]s;
BEGIN
SELECT x.watermark, %[5]s, %[6]s, coalesce(x.frozen_below, %[7]s) INTO %[1]s, %[2]s, %[3]s, %[4]s FROM pgts.rollup x WHERE x.id = %[8]d;
RETURN QUERY %[9]s;
SELECT count(DISTINCT i.bucket_us) INTO %[13]s FROM pgts.rollup_invalidation i WHERE i.rollup_id = %[8]d AND i.bucket_us < %[3]s AND i.bucket_us >= %[4]s;
IF %[13]s > %[14]d THEN
	RETURN QUERY %[10]s;
ELSIF %[13]s > 0 THEN
	FOR %[15]s IN SELECT DISTINCT i.bucket_us FROM pgts.rollup_invalidation i WHERE i.rollup_id = %[8]d AND i.bucket_us < %[3]s AND i.bucket_us >= %[4]s LOOP
		%[16]s := %[18]s;
		%[17]s := %[19]s;
		RETURN QUERY %[12]s;
	END LOOP;
END IF;
IF EXISTS (SELECT 1 FROM pgts.rollup_invalidation_range g WHERE g.rollup_id = %[8]d AND g.lo_us < %[2]s) THEN
	RETURN QUERY %[11]s;
END IF;
END
`, vW, vP, vC, vF, pt, r.ts.us(r.rangeHi(pt)), minLit, r.ID,
		r.currentStates(), r.invalidatedPairs(vC, vF), r.invalidatedRanges(vC, vP, vF), r.bucketPairsSelect(vB, vLo, vHi), vN, loopBuckets, vB,
		vLo, vHi, r.ts.from(vB), r.ts.step(r.ts.from(vB), 1), r.ts.sqlType())
	return fmt.Sprintf("CREATE OR REPLACE FUNCTION %s() RETURNS SETOF %s LANGUAGE plpgsql STABLE ROWS 10 SET plan_cache_mode = force_generic_plan AS %s",
		r.invalidatedFunctionName(), r.data(), dollarQuote(body))
}
