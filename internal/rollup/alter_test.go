package rollup

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgts/pgts/internal/partition"
)

// alterRaw creates the raw table of the alter tests and fills two days
// before c.
func alterRaw(t *testing.T, c *clock, pool *pgxpool.Pool, m *partition.Manager) {
	t.Helper()
	ctx := context.Background()
	if _, err := m.Create(ctx, partition.CreateSpec{Name: "raw", Columns: "time timestamptz not null, device int, v float8, w int",
		TimeColumn: "time", Interval: partition.Interval{Days: 1}, Premake: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Ensure(ctx, mustTable(t, m, "raw"), []int64{c.t.Add(-48 * time.Hour).UnixMicro(), c.t.Add(-24 * time.Hour).UnixMicro()}); err != nil {
		t.Fatal(err)
	}
	execSQL(t, pool, `INSERT INTO raw SELECT $1::timestamptz - i * interval '7 minutes', i % 3, i * 0.37, nullif(i % 5, 0) FROM generate_series(1, 400) i`, c.t)
}

// The hourly view's columns after the alter, and the same from GROUP BY.
const (
	alteredView = `SELECT (extract(epoch FROM bucket) * 1000000)::bigint, jsonb_build_array(device)::text,
		avg_v::float8, count, max_v, last_w FROM hourly`
	alteredRaw = `SELECT (extract(epoch FROM pgts.time_bucket('1 hour', time)) * 1000000)::bigint, jsonb_build_array(device)::text,
		avg(v)::float8, count(*), max(v), pgts.last(w, time) FROM raw GROUP BY 1, 2`
)

// TestAlterAddAggregate adds aggregates to a refreshed rollup: the
// materialized buckets keep their old aggregates exact and read NULL for
// the new ones until they are rewritten (a write to the bucket, or
// refresh --from --to); buckets materialized after the alter have them
// all; a rollup built on the altered one is unaffected; an aggregate that
// rollup uses cannot be dropped, another can.
func TestAlterAddAggregate(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: time.Date(2024, 3, 13, 15, 30, 0, 0, time.UTC)}
	pool, m, rs := setup(t, c)
	alterRaw(t, c, pool, m)
	hourly, err := rs.Create(ctx, Spec{Name: "hourly", On: "raw", Bucket: partition.Interval{Micros: 3600e6}, GroupBy: []string{"device"},
		Aggs: mustAggs(t, "avg(v), count(*)"), RealTime: true})
	if err != nil {
		t.Fatal(err)
	}
	daily, err := rs.Create(ctx, Spec{Name: "daily", On: "hourly", Bucket: partition.Interval{Days: 1}, GroupBy: []string{"device"},
		Aggs: mustAggs(t, "avg(v), count(*)"), RealTime: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*Rollup{hourly, daily} {
		if _, err := rs.Refresh(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if hourly, err = rs.Get(ctx, "hourly"); err != nil {
		t.Fatal(err)
	}
	oldWatermark := hourly.Watermark

	if _, err := rs.Alter(ctx, hourly, AlterSpec{Add: mustAggs(t, "max(v), last(w, time)")}); err != nil {
		t.Fatal(err)
	}
	if hourly, err = rs.Get(ctx, "hourly"); err != nil {
		t.Fatal(err)
	}
	if len(hourly.Aggs) != 4 || hourly.Aggs[2].Name != "max_v" || hourly.Aggs[3].Name != "last_w" {
		t.Fatalf("aggregates after the alter: %+v", hourly.Aggs)
	}
	// Old buckets: old aggregates exact, new ones NULL; nothing else.
	want := fetch(t, pool, alteredRaw)
	got := fetch(t, pool, alteredView)
	oldOnly := func(r result) result {
		out := result{}
		for k, v := range r {
			out[k] = v[:2]
		}
		return out
	}
	if d := diff(oldOnly(got), oldOnly(want), all); d != "" {
		t.Fatalf("old aggregates after the alter:\n%s", d)
	}
	nulls := 0
	for k, v := range got {
		if bucketOf(k) < oldWatermark {
			if v[2] != nil || v[3] != nil {
				t.Fatalf("old bucket %s reads %v for the new aggregates, want NULL", k, v[2:])
			}
			nulls++
		}
	}
	if nulls == 0 {
		t.Fatal("no materialized bucket before the alter")
	}

	// A write to one old bucket of device 1, and an hour later rows in new
	// buckets: the refresh rewrites that pair and materializes the new
	// buckets with every aggregate.
	execSQL(t, pool, `INSERT INTO raw VALUES ('2024-03-13 10:20+00', 1, 99, 4)`)
	c.t = c.t.Add(2 * time.Hour)
	execSQL(t, pool, `INSERT INTO raw SELECT '2024-03-13 15:31+00'::timestamptz + i * interval '3 minutes', i % 3, i, i FROM generate_series(0, 40) i`)
	for _, r := range []*Rollup{hourly, daily} {
		if _, err := rs.Refresh(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	want = fetch(t, pool, alteredRaw)
	got = fetch(t, pool, alteredView)
	rewritten := `1710324000000000 [1]` // 2024-03-13 10:00, device 1
	exact := func(k string) bool { return bucketOf(k) >= oldWatermark || k == rewritten }
	if d := diff(got, want, exact); d != "" {
		t.Fatalf("rewritten and new buckets:\n%s", d)
	}
	if d := diff(oldOnly(got), oldOnly(want), all); d != "" {
		t.Fatalf("old aggregates:\n%s", d)
	}
	if got[rewritten] == nil || got[rewritten][2] == nil {
		t.Fatalf("the rewritten bucket %s: %v", rewritten, got[rewritten])
	}
	// The daily rollup built on it is unaffected (its real-time part
	// reads what hourly has materialized: the rows before its watermark,
	// and those of its partial bucket, before partial_us).
	if hourly, err = rs.Get(ctx, "hourly"); err != nil {
		t.Fatal(err)
	}
	var upto int64
	if err := pool.QueryRow(ctx, `SELECT greatest(watermark, coalesce(partial_us, watermark)) FROM pgts.rollup WHERE id = $1`, hourly.ID).Scan(&upto); err != nil {
		t.Fatal(err)
	}
	dailyRaw := fmt.Sprintf(`SELECT (extract(epoch FROM pgts.time_bucket('1 day', time)) * 1000000)::bigint, jsonb_build_array(device)::text,
		avg(v)::float8, count(*) FROM raw WHERE time < timestamptz 'epoch' + %d * interval '1 microsecond' GROUP BY 1, 2`, upto)
	dailyView := `SELECT (extract(epoch FROM bucket) * 1000000)::bigint, jsonb_build_array(device)::text, avg_v::float8, count FROM daily`
	if d := diff(fetch(t, pool, dailyView), fetch(t, pool, dailyRaw), all); d != "" {
		t.Fatalf("daily after the alter of hourly:\n%s", d)
	}

	// refresh --from --to fills the old buckets.
	if _, err := rs.Invalidate(ctx, hourly, c.t.Add(-72*time.Hour).UnixMicro(), c.t.UnixMicro()); err != nil {
		t.Fatal(err)
	}
	if _, err := rs.Refresh(ctx, hourly); err != nil {
		t.Fatal(err)
	}
	if d := diff(fetch(t, pool, alteredView), fetch(t, pool, alteredRaw), all); d != "" {
		t.Fatalf("after refresh --from --to:\n%s", d)
	}
	dataRows := `SELECT (extract(epoch FROM bucket) * 1000000)::bigint, jsonb_build_array(device)::text, max_v FROM hourly_data WHERE max_v IS NULL`
	if n := len(fetch(t, pool, dataRows)); n != 0 {
		t.Fatalf("%d rows of hourly_data still NULL after refresh --from --to", n)
	}

	// Dropping: avg_v is used by daily, max_v is not.
	if _, err := rs.Alter(ctx, hourly, AlterSpec{Drop: []string{"avg_v"}}); err == nil || !strings.Contains(err.Error(), "daily") {
		t.Fatalf("dropping an aggregate daily is built on: %v", err)
	}
	if _, err := rs.Alter(ctx, hourly, AlterSpec{Drop: []string{"nope"}}); err == nil {
		t.Fatal("dropped an aggregate the rollup does not have")
	}
	if _, err := rs.Alter(ctx, hourly, AlterSpec{Add: mustAggs(t, "count(*)")}); err == nil {
		t.Fatal("added an aggregate under a name the rollup has")
	}
	if hourly, err = rs.Alter(ctx, hourly, AlterSpec{Drop: []string{"max_v"}}); err != nil {
		t.Fatal(err)
	}
	cols := strings.Join(pgRows(t, pool, `SELECT string_agg(attname, ',' ORDER BY attnum) FROM pg_attribute
		WHERE attrelid IN ('hourly'::regclass, 'hourly_data'::regclass) AND attnum > 0 AND NOT attisdropped GROUP BY attrelid ORDER BY attrelid`), " | ")
	if strings.Contains(cols, "max_v") || !strings.Contains(cols, "last_w") {
		t.Fatalf("columns after dropping max_v: %s", cols)
	}
	if _, err := rs.Refresh(ctx, hourly); err != nil {
		t.Fatal(err)
	}
	// daily can take the new aggregate now that hourly has it.
	if _, err := rs.Alter(ctx, daily, AlterSpec{Add: mustAggs(t, "last(w, time)")}); err != nil {
		t.Fatal(err)
	}
	if _, err := rs.Alter(ctx, daily, AlterSpec{Add: mustAggs(t, "min(v)")}); err == nil {
		t.Fatal("daily took an aggregate hourly does not have")
	}
}

func pgRows(t *testing.T, pool *pgxpool.Pool, sql string) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(), sql)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// TestAlterDuringWrites alters a rollup while a writer inserts rows in a
// loop and another transaction holds uncommitted rows: the alter waits
// for neither, and after refresh --from --to the rollup equals GROUP BY
// over every row written.
func TestAlterDuringWrites(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: time.Date(2024, 3, 13, 15, 30, 0, 0, time.UTC)}
	pool, m, rs := setup(t, c)
	alterRaw(t, c, pool, m)
	hourly, err := rs.Create(ctx, Spec{Name: "hourly", On: "raw", Bucket: partition.Interval{Micros: 3600e6}, GroupBy: []string{"device"},
		Aggs: mustAggs(t, "avg(v), count(*)"), RealTime: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rs.Refresh(ctx, hourly); err != nil {
		t.Fatal(err)
	}
	// An open transaction with rows written, committed after the alter.
	open, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer open.Rollback(ctx) //nolint:errcheck
	if _, err := open.Exec(ctx, `INSERT INTO raw SELECT '2024-03-12 08:00+00'::timestamptz + i * interval '1 minute', 7, i, i FROM generate_series(0, 99) i`); err != nil {
		t.Fatal(err)
	}
	// A writer in a loop: it has written before the alter starts and
	// goes on until the alter is done.
	stop := make(chan struct{})
	started := make(chan struct{})
	var startOnce sync.Once
	var wg sync.WaitGroup
	var werr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer startOnce.Do(func() { close(started) })
		for i := 0; ; i++ {
			if _, err := pool.Exec(ctx, `INSERT INTO raw VALUES ('2024-03-12 00:00+00'::timestamptz + ($1::int % 3000) * interval '37 seconds', $1::int % 4, $1::int, $1::int)`, i); err != nil {
				werr = err
				return
			}
			if i == 20 {
				startOnce.Do(func() { close(started) })
			}
			select {
			case <-stop:
				if i > 40 {
					return
				}
			default:
			}
		}
	}()
	<-started
	// Guards the test against hanging if the alter waited for the open
	// transaction; it must not.
	actx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	_, aerr := rs.Alter(actx, hourly, AlterSpec{Add: mustAggs(t, "max(v), last(w, time)")})
	cancel()
	close(stop)
	wg.Wait()
	if aerr != nil {
		t.Fatalf("alter: %v", aerr)
	}
	if werr != nil {
		t.Fatalf("writer: %v", werr)
	}
	if err := open.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if hourly, err = rs.Get(ctx, "hourly"); err != nil {
		t.Fatal(err)
	}
	if _, err := rs.Refresh(ctx, hourly); err != nil {
		t.Fatal(err)
	}
	// Every write is in the old aggregates already.
	want := fetch(t, pool, alteredRaw)
	got := fetch(t, pool, alteredView)
	oldOnly := func(r result) result {
		out := result{}
		for k, v := range r {
			out[k] = v[:2]
		}
		return out
	}
	if d := diff(oldOnly(got), oldOnly(want), all); d != "" {
		t.Fatalf("old aggregates after writes during the alter:\n%s", d)
	}
	if _, err := rs.Invalidate(ctx, hourly, c.t.Add(-72*time.Hour).UnixMicro(), c.t.Add(time.Hour).UnixMicro()); err != nil {
		t.Fatal(err)
	}
	if _, err := rs.Refresh(ctx, hourly); err != nil {
		t.Fatal(err)
	}
	if d := diff(fetch(t, pool, alteredView), fetch(t, pool, alteredRaw), all); d != "" {
		t.Fatalf("after refresh --from --to:\n%s", d)
	}
	var n, rawN int64
	if err := pool.QueryRow(ctx, `SELECT (SELECT sum(count) FROM hourly), (SELECT count(*) FROM raw)`).Scan(&n, &rawN); err != nil {
		t.Fatal(err)
	}
	if n != rawN {
		t.Fatalf("hourly counts %d rows, raw has %d", n, rawN)
	}
}

// TestRefreshAfterAlterRefuses: a refresh that read the rollup before an
// alter does not write buckets with the old definition.
func TestRefreshAfterAlterRefuses(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: time.Date(2024, 3, 13, 15, 30, 0, 0, time.UTC)}
	pool, m, rs := setup(t, c)
	alterRaw(t, c, pool, m)
	stale, err := rs.Create(ctx, Spec{Name: "hourly", On: "raw", Bucket: partition.Interval{Micros: 3600e6}, GroupBy: []string{"device"},
		Aggs: mustAggs(t, "avg(v), count(*)"), RealTime: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rs.Alter(ctx, stale, AlterSpec{Add: mustAggs(t, "max(v), last(w, time)")}); err != nil {
		t.Fatal(err)
	}
	_, err = rs.Refresh(ctx, stale)
	if !errors.Is(err, ErrAltered) {
		t.Fatalf("refresh with the definition read before the alter: %v", err)
	}
	fresh, err := rs.Get(ctx, "hourly")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rs.Refresh(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	if d := diff(fetch(t, pool, alteredView), fetch(t, pool, alteredRaw), all); d != "" {
		t.Fatalf("after the refresh:\n%s", d)
	}
}
