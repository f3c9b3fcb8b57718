package rollup

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgts/pgts/internal/copyload"
	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/records"
)

// planNode is a node of EXPLAIN (ANALYZE, FORMAT JSON).
type planNode map[string]any

// explain runs EXPLAIN (ANALYZE, FORMAT JSON) of sql and returns its plan.
func explain(t *testing.T, pool *pgxpool.Pool, sql string) planNode {
	t.Helper()
	var out string
	if err := pool.QueryRow(context.Background(), "EXPLAIN (ANALYZE, FORMAT JSON) "+sql).Scan(&out); err != nil {
		t.Fatalf("explain %s: %v", sql, err)
	}
	var plans []struct{ Plan planNode }
	if err := json.Unmarshal([]byte(out), &plans); err != nil {
		t.Fatal(err)
	}
	return plans[0].Plan
}

// walk calls f on n and every node under it.
func (n planNode) walk(f func(planNode)) {
	f(n)
	kids, _ := n["Plans"].([]any)
	for _, k := range kids {
		if m, ok := k.(map[string]any); ok {
			planNode(m).walk(f)
		}
	}
}

func (n planNode) num(key string) float64 { v, _ := n[key].(float64); return v }

// sourceRead is the rows of r's source that running sql read (the
// backend's counters of its partitions, as the refresh counts them):
// scans inside functions count too, which EXPLAIN does not show.
func sourceRead(t *testing.T, pool *pgxpool.Pool, rs *Rollups, r *Rollup, sql string) int64 {
	t.Helper()
	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	n0, err := rs.sourceRowsRead(ctx, tx, r)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := tx.Query(ctx, sql)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	n1, err := rs.sourceRowsRead(ctx, tx, r)
	if err != nil {
		t.Fatal(err)
	}
	return n1 - n0
}

