package sqlfn_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestGapfillDifferential: the documented gap-filling query (every
// bucket of a range from pgts.buckets, left-joined to the aggregated
// rows, pgts.locf and pgts.interpolate over it) against a Go
// computation, on devices whose series have random gaps, buckets whose
// rows are all NULL, and ranges that start and end inside a bucket.
func TestGapfillDifferential(t *testing.T) {
	conn := connect(t)
	ctx := context.Background()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 2))

	for round := range 6 {
		w := width{us: []int64{60, 900, 3600, 3 * 3600, 86400}[rng.IntN(5)] * usPerSec}
		start := fromTime(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)) + rng.Int64N(400*usPerDay)
		finish := start + w.period()*int64(20+rng.IntN(300)) + rng.Int64N(w.period())
		const devices = 5
		// Go: the buckets, and per device the mean of the values in each.
		var buckets []int64
		for b := refBucket(w, start, 0, false); b < finish; b += w.period() {
			buckets = append(buckets, b)
		}
		type acc struct {
			sum  float64
			n    int
			rows int
		}
		means := make([]map[int64]*acc, devices)
		var dev []int64
		var ts []time.Time
		var vs []*float64
		for d := range devices {
			means[d] = map[int64]*acc{}
			density := rng.Float64()
			for _, b := range buckets {
				if rng.Float64() > density {
					continue // a gap
				}
				for range 1 + rng.IntN(3) {
					x := b + rng.Int64N(w.period())
					if x < start || x >= finish {
						continue
					}
					a := means[d][b]
					if a == nil {
						a = &acc{}
						means[d][b] = a
					}
					a.rows++
					var v *float64
					if rng.IntN(6) != 0 {
						f := float64(rng.IntN(800)) / 4
						v = &f
						a.sum += f
						a.n++
					}
					dev, ts, vs = append(dev, int64(d)), append(ts, toTime(x)), append(vs, v)
				}
			}
		}
		// Rows outside the range must not count.
		dev, ts, vs = append(dev, 0, 1), append(ts, toTime(start-1), toTime(finish)), append(vs, ptr(1e9), ptr(-1e9))
		if _, err := conn.Exec(ctx, `DROP TABLE IF EXISTS m; CREATE TABLE m (device int, time timestamptz, v float8)`); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, `INSERT INTO m SELECT * FROM unnest($1::int[], $2::timestamptz[], $3::float8[])`, dev, ts, vs); err != nil {
			t.Fatal(err)
		}
		rows, err := conn.Query(ctx, `
			SELECT d.device, b.bucket, a.avg_v,
				pgts.locf(a.avg_v) OVER w,
				pgts.interpolate(a.avg_v, b.bucket,
					pgts.known(a.avg_v, b.bucket) OVER w,
					pgts.known(a.avg_v, b.bucket) OVER (PARTITION BY d.device ORDER BY b.bucket DESC))
			FROM generate_series(0, $4 - 1) AS d(device)
			CROSS JOIN pgts.buckets($1, $2, $3) AS b(bucket)
			LEFT JOIN (
				SELECT device, pgts.time_bucket($1, time) AS bucket, avg(v) AS avg_v
				FROM m WHERE time >= $2 AND time < $3
				GROUP BY 1, 2
			) AS a ON a.device = d.device AND a.bucket = b.bucket
			WINDOW w AS (PARTITION BY d.device ORDER BY b.bucket)
			ORDER BY d.device, b.bucket`,
			fmt.Sprintf("%d microseconds", w.us), toTime(start), toTime(finish), devices)
		if err != nil {
			t.Fatal(err)
		}
		i, bad := 0, 0
		fail := func(format string, args ...any) {
			if bad++; bad <= 10 {
				t.Errorf("round %d: "+format, append([]any{round}, args...)...)
			}
		}
		for rows.Next() {
			var d int64
			var b time.Time
			var v, locf, interp *float64
			if err := rows.Scan(&d, &b, &v, &locf, &interp); err != nil {
				t.Fatal(err)
			}
			k := i % len(buckets)
			if want := int64(i / len(buckets)); d != want || fromTime(b) != buckets[k] {
				t.Fatalf("round %d: row %d is (%d, %v), want (%d, %v)", round, i, d, b, want, toTime(buckets[k]))
			}
			i++
			// The value, the last known one, the known ones around.
			val := func(j int) *float64 {
				a := means[d][buckets[j]]
				if a == nil || a.n == 0 {
					return nil
				}
				m := a.sum / float64(a.n)
				return &m
			}
			var prev, next = -1, -1
			for j := k; j >= 0; j-- {
				if val(j) != nil {
					prev = j
					break
				}
			}
			for j := k; j < len(buckets); j++ {
				if val(j) != nil {
					next = j
					break
				}
			}
			wantLocf, wantInterp := (*float64)(nil), val(k)
			if prev >= 0 {
				wantLocf = val(prev)
			}
			if wantInterp == nil && prev >= 0 && next >= 0 {
				p, n := *val(prev), *val(next)
				x := p + (n-p)*float64(buckets[k]-buckets[prev])/float64(buckets[next]-buckets[prev])
				wantInterp = &x
			}
			if !same(v, val(k)) || !same(locf, wantLocf) || !same(interp, wantInterp) {
				fail("device %d bucket %v: value %s locf %s interpolate %s; want %s %s %s", d, b,
					showF(v), showF(locf), showF(interp), showF(val(k)), showF(wantLocf), showF(wantInterp))
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if i != devices*len(buckets) {
			t.Fatalf("round %d: %d rows, want %d", round, i, devices*len(buckets))
		}
	}
}

