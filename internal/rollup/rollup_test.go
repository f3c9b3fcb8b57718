package rollup

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// clock is a settable clock for the partition manager and refreshes.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func setup(t *testing.T, c *clock) (*pgxpool.Pool, *partition.Manager, *Rollups) {
	t.Helper()
	pool := pgtest.Pool(t)
	m := partition.NewManager(pool, nil, c.now)
	cfg := DefaultConfig(pool, m, nil)
	rs, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return pool, m, rs
}

func mustAggs(t *testing.T, s string) []Agg {
	t.Helper()
	a, err := ParseAggs(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// result is a query's rows keyed by bucket (micros) and group key; vals
// are the aggregate values as text, or as float64 where float.
type result map[string][]any

// fetch runs sql, whose columns are bucket_us, key (text), then values;
// the columns listed in floats are read as float8.
func fetch(t *testing.T, pool *pgxpool.Pool, sql string) result {
	t.Helper()
	rows, err := pool.Query(context.Background(), sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	defer rows.Close()
	out := result{}
	for rows.Next() {
		v, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		k := fmt.Sprint(v[0], " ", v[1])
		if _, dup := out[k]; dup {
			t.Fatalf("%s: two rows for %s", sql, k)
		}
		out[k] = v[2:]
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return out
}

func same(a, b any) bool {
	fa, oka := a.(float64)
	fb, okb := b.(float64)
	if oka && okb {
		if fa == fb {
			return true
		}
		// relative, but not below 1e-12 absolute: a sum of terms of
		// hundreds that cancel to near zero differs in its last bits
		// with the order of its terms (the plan's)
		return math.Abs(fa-fb) <= 1e-12*math.Max(1, math.Max(math.Abs(fa), math.Abs(fb)))
	}
	return fmt.Sprint(a) == fmt.Sprint(b)
}

// diff describes how got differs from want on the keys keep accepts.
func diff(got, want result, keep func(k string) bool) string {
	var out []string
	keys := map[string]bool{}
	for k := range got {
		keys[k] = true
	}
	for k := range want {
		keys[k] = true
	}
	var sorted []string
	for k := range keys {
		if keep(k) {
			sorted = append(sorted, k)
		}
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		g, okg := got[k]
		w, okw := want[k]
		switch {
		case !okg:
			out = append(out, fmt.Sprintf("missing %s: want %v", k, w))
		case !okw:
			out = append(out, fmt.Sprintf("extra %s: %v", k, g))
		default:
			for i := range g {
				if !same(g[i], w[i]) {
					out = append(out, fmt.Sprintf("%s: got %v want %v", k, g, w))
					break
				}
			}
		}
		if len(out) > 10 {
			break
		}
	}
	return strings.Join(out, "\n")
}

func bucketOf(k string) int64 {
	var b int64
	fmt.Sscan(k, &b)
	return b
}

func all(string) bool { return true }

func execSQL(t *testing.T, pool *pgxpool.Pool, sql string, args ...any) {
	t.Helper()
	if _, err := pool.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

const testAggs = "avg(v), min(v), max(v), sum(v), count(*), count(w) AS n_w, first(w, time), last(w, time), sum(w)"

// selects of the view and of GROUP BY over the raw rows, same columns.
func viewSelect(view string) string {
	return `SELECT (extract(epoch FROM bucket) * 1000000)::bigint, jsonb_build_array(device)::text,
		avg_v::float8, min_v, max_v, sum_v::float8, count, n_w, first_w, last_w, sum_w FROM ` + view
}

func rawSelect(width string) string {
	return `SELECT (extract(epoch FROM b) * 1000000)::bigint, jsonb_build_array(device)::text,
		a::float8, mi, ma, s::float8, c, cw, f, l, sw FROM (
		SELECT pgts.time_bucket('` + width + `', time) b, device, avg(v) a, min(v) mi, max(v) ma, sum(v) s, count(*) c,
			count(w) cw, pgts.first(w, time) f, pgts.last(w, time) l, sum(w) sw
		FROM raw GROUP BY 1, 2) x`
}

func TestCreateRefreshView(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: time.Date(2024, 3, 13, 15, 30, 0, 0, time.UTC)}
	pool, m, rs := setup(t, c)
	if _, err := m.Create(ctx, partition.CreateSpec{Name: "raw", Columns: "time timestamptz not null, device int, v float8, w int",
		TimeColumn: "time", Interval: partition.Interval{Days: 1}, Premake: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Ensure(ctx, mustTable(t, m, "raw"), []int64{c.t.Add(-48 * time.Hour).UnixMicro(), c.t.Add(-24 * time.Hour).UnixMicro()}); err != nil {
		t.Fatal(err)
	}
	execSQL(t, pool, `INSERT INTO raw SELECT $1::timestamptz - i * interval '7 minutes', i % 3, i * 0.37, nullif(i % 5, 0) FROM generate_series(1, 500) i`, c.t)
	hourly, err := rs.Create(ctx, Spec{Name: "hourly", On: "raw", Bucket: partition.Interval{Micros: 3600e6}, GroupBy: []string{"device"},
		Aggs: mustAggs(t, testAggs), RealTime: true})
	if err != nil {
		t.Fatal(err)
	}
	want := fetch(t, pool, rawSelect("1 hour"))
	if d := diff(fetch(t, pool, viewSelect("hourly")), want, all); d != "" {
		t.Fatalf("real-time view before any refresh:\n%s", d)
	}
	st, err := rs.Refresh(ctx, hourly)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", st)
	if d := diff(fetch(t, pool, viewSelect("hourly")), want, all); d != "" {
		t.Fatalf("after refresh:\n%s", d)
	}
	// psql writes: insert straight into a partition, update, delete.
	execSQL(t, pool, `INSERT INTO raw_p20240312 VALUES ('2024-03-12 10:15+00', 1, 1e6, 7), ('2024-03-12 10:16+00', 9, 2, NULL)`)
	execSQL(t, pool, `UPDATE raw SET v = v * 2, time = time - interval '1 day' WHERE device = 2 AND time > '2024-03-13 06:00+00'`)
	execSQL(t, pool, `DELETE FROM raw WHERE device = 0 AND time < '2024-03-12 12:00+00'`)
	want = fetch(t, pool, rawSelect("1 hour"))
	if d := diff(fetch(t, pool, viewSelect("hourly")), want, all); d != "" {
		t.Fatalf("real-time view after writes:\n%s", d)
	}
	if st, err = rs.Refresh(ctx, hourly); err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", st)
	if d := diff(fetch(t, pool, viewSelect("hourly")), want, all); d != "" {
		t.Fatalf("after the second refresh:\n%s", d)
	}
	var pending int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pgts.rollup_invalidation i JOIN pgts.rollup r ON r.id = i.rollup_id WHERE i.bucket_us < r.watermark`).Scan(&pending); err != nil || pending != 0 {
		t.Fatalf("%d invalidations left after a refresh (%v)", pending, err)
	}
	// daily from hourly
	daily, err := rs.Create(ctx, Spec{Name: "daily", On: "hourly", Bucket: partition.Interval{Days: 1}, GroupBy: []string{"device"},
		Aggs: mustAggs(t, testAggs)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rs.Refresh(ctx, daily); err != nil {
		t.Fatal(err)
	}
	wantDaily := fetch(t, pool, rawSelect("1 day"))
	if daily, err = rs.Get(ctx, "daily"); err != nil {
		t.Fatal(err)
	}
	dw := daily.Watermark
	if n := len(fetch(t, pool, viewSelect("daily"))); n == 0 {
		t.Fatal("daily rollup is empty")
	}
	if d := diff(fetch(t, pool, viewSelect("daily")), wantDaily, func(k string) bool { return bucketOf(k) < dw }); d != "" {
		t.Fatalf("daily:\n%s", d)
	}
	if err := rs.Drop(ctx, hourly); err == nil {
		t.Fatal("dropped a rollup another is built on")
	}
	for _, r := range []*Rollup{daily, hourly} {
		if err := rs.Drop(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if got := pgtest.Rows(t, pool, `SELECT tgname FROM pg_trigger WHERE NOT tgisinternal AND tgname LIKE 'pgts\_rollup%'`); len(got) != 0 {
		t.Fatalf("triggers left after drop: %v", got)
	}
}

func mustTable(t *testing.T, m *partition.Manager, name string) *partition.Table {
	t.Helper()
	tb, err := m.Table(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	return tb
}