// realTimeTable makes the table rt (an index on (device, time)) with 50
// devices' rows, one a minute, over the 10 hours from start, and an
// hourly real-time rollup h of it by device, refreshed at c's time.
func realTimeTable(t *testing.T, c *clock, start time.Time) (*pgxpool.Pool, *partition.Manager, *Rollups, *Rollup) {
	t.Helper()
	ctx := context.Background()
	pool, m, rs := setup(t, c)
	tbl, err := m.Create(ctx, partition.CreateSpec{Name: "rt", Columns: "time timestamptz not null, device int, v float8",
		TimeColumn: "time", Interval: partition.Interval{Days: 1}, Premake: 1, ExtraIndexes: []string{"device, time"}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Ensure(ctx, tbl, []int64{start.UnixMicro(), c.t.UnixMicro()}); err != nil {
		t.Fatal(err)
	}
	execSQL(t, pool, `INSERT INTO rt SELECT $1::timestamptz + i * interval '1 minute', d, i * 0.5 + d
		FROM generate_series(0, 599) i, generate_series(1, 50) d`, start)
	r, err := rs.Create(ctx, Spec{Name: "h", On: "rt", Bucket: partition.Interval{Micros: 3600e6}, GroupBy: []string{"device"},
		Aggs: mustAggs(t, "avg(v), count(*), max(v)"), RealTime: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rs.Refresh(ctx, r); err != nil {
		t.Fatal(err)
	}
	execSQL(t, pool, `ANALYZE rt`)
	return pool, m, rs, r
}

const (
	rtView = `SELECT (extract(epoch FROM bucket) * 1000000)::bigint, jsonb_build_array(device)::text, avg_v, count, max_v FROM h`
	rtRaw  = `SELECT (extract(epoch FROM b) * 1000000)::bigint, jsonb_build_array(device)::text, avg(v), count(*), max(v)
		FROM (SELECT pgts.time_bucket('1 hour', time) b, * FROM rt) x GROUP BY 1, 2`
)

// loadRT loads rows (time, device, v) into rt with pgts' loader (one
// range record per batch).
func loadRT(t *testing.T, pool *pgxpool.Pool, m *partition.Manager, c *clock, rows [][3]any) {
	t.Helper()
	ctx := context.Background()
	var in strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&in, "%s,%v,%v\n", r[0].(time.Time).Format(time.RFC3339Nano), r[1], r[2])
	}
	rd, err := records.NewReader(strings.NewReader(in.String()), records.DefaultOptions(records.CSV))
	if err != nil {
		t.Fatal(err)
	}
	target, err := copyload.LookupTarget(ctx, pool, m, "rt")
	if err != nil {
		t.Fatal(err)
	}
	cfg := copyload.DefaultConfig()
	cfg.Now = c.now
	l, err := copyload.New(pool, m, target, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Run(ctx, &copyload.FileSource{Inputs: []copyload.Input{{Name: "in.csv", Reader: rd}}, Columns: []int{0, 1, 2}}); err != nil {
		t.Fatal(err)
	}
}

// TestRealTimeViewReadsInvalidatedKeysOnly: after a write of one device
// into an old bucket (a (bucket, key) pair by psql, a range record by
// pgts load), the real-time view re-aggregates that device's rows of the
// bucket, not every device's (as the refresh does), and still equals
// GROUP BY over the raw rows.
func TestRealTimeViewReadsInvalidatedKeysOnly(t *testing.T) {
	c := &clock{t: time.Date(2024, 3, 13, 15, 30, 0, 0, time.UTC)}
	start := time.Date(2024, 3, 12, 0, 0, 0, 0, time.UTC)
	pool, m, rs, r := realTimeTable(t, c, start)
	bucket := start.Add(3 * time.Hour)
	q := fmt.Sprintf(`SELECT * FROM h WHERE bucket = '%s'`, bucket.Format(time.RFC3339))
	// each device has 60 rows in the bucket; 50 devices
	const mine = 60 + 1
	for _, how := range []string{"psql", "pgts load"} {
		if how == "psql" {
			execSQL(t, pool, `INSERT INTO rt VALUES ($1, 7, -1)`, bucket.Add(90*time.Second))
		} else {
			loadRT(t, pool, m, c, [][3]any{{bucket.Add(100 * time.Second), 8, -2}})
		}
		n := sourceRead(t, pool, rs, r, q)
		t.Logf("%s: the view read %d source rows", how, n)
		if n > 2*mine {
			t.Errorf("%s: the real-time view read %d source rows for one invalidated device of a bucket (%d rows of it, %d of the bucket)",
				how, n, mine, 50*60+1)
		}
		if d := diff(fetch(t, pool, rtView), fetch(t, pool, rtRaw), all); d != "" {
			t.Fatalf("%s: the real-time view differs from GROUP BY:\n%s", how, d)
		}
		if _, err := rs.Refresh(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
}

// scanLoops is the loops of the scans of relations named name.
func (n planNode) scanLoops(name string) int64 {
	var sum float64
	n.walk(func(p planNode) {
		if rel, _ := p["Relation Name"].(string); rel == name {
			sum += p.num("Actual Loops")
		}
	})
	return int64(sum)
}

// TestRealTimeViewChecksStoredRowsOnce: the real-time view checks its
// stored rows against the invalidation records without a lookup per
// stored row (a hashed list of the invalidated buckets; the range records
// only from the first bucket one covers), with a pair and a range record
// below the watermark, and without any.
func TestRealTimeViewChecksStoredRowsOnce(t *testing.T) {
	c := &clock{t: time.Date(2024, 3, 13, 15, 30, 0, 0, time.UTC)}
	start := time.Date(2024, 3, 12, 0, 0, 0, 0, time.UTC)
	pool, m, _, _ := realTimeTable(t, c, start)
	const stored = 50 * 10
	check := func(what string) {
		t.Helper()
		p := explain(t, pool, `SELECT * FROM h`)
		for _, rel := range []string{"rollup_invalidation", "rollup_invalidation_range"} {
			// a few scans per part of the view, and one per stored row
			// of an invalidated bucket (50 devices)
			if n := p.scanLoops(rel); n > 60 {
				t.Errorf("%s: the view scanned %s %d times (%d stored rows)", what, rel, n, stored)
			}
		}
		if d := diff(fetch(t, pool, rtView), fetch(t, pool, rtRaw), all); d != "" {
			t.Fatalf("%s: the real-time view differs from GROUP BY:\n%s", what, d)
		}
	}
	check("no invalidation")
	execSQL(t, pool, `INSERT INTO rt VALUES ($1, 7, -1)`, start.Add(3*time.Hour+time.Minute))
	check("a pair")
	loadRT(t, pool, m, c, [][3]any{{start.Add(8*time.Hour + time.Minute), 8, -2}})
	check("a pair and a range record")
}

// TestRealTimeViewPartialBucket: the refresh materializes the bucket
// holding now up to now (the row time T), and the real-time view reads
// of the source only the rows at or after T; rows written after the
// refresh with times before T (psql: a pair of the bucket; pgts load: a
// range record starting before T) make the view re-aggregate that
// bucket's key, and at every point the view equals GROUP BY over the raw
// rows, up to the refresh that materializes the whole bucket.
func TestRealTimeViewPartialBucket(t *testing.T) {
	c := &clock{t: time.Date(2024, 3, 13, 15, 30, 0, 0, time.UTC)}
	start := time.Date(2024, 3, 12, 0, 0, 0, 0, time.UTC)
	pool, m, rs, r := realTimeTable(t, c, start)
	partialScenario(t, c, pool, m, rs, r, true)
}

// TestViewBeforePartialBuckets: a rollup whose view was made before
// catalog migration 12 (its states: the stored rows below the watermark,
// the source's rows at or after it, the invalidated groups below it) and
// which has no partial_us yet stays equal to GROUP BY when the refresh
// materializes its current bucket in part.
func TestViewBeforePartialBuckets(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: time.Date(2024, 3, 13, 15, 30, 0, 0, time.UTC)}
	start := time.Date(2024, 3, 12, 0, 0, 0, 0, time.UTC)
	pool, m, rs, r := realTimeTable(t, c, start)
	if err := readKeyTypes(ctx, pool, r); err != nil {
		t.Fatal(err)
	}
	w := fmt.Sprintf("(SELECT watermark FROM pgts.rollup WHERE id = %d)", r.ID)
	f := fmt.Sprintf("(SELECT coalesce(frozen_below, -9223372036854775808) FROM pgts.rollup WHERE id = %d)", r.ID)
	states := r.storedStatesBefore(w, f) + "\nUNION ALL\n" + r.aggSelect(r.source()+" r", "r.time >= "+r.ts.from(w)) +
		"\nUNION ALL\n" + r.invalidatedSelect(w, w, f)
	execSQL(t, pool, "CREATE OR REPLACE VIEW h AS "+finalSelect(states, r.GroupBy, r.Aggs, map[string]bool{"avg_v": true}))
	execSQL(t, pool, `UPDATE pgts.rollup SET partial_us = NULL`)
	partialScenario(t, c, pool, m, rs, r, false)
}

// partialScenario writes into the bucket holding now, before and after
// the time the refresh materialized it up to, refreshes as the clock
// moves, and checks the view h against GROUP BY at each point; partial
// says whether the view reads only the rows after that time.
func partialScenario(t *testing.T, c *clock, pool *pgxpool.Pool, m *partition.Manager, rs *Rollups, r *Rollup, partial bool) {
	ctx := context.Background()
	bucket := time.Date(2024, 3, 13, 15, 0, 0, 0, time.UTC)
	// 50 devices, a row a minute from 15:00 to 15:29
	execSQL(t, pool, `INSERT INTO rt SELECT $1::timestamptz + i * interval '1 minute', d, i + d * 0.25
		FROM generate_series(0, 29) i, generate_series(1, 50) d`, bucket)
	same := func(what string) {
		t.Helper()
		if d := diff(fetch(t, pool, rtView), fetch(t, pool, rtRaw), all); d != "" {
			t.Fatalf("%s: the real-time view differs from GROUP BY:\n%s", what, d)
		}
	}
	refresh := func() {
		t.Helper()
		if _, err := rs.Refresh(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	refresh()
	same("after the refresh")
	// one row per device after T, by pgts load (range records of times
	// at or after T)
	var rows [][3]any
	for d := 1; d <= 50; d++ {
		rows = append(rows, [3]any{c.t.Add(time.Duration(d) * time.Second), d, float64(d)})
	}
	loadRT(t, pool, m, c, rows)
	q := fmt.Sprintf(`SELECT * FROM h WHERE bucket >= '%s'`, bucket.Format(time.RFC3339))
	if n := sourceRead(t, pool, rs, r, q); partial && n > 2*50 {
		t.Errorf("the real-time view read %d source rows for the current bucket: 50 written since the refresh, %d before it", n, 50*30)
	}
	same("rows after T by pgts load")
	// late rows before T: psql (a pair), pgts load (a range record)
	execSQL(t, pool, `INSERT INTO rt VALUES ($1, 3, -3)`, bucket.Add(10*time.Minute+time.Second))
	same("a row before T by psql")
	loadRT(t, pool, m, c, [][3]any{{bucket.Add(20*time.Minute + time.Second), 4, -4.0}})
	same("a row before T by pgts load")
	execSQL(t, pool, `UPDATE rt SET v = v + 1 WHERE device = 5 AND time >= $1`, bucket)
	execSQL(t, pool, `DELETE FROM rt WHERE device = 6 AND time >= $1`, bucket)
	same("an update and a delete in the bucket")
	c.t = c.t.Add(10 * time.Minute)
	refresh()
	same("refreshed 10 minutes later")
	execSQL(t, pool, `INSERT INTO rt VALUES ($1, 7, -7), ($2, 8, -8)`, c.t.Add(-time.Minute), c.t.Add(time.Minute))
	same("rows just before and after T by psql")
	c.t = c.t.Add(30 * time.Minute) // the next bucket
	refresh()
	same("refreshed in the next bucket")
	var partialUs, watermark int64
	if err := pool.QueryRow(ctx, `SELECT partial_us, watermark FROM pgts.rollup WHERE id = $1`, r.ID).Scan(&partialUs, &watermark); err != nil {
		t.Fatal(err)
	}
	if partialUs != c.t.UnixMicro() || watermark != bucket.Add(time.Hour).UnixMicro() {
		t.Errorf("partial_us %d, watermark %d; want %d and %d", partialUs, watermark, c.t.UnixMicro(), bucket.Add(time.Hour).UnixMicro())
	}
	var n int64
	if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM pgts.rollup_invalidation) + (SELECT count(*) FROM pgts.rollup_invalidation_range)`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d invalidation records left after the refresh", n)
	}
}

// TestRealTimeViewPlansSourceOnce: the real-time view's plan has no scan
// of the source's partitions: its parts that read the source (the rows
// after the partial bucket's time, the invalidated groups), a few rows,
// are planned once per session in a function, not at each query.
func TestRealTimeViewPlansSourceOnce(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: time.Date(2024, 3, 13, 15, 30, 0, 0, time.UTC)}
	start := time.Date(2024, 3, 12, 0, 0, 0, 0, time.UTC)
	pool, _, _, _ := realTimeTable(t, c, start)
	var leaves int64
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_partition_tree('rt') WHERE isleaf`).Scan(&leaves); err != nil {
		t.Fatal(err)
	}
	var out string
	if err := pool.QueryRow(ctx, "EXPLAIN (FORMAT JSON) SELECT * FROM h").Scan(&out); err != nil {
		t.Fatal(err)
	}
	var plans []struct{ Plan planNode }
	if err := json.Unmarshal([]byte(out), &plans); err != nil {
		t.Fatal(err)
	}
	var scans int64
	plans[0].Plan.walk(func(p planNode) {
		if rel, _ := p["Relation Name"].(string); rel == "rt_default" || strings.HasPrefix(rel, "rt_p") {
			scans++
		}
	})
	if scans > 0 {
		t.Errorf("the view's plan has %d scans of the source's %d partitions", scans, leaves)
	}
}

// storedStatesBefore is the stored part of the real-time views made
// before the functions of the stored rows' checks: the materialized rows
// below the watermark w that no invalidation record (not frozen: f)
// covers, checked by subqueries of the catalog.
func (r *Rollup) storedStatesBefore(w, f string) string {
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

// catalogScans is the nodes of p scanning pgts' catalog of rollups and
// their invalidations.
func (n planNode) catalogScans() int64 {
	var sum int64
	n.walk(func(p planNode) {
		switch rel, _ := p["Relation Name"].(string); rel {
		case "rollup", "rollup_invalidation", "rollup_invalidation_range":
			sum++
		}
	})
	return sum
}

// functionLoops is the loops of the scans of the function named name.
func (n planNode) functionLoops(name string) (nodes, loops int64) {
	n.walk(func(p planNode) {
		if f, _ := p["Function Name"].(string); f == name {
			nodes++
			loops += int64(p.num("Actual Loops"))
		}
	})
	return nodes, loops
}

// TestRealTimeViewPlansNoCatalogQueries: the real-time view plans about
// as the materialized-only one does: its plan has no query of the
// catalog of rollups and invalidations (each one a subquery planned at
// every query of the view) but calls of the rollup's functions; its
// stored rows are checked against values computed once, and the set of
// stored groups invalidated is computed at most once per query, not at
// all without an invalidation below the watermark. With no invalidation,
// a pair and a range record, the view equals GROUP BY.
func TestRealTimeViewPlansNoCatalogQueries(t *testing.T) {
	c := &clock{t: time.Date(2024, 3, 13, 15, 30, 0, 0, time.UTC)}
	start := time.Date(2024, 3, 12, 0, 0, 0, 0, time.UTC)
	pool, m, _, r := realTimeTable(t, c, start)
	stale := fmt.Sprintf("rollup_%d_stale", r.ID)
	check := func(what string, maxStale int64) {
		t.Helper()
		p := explain(t, pool, `SELECT * FROM h WHERE bucket >= '2024-03-12'`)
		if n := p.catalogScans(); n > 0 {
			t.Errorf("%s: the view's plan has %d scans of the catalog of rollups and invalidations", what, n)
		}
		if nodes, loops := p.functionLoops(stale); nodes != 1 || loops > maxStale {
			t.Errorf("%s: the view's plan has %d scans of %s, run %d times; want 1, run at most %d times", what, nodes, stale, loops, maxStale)
		}
		if d := diff(fetch(t, pool, rtView), fetch(t, pool, rtRaw), all); d != "" {
			t.Fatalf("%s: the real-time view differs from GROUP BY:\n%s", what, d)
		}
	}
	check("no invalidation", 0)
	execSQL(t, pool, `INSERT INTO rt VALUES ($1, 7, -1)`, start.Add(3*time.Hour+time.Minute))
	check("a pair", 1)
	loadRT(t, pool, m, c, [][3]any{{start.Add(8*time.Hour + time.Minute), 8, -2}})
	check("a pair and a range record", 1)
}

// nestedPlans runs sql on a connection of its own with auto_explain
// logging to it the plan of every statement run, those inside functions
// too, and returns those plans but the last (sql's own).
func nestedPlans(t *testing.T, pool *pgxpool.Pool, sql string) []planNode {
	t.Helper()
	ctx := context.Background()
	cfg, err := pgx.ParseConfig(pool.Config().ConnConfig.ConnString())
	if err != nil {
		t.Fatal(err)
	}
	var logged []string
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		if i := strings.Index(n.Message, "plan:\n"); i >= 0 {
			logged = append(logged, n.Message[i+len("plan:\n"):])
		}
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	// a first run, so that the function's plans are cached as in a
	// session that queried the view before
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"LOAD 'auto_explain'", "SET auto_explain.log_min_duration = 0", "SET auto_explain.log_analyze = on",
		"SET auto_explain.log_timing = off", "SET auto_explain.log_nested_statements = on", "SET auto_explain.log_format = json",
		"SET client_min_messages = log"} {
		if _, err := conn.Exec(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	logged = nil
	if _, err := conn.Exec(ctx, sql); err != nil {
		t.Fatal(err)
	}
	if len(logged) == 0 {
		t.Fatal("auto_explain logged no plan")
	}
	var out []planNode
	for _, l := range logged[:len(logged)-1] {
		var p struct{ Plan planNode }
		if err := json.Unmarshal([]byte(l), &p); err != nil {
			t.Fatalf("a plan logged by auto_explain: %v\n%s", err, l)
		}
		out = append(out, p.Plan)
	}
	return out
}

// TestRealTimeFunctionRunsOnlyNeededParts: the function of the real-time
// view's rows not stored runs the parts that read the invalidated groups
// only when there are invalidation records of their kind, and reads the
// source in plans that open only the partitions holding the rows they
// read (the times are parameters of plans made once, pruned when they
// start): with no invalidation, the source's partitions are scanned
// fewer times in all than there are partitions (every part planned in
// one query scanned each several times); a pair of an old bucket adds a
// scan of that bucket's partition only, and a few more buckets one scan
// each; with more than loopBuckets buckets, one query reads them all.
// The view equals GROUP BY at each step.
func TestRealTimeFunctionRunsOnlyNeededParts(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: time.Date(2024, 3, 13, 15, 30, 0, 0, time.UTC)}
	start := time.Date(2024, 3, 12, 0, 0, 0, 0, time.UTC)
	pool, _, rs, r := realTimeTable(t, c, start)
	var leaves int64
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_partition_tree('rt') WHERE isleaf`).Scan(&leaves); err != nil {
		t.Fatal(err)
	}
	scans := func(what string) int64 {
		t.Helper()
		var n int64
		for _, p := range nestedPlans(t, pool, `SELECT * FROM h`) {
			p.walk(func(n2 planNode) {
				if rel, _ := n2["Relation Name"].(string); rel == "rt_default" || strings.HasPrefix(rel, "rt_p") {
					n++
				}
			})
		}
		if d := diff(fetch(t, pool, rtView), fetch(t, pool, rtRaw), all); d != "" {
			t.Fatalf("%s: the real-time view differs from GROUP BY:\n%s", what, d)
		}
		return n
	}
	none := scans("no invalidation")
	if none >= leaves {
		t.Errorf("with no invalidation, the real-time view's function scanned the source's %d partitions %d times", leaves, none)
	}
	execSQL(t, pool, `INSERT INTO rt VALUES ($1, 7, -1)`, start.Add(3*time.Hour+time.Minute))
	if n := scans("a pair"); n != none+1 {
		t.Errorf("with a pair of an old bucket, the function scanned the source's partitions %d times; %d without, want one more", n, none)
	}
	execSQL(t, pool, `INSERT INTO rt SELECT $1::timestamptz + i * interval '1 hour', 9, -9 FROM generate_series(1, 3) i`, start.Add(4*time.Hour+time.Minute))
	if n := scans("pairs of 4 old buckets"); n != none+4 {
		t.Errorf("with pairs of 4 old buckets, the function scanned the source's partitions %d times; %d without, want 4 more", n, none)
	}
	execSQL(t, pool, fmt.Sprintf(`INSERT INTO rt SELECT $1::timestamptz + i * interval '1 hour', 9, -9 FROM generate_series(0, %d) i`, loopBuckets), start.Add(12*time.Hour+time.Minute))
	q := fmt.Sprintf(`SELECT * FROM h WHERE bucket < '%s'`, start.Add(24*time.Hour).Format(time.RFC3339))
	// device 9's rows of its buckets, device 7's of its one
	if n, want := sourceRead(t, pool, rs, r, q), int64((loopBuckets+5)*61); n > want {
		t.Errorf("with pairs of %d old buckets, the view read %d source rows; the pairs' keys have %d", loopBuckets+5, n, want)
	}
	scans(fmt.Sprintf("pairs of %d old buckets", loopBuckets+5))
}

// TestRealTimeViewPsqlWritesAfterRefresh: rows written by psql into the
// bucket holding now after the refresh are (bucket, key) pairs (the
// statement trigger records no times: a range record per statement cost
// concurrent writers too much, see triggerFunction): the real-time view
// re-aggregates that bucket's rows of the keys written, besides the rows
// since the refresh, and no more. The view equals GROUP BY at each step,
// and a refresh leaves no record.
func TestRealTimeViewPsqlWritesAfterRefresh(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: time.Date(2024, 3, 13, 15, 30, 0, 0, time.UTC)}
	start := time.Date(2024, 3, 12, 0, 0, 0, 0, time.UTC)
	pool, _, rs, r := realTimeTable(t, c, start)
	bucket := time.Date(2024, 3, 13, 15, 0, 0, 0, time.UTC)
	// 50 devices, a row a minute from 00:00 to 15:29 (the partition of
	// a day as the planner sees it: its keys' rows are read by the index
	// on (device, time))
	execSQL(t, pool, `INSERT INTO rt SELECT $1::timestamptz + i * interval '1 minute', d, i + d * 0.25
		FROM generate_series(0, 929) i, generate_series(1, 50) d`, bucket.Add(-15*time.Hour))
	execSQL(t, pool, `ANALYZE rt`)
	if _, err := rs.Refresh(ctx, r); err != nil {
		t.Fatal(err)
	}
	q := fmt.Sprintf(`SELECT * FROM h WHERE bucket >= '%s'`, bucket.Format(time.RFC3339))
	// at most the bucket's rows of the keys written (30 before the
	// refresh's time, k since) and the rows since the refresh again
	check := func(what string, keys, k int64) {
		t.Helper()
		if n, max := sourceRead(t, pool, rs, r, q), keys*(30+k)+50*k+10; n > max {
			t.Errorf("%s: the real-time view read %d source rows of the current bucket, want at most %d", what, n, max)
		}
		if d := diff(fetch(t, pool, rtView), fetch(t, pool, rtRaw), all); d != "" {
			t.Fatalf("%s: the real-time view differs from GROUP BY:\n%s", what, d)
		}
	}
	check("after the refresh", 0, 0)
	// a row per device after the refresh, by psql: 50 pairs of the bucket
	execSQL(t, pool, `INSERT INTO rt SELECT $1::timestamptz + d * interval '1 second', d, -d FROM generate_series(1, 50) d`, c.t)
	check("a row per device after the refresh", 50, 1)
	// a second statement's rows of 10 devices
	execSQL(t, pool, `INSERT INTO rt SELECT $1::timestamptz + d * interval '1 second', d, d FROM generate_series(1, 10) d`, c.t.Add(time.Minute))
	check("two statements after the refresh", 50, 2)
	// a row of device 5 before the refresh's time moved after it
	execSQL(t, pool, `UPDATE rt SET time = $2 WHERE device = 5 AND time = $1`, bucket.Add(10*time.Minute), c.t.Add(2*time.Minute))
	check("an update of a row before the refresh's time", 50, 3)
	// and the refresh leaves no record behind
	c.t = c.t.Add(time.Hour)
	if _, err := rs.Refresh(ctx, r); err != nil {
		t.Fatal(err)
	}
	check("refreshed an hour later", 0, 3)
	var n int64
	if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM pgts.rollup_invalidation) + (SELECT count(*) FROM pgts.rollup_invalidation_range)`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("%d invalidation records left after the refresh", n)
	}
}

// TestRealTimeViewProjectsInItsScans: the real-time view computes its
// final values in each of its scans, as the materialized-only view does,
// not in a node above them through which every row passes once more.
func TestRealTimeViewProjectsInItsScans(t *testing.T) {
	c := &clock{t: time.Date(2024, 3, 13, 15, 30, 0, 0, time.UTC)}
	start := time.Date(2024, 3, 12, 0, 0, 0, 0, time.UTC)
	pool, _, _, _ := realTimeTable(t, c, start)
	p := explain(t, pool, `SELECT * FROM h WHERE bucket >= '2024-03-12'`)
	var above int
	p.walk(func(n planNode) {
		if typ, _ := n["Node Type"].(string); typ == "Result" {
			if rel, _ := n["Parent Relationship"].(string); rel != "InitPlan" && rel != "SubPlan" {
				above++
			}
		}
	})
	if above > 0 {
		t.Errorf("the real-time view's plan has %d Result nodes computing its rows' values", above)
	}
	if d := diff(fetch(t, pool, rtView), fetch(t, pool, rtRaw), all); d != "" {
		t.Fatalf("the real-time view differs from GROUP BY:\n%s", d)
	}
}

// TestTriggerRecordsAStatementOnce: a statement's rows are recorded as
// their distinct (bucket, key) pairs, once, whether the rollup groups or
// not (a rollup without GROUP BY once got a record per row).
func TestTriggerRecordsAStatementOnce(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: time.Date(2024, 3, 13, 15, 30, 0, 0, time.UTC)}
	pool, _, rs, r := realTimeTable(t, c, time.Date(2024, 3, 13, 0, 0, 0, 0, time.UTC))
	whole, err := rs.Create(ctx, Spec{Name: "hall", On: "rt", Bucket: partition.Interval{Micros: 3600e6},
		Aggs: mustAggs(t, "avg(v), count(*), max(v)"), RealTime: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range []*Rollup{r, whole} {
		if _, err := rs.Refresh(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	execSQL(t, pool, `INSERT INTO rt SELECT $1::timestamptz + i * interval '1 second', 1 + i % 7, i FROM generate_series(1, 100) i`, c.t)
	for _, x := range []*Rollup{r, whole} {
		var ranges, pairs int64
		if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM pgts.rollup_invalidation_range WHERE rollup_id = $1),
			(SELECT count(*) FROM pgts.rollup_invalidation WHERE rollup_id = $1)`, x.ID).Scan(&ranges, &pairs); err != nil {
			t.Fatal(err)
		}
		want := int64(7) // devices, in one bucket
		if len(x.GroupBy) == 0 {
			want = 1
		}
		if ranges != 0 || pairs != want {
			t.Errorf("%s: a 100-row INSERT past the refresh's time made %d range records and %d pairs, want 0 and %d", x, ranges, pairs, want)
		}
	}
	if d := diff(fetch(t, pool, `SELECT (extract(epoch FROM bucket) * 1000000)::bigint, '[]', avg_v, count, max_v FROM hall`),
		fetch(t, pool, `SELECT (extract(epoch FROM pgts.time_bucket('1 hour', time)) * 1000000)::bigint, '[]', avg(v), count(*), max(v) FROM rt GROUP BY 1`), all); d != "" {
		t.Fatalf("the view without GROUP BY differs from GROUP BY:\n%s", d)
	}
}