// TestBucketsInTimeZone: pgts.buckets with a zone yields the buckets of
// pgts.time_bucket in that zone of every instant of the range, once each,
// across daylight saving time changes.
func TestBucketsInTimeZone(t *testing.T) {
	conn := connect(t)
	ctx := context.Background()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	g := newGen(t, seed)
	for range 30 {
		loc := g.locs[g.rng.IntN(len(g.locs))]
		w := []width{{us: 3600 * usPerSec}, {us: 2 * 3600 * usPerSec}, {us: 1800 * usPerSec}, {days: 1}, {months: 1}}[g.rng.IntN(5)]
		tr := g.transitions[loc]
		center := fromTime(time.Date(2010, 1, 1, 0, 0, 0, 0, time.UTC)) + g.rng.Int64N(20*365*usPerDay)
		if len(tr) > 0 {
			center = tr[g.rng.IntN(len(tr))]
		}
		span := 3 * usPerDay
		if w.months > 0 {
			span = 70 * usPerDay
		}
		start := center - g.rng.Int64N(span)
		finish := center + g.rng.Int64N(span)
		// Instants every 5 minutes, the last one, and both sides of each
		// transition (a bucket cut short by one, as at St Johns' 00:01
		// changes, may last a minute).
		xs, step := []int64{finish - 1}, 5*60*usPerSec
		if w.months > 0 {
			step = 3600 * usPerSec // and every transition below
		}
		for x := start; x < finish; x += step {
			xs = append(xs, x)
		}
		for _, b := range tr {
			if b-1 >= start && b < finish {
				xs = append(xs, b-1, b)
			}
		}
		var want []int64
		for _, x := range xs {
			want = append(want, fromLocal(refBucket(w, toLocal(x, loc), 0, false), loc))
		}
		slices.Sort(want)
		want = slices.Compact(want)
		rows, err := conn.Query(ctx, `SELECT b FROM pgts.buckets(make_interval(months => $1, days => $2) + $3 * interval '1 microsecond', $4, $5, $6) AS b`,
			w.months, w.days, w.us, toTime(start), toTime(finish), loc.String())
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for rows.Next() {
			var b time.Time
			if err := rows.Scan(&b); err != nil {
				t.Fatal(err)
			}
			got = append(got, fromTime(b))
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("buckets(%v, %v, %v, %s):\n got %v\nwant %v", w, toTime(start), toTime(finish), loc, times(got), times(want))
		}
	}
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pgts.int_buckets(10, -25, 20) AS b WHERE b IN (-30, -20, -10, 0, 10)`).Scan(&n); err != nil || n != 5 {
		t.Errorf("int_buckets(10, -25, 20): %d of the 5 buckets -30 .. 10, %v", n, err)
	}
}

func times(us []int64) []string {
	var s []string
	for _, u := range us {
		s = append(s, toTime(u).Format("2006-01-02T15:04Z"))
	}
	return s
}

func ptr(f float64) *float64 { return &f }

func same(a, b *float64) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return math.Abs(*a-*b) <= 1e-9*math.Max(1, math.Abs(*b))
}

func showF(f *float64) string {
	if f == nil {
		return "NULL"
	}
	return fmt.Sprint(*f)
}

// TestGapfillTimestampAndInteger: the timestamp and bigint forms of
// pgts.known and pgts.interpolate (and pgts.buckets on timestamp,
// pgts.int_buckets) give what the timestamptz forms, checked above, give
// on the same series read in UTC or in seconds.
func TestGapfillTimestampAndInteger(t *testing.T) {
	conn := connect(t)
	ctx := context.Background()
	if _, err := conn.Exec(ctx, `CREATE TABLE g AS SELECT timestamptz '2024-03-30 00:00+00' + i * interval '7 minutes' AS time, (i * 37 % 101)::float8 AS v
		FROM generate_series(1, 2000) AS i WHERE i % 40 NOT BETWEEN 5 AND 25`); err != nil {
		t.Fatal(err)
	}
	shape := `SELECT b.bucket::text, a.v, pgts.locf(a.v) OVER w,
			round(pgts.interpolate(a.v, b.bucket, pgts.known(a.v, b.bucket) OVER w, pgts.known(a.v, b.bucket) OVER (ORDER BY b.bucket DESC))::numeric, 9)
		FROM %s AS b(bucket)
		LEFT JOIN (SELECT %s AS bucket, avg(v) AS v FROM g GROUP BY 1) AS a USING (bucket)
		WINDOW w AS (ORDER BY b.bucket) ORDER BY b.bucket`
	run := func(from, bucket string) []string {
		rows, err := conn.Query(ctx, fmt.Sprintf(shape, from, bucket))
		if err != nil {
			t.Fatalf("%s: %v", from, err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var b string
			var v, l, i *float64
			if err := rows.Scan(&b, &v, &l, &i); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%s %s %s", showF(v), showF(l), showF(i)))
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	want := run(`pgts.buckets('1 hour', timestamptz '2024-03-29 22:00+00', timestamptz '2024-04-01 12:00+00')`, `pgts.time_bucket('1 hour', time)`)
	ts := run(`pgts.buckets('1 hour', timestamp '2024-03-29 22:00', timestamp '2024-04-01 12:00')`, `pgts.time_bucket('1 hour', time AT TIME ZONE 'UTC')`)
	ints := run(`pgts.int_buckets(3600, extract(epoch FROM timestamptz '2024-03-29 22:00+00')::bigint, extract(epoch FROM timestamptz '2024-04-01 12:00+00')::bigint)`,
		`pgts.time_bucket(3600::bigint, extract(epoch FROM time)::bigint)`)
	interpolated := 0
	for _, r := range want {
		if strings.HasPrefix(r, "NULL ") && !strings.HasSuffix(r, " NULL") {
			interpolated++
		}
	}
	if len(want) < 50 || interpolated < 10 || !slices.Equal(ts, want) || !slices.Equal(ints, want) {
		t.Fatalf("timestamptz, timestamp and bigint gap filling differ (%d interpolated buckets):\n%v\n%v\n%v", interpolated, want, ts, ints)
	}
}

// TestGapfillWindowAggregatesNotSQL: the window aggregates of the
// documented gap-filling query (pgts.locf, pgts.known) have transition
// functions that are not LANGUAGE sql. PostgreSQL never inlines an
// aggregate's transition function; a LANGUAGE sql one starts an executor
// for every call (about 5 µs on the benchmark host, where a PL/pgSQL
// RETURN takes about 1 µs), and pgts.known is called for every bucket,
// twice in the documented query (1,440 calls for 720 buckets). Such calls
// are not counted in pg_stat_user_functions either, so the test reads
// the catalog. pgts.known still yields NULL (not a row of NULLs) before
// the first known point, so that coalesce(pgts.known(...) OVER w,
// ROW(...)) gives a default, and the query's values stay those of the
// differential test.
func TestGapfillWindowAggregatesNotSQL(t *testing.T) {
	conn := connect(t)
	ctx := context.Background()
	rows, err := conn.Query(ctx, `SELECT a.aggfnoid::regprocedure::text, f.proname::text, l.lanname::text
		FROM pg_aggregate a JOIN pg_proc p ON p.oid = a.aggfnoid JOIN pg_proc f ON f.oid = a.aggtransfn
		JOIN pg_language l ON l.oid = f.prolang
		WHERE p.pronamespace = 'pgts'::regnamespace AND p.proname IN ('locf', 'known')
		ORDER BY 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var agg, fn, lang string
		if err := rows.Scan(&agg, &fn, &lang); err != nil {
			t.Fatal(err)
		}
		n++
		if lang == "sql" {
			t.Errorf("%s: transition function %s is LANGUAGE sql (an executor per row)", agg, fn)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n != 4 { // locf(anyelement), known of timestamptz, timestamp, bigint
		t.Errorf("%d aggregates named locf or known, want 4", n)
	}
	rows.Close()

	if _, err := conn.Exec(ctx, `CREATE TABLE gf (time timestamptz NOT NULL, device int NOT NULL, v float8) PARTITION BY RANGE (time);
		CREATE TABLE gf_default PARTITION OF gf DEFAULT;
		CREATE TABLE gf_1 PARTITION OF gf FOR VALUES FROM ('2024-03-01 00:00+00') TO ('2024-03-02 00:00+00');
		CREATE TABLE gf_2 PARTITION OF gf FOR VALUES FROM ('2024-03-02 00:00+00') TO ('2024-03-03 00:00+00');
		CREATE INDEX ON gf (device, time) INCLUDE (v);
		INSERT INTO gf SELECT timestamptz '2024-03-01 05:00+00' + h * interval '1 hour' + m * interval '10 minutes', d, h * 10 + m
			FROM generate_series(0, 40, 4) AS h, generate_series(0, 5) AS m, generate_series(1, 3) AS d;
		ANALYZE gf`); err != nil {
		t.Fatal(err)
	}
	var buckets, filled, carried, nullPrev, nullNext int
	if err := conn.QueryRow(ctx, `
		SELECT count(*), count(i), count(l), count(*) FILTER (WHERE kp::text IS NULL), count(*) FILTER (WHERE kn::text IS NULL) FROM (
			SELECT b.bucket, pgts.locf(a.v) OVER w AS l,
				pgts.known(a.v, b.bucket) OVER w AS kp,
				pgts.known(a.v, b.bucket) OVER (ORDER BY b.bucket DESC) AS kn,
				pgts.interpolate(a.v, b.bucket, pgts.known(a.v, b.bucket) OVER w,
					pgts.known(a.v, b.bucket) OVER (ORDER BY b.bucket DESC)) AS i
			FROM pgts.buckets('1 hour', '2024-03-01 00:00+00', '2024-03-03 00:00+00') AS b(bucket)
			LEFT JOIN (
				SELECT pgts.time_bucket('1 hour', time) AS bucket, avg(v) AS v
				FROM gf
				WHERE device = 2 AND time >= '2024-03-01 00:00+00' AND time < '2024-03-03 00:00+00'
				GROUP BY 1
			) AS a USING (bucket)
			WINDOW w AS (ORDER BY b.bucket)
		) AS q`).Scan(&buckets, &filled, &carried, &nullPrev, &nullNext); err != nil {
		t.Fatal(err)
	}
	// 48 buckets; known points at hours 5, 9, ..., 45: interpolated from
	// 5 to 45 (41 buckets), carried forward from 5 (43), no known point
	// before hours 0-4 (5) nor after hours 46-47 (2).
	if buckets != 48 || filled != 41 || carried != 43 || nullPrev != 5 || nullNext != 2 {
		t.Errorf("%d buckets, %d interpolated, %d carried forward, %d and %d without a known point before and after; want 48, 41, 43, 5, 2",
			buckets, filled, carried, nullPrev, nullNext)
	}
}

// TestGapfillPrunesAtPlanTime: the documented gap-filling query plans
// only the partitions of its range when its bounds are constants at
// planning, literals (Grafana's $__timeFilter and $__timeFrom() give
// them) or parameters bound by the client; partitions outside the range
// are neither planned nor opened. With a bound computed in the query
// (now() - interval '30 days': timestamptz minus interval is STABLE)
// PostgreSQL plans every partition of the table and removes those
// outside the range only when the executor starts ("Subplans Removed"),
// so planning grows with the table's whole history: docs/sql.md
// recommends bounds computed by the client.
func TestGapfillPrunesAtPlanTime(t *testing.T) {
	conn := connect(t)
	ctx := context.Background()
	var b strings.Builder
	b.WriteString(`CREATE TABLE gp (time timestamptz NOT NULL, device int NOT NULL, v float8) PARTITION BY RANGE (time);
		CREATE TABLE gp_default PARTITION OF gp DEFAULT;
		CREATE INDEX ON gp (device, time) INCLUDE (v);
		CREATE INDEX ON gp (time);`)
	for d := 1; d <= 12; d++ {
		fmt.Fprintf(&b, "CREATE TABLE gp_%02d PARTITION OF gp FOR VALUES FROM ('2024-03-%02d 00:00+00') TO ('2024-03-%02d 00:00+00');\n", d, d, d+1)
	}
	b.WriteString(`INSERT INTO gp SELECT timestamptz '2024-03-01 00:00+00' + m * interval '20 minutes', d, m
			FROM generate_series(0, 12 * 72 - 1) AS m, generate_series(1, 3) AS d;
		ANALYZE gp`)
	if _, err := conn.Exec(ctx, b.String()); err != nil {
		t.Fatal(err)
	}
	const shape = `EXPLAIN (COSTS OFF)
		SELECT b.bucket, a.v, pgts.locf(a.v) OVER w,
			pgts.interpolate(a.v, b.bucket, pgts.known(a.v, b.bucket) OVER w, pgts.known(a.v, b.bucket) OVER (ORDER BY b.bucket DESC))
		FROM pgts.buckets('1 hour', %[1]s, %[2]s) AS b(bucket)
		LEFT JOIN (
			SELECT pgts.time_bucket('1 hour', time) AS bucket, avg(v) AS v
			FROM gp WHERE device = 2 AND time >= %[1]s AND time < %[2]s
			GROUP BY 1
		) AS a USING (bucket)
		WINDOW w AS (ORDER BY b.bucket)
		ORDER BY b.bucket`
	plan := func(sql string, args ...any) string {
		t.Helper()
		rows, err := conn.Query(ctx, sql, append([]any{pgx.QueryExecModeExec}, args...)...)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		defer rows.Close()
		var p strings.Builder
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			p.WriteString(line + "\n")
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return p.String()
	}
	scanned := func(p string) []string {
		var parts []string // the relation after "on" in "Seq Scan on gp_04 gp_1"
		f := strings.Fields(p)
		for i := 1; i < len(f); i++ {
			if f[i-1] == "on" && strings.HasPrefix(f[i], "gp_") && !slices.Contains(parts, f[i]) {
				parts = append(parts, f[i])
			}
		}
		slices.Sort(parts)
		return parts
	}
	// 2024-03-04 12:00 to 2024-03-07 12:00: the partitions of days 4 to 7
	// (the DEFAULT partition holds no time of the range).
	want := []string{"gp_04", "gp_05", "gp_06", "gp_07"}
	for _, c := range []struct {
		name string
		sql  string
		args []any
	}{
		{"literal bounds", fmt.Sprintf(shape, `'2024-03-04 12:00+00'`, `'2024-03-07 12:00+00'`), nil},
		{"bound parameters", fmt.Sprintf(shape, `$1::timestamptz`, `$2::timestamptz`),
			[]any{time.Date(2024, 3, 4, 12, 0, 0, 0, time.UTC), time.Date(2024, 3, 7, 12, 0, 0, 0, time.UTC)}},
	} {
		p := plan(c.sql, c.args...)
		if got := scanned(p); !slices.Equal(got, want) || strings.Contains(p, "Subplans Removed") {
			t.Errorf("%s: the plan reads partitions %v, want %v, all pruned at planning:\n%s", c.name, got, want, p)
		}
	}
	// A bound computed in the query: every partition below the upper
	// bound planned, those outside the range (days 1 to 3, DEFAULT)
	// removed at executor start.
	p := plan(fmt.Sprintf(shape, `timestamptz '2024-03-07 12:00+00' - interval '3 days'`, `'2024-03-07 12:00+00'`))
	if got := scanned(p); !slices.Equal(got, want) || !strings.Contains(p, "Subplans Removed: 4") {
		t.Errorf("computed lower bound: the plan reads partitions %v, want %v, and 4 (the days before, DEFAULT) removed at executor start:\n%s", got, want, p)
	}
}
