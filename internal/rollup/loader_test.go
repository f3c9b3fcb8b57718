package rollup

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgts/pgts/internal/copyload"
	"github.com/pgts/pgts/internal/gen"
	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pgtest"
)

// TestLoaderBulkAndLive loads with pgts' loader into a table with a
// rollup, on the bulk path (partitions filled, then attached: their rows
// are invalidated at the ATTACH) and then on the live path (COPY into the
// partitions: their triggers), and checks the rollup against GROUP BY.
func TestLoaderBulkAndLive(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	m := partition.NewManager(pool, nil, time.Now)
	rs, err := New(DefaultConfig(pool, m, nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Create(ctx, partition.CreateSpec{Name: "conditions", TimeColumn: "time", Interval: partition.Interval{Micros: 3600e6}, Premake: 1,
		Columns: "time timestamptz not null, device integer not null, data1 float8, data2 float8, data3 float8, data4 float8, data5 float8"}); err != nil {
		t.Fatal(err)
	}
	r, err := rs.Create(ctx, Spec{Name: "c15", On: "conditions", Bucket: partition.Interval{Micros: 900e6}, GroupBy: []string{"device"},
		Aggs: mustAggs(t, "avg(data1), count(*), max(data2), last(data3, time)"), RealTime: true})
	if err != nil {
		t.Fatal(err)
	}
	view := `SELECT (extract(epoch FROM bucket) * 1000000)::bigint, jsonb_build_array(device)::text, avg_data1, count, max_data2, last_data3 FROM c15`
	raw := `SELECT (extract(epoch FROM b) * 1000000)::bigint, jsonb_build_array(device)::text, avg(data1), count(*), max(data2), pgts.last(data3, time)
		FROM (SELECT pgts.time_bucket('15 minutes', time) b, * FROM conditions) x GROUP BY 1, 2`
	for _, bulk := range []bool{true, false} {
		target, err := copyload.LookupTarget(ctx, pool, m, "conditions")
		if err != nil {
			t.Fatal(err)
		}
		cfg := copyload.DefaultConfig()
		cfg.BatchRows, cfg.Bulk = 5000, bulk
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
		l, err := copyload.New(pool, m, target, cfg)
		if err != nil {
			t.Fatal(err)
		}
		opts, err := gen.DefaultOptions("conditions")
		if err != nil {
			t.Fatal(err)
		}
		opts.Batches, opts.BatchRows = 20, 1000
		g, err := gen.New("conditions", opts)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Run(ctx, &copyload.GenSource{Name: "conditions", Gen: g}); err != nil {
			t.Fatal(err)
		}
		if bt := l.BulkTimes(); bulk != (bt.Partitions > 0) {
			t.Fatalf("bulk=%v: bulk times %+v (the bulk path refused the table?)", bulk, bt)
		}
		// The real-time view joins the invalidations: its plan needs
		// their statistics (autovacuum's, or a refresh's ANALYZE).
		if _, err := pool.Exec(ctx, `ANALYZE pgts.rollup_invalidation`); err != nil {
			t.Fatal(err)
		}
		if d := diff(fetch(t, pool, view), fetch(t, pool, raw), all); d != "" {
			t.Fatalf("bulk=%v: real-time view before a refresh:\n%s", bulk, d)
		}
		st, err := rs.Refresh(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("bulk=%v: refreshed %+v", bulk, st)
		if st.Pairs+st.Ranges == 0 {
			t.Fatalf("bulk=%v: nothing rewritten: %+v", bulk, st)
		}
		if d := diff(fetch(t, pool, view), fetch(t, pool, raw), all); d != "" {
			t.Fatalf("bulk=%v: after a refresh:\n%s", bulk, d)
		}
	}
}

// TestLoaderRecordsOneRangePerBatch: pgts load records, per batch and
// partition, one range record per rollup in the batch's transaction (no
// (bucket, key) pair rows, no transition-table trigger on the partitions
// it COPYs into), the bulk path one per partition attached; the rollup
// equals GROUP BY before (real-time view) and after a refresh.
func TestLoaderRecordsOneRangePerBatch(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	m := partition.NewManager(pool, nil, time.Now)
	rs, err := New(DefaultConfig(pool, m, nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Create(ctx, partition.CreateSpec{Name: "conditions", TimeColumn: "time", Interval: partition.Interval{Micros: 3600e6}, Premake: 1,
		Columns: "time timestamptz not null, device integer not null, data1 float8, data2 float8, data3 float8, data4 float8, data5 float8"}); err != nil {
		t.Fatal(err)
	}
	var list []*Rollup
	for _, s := range []Spec{
		{Name: "c15", On: "conditions", Bucket: partition.Interval{Micros: 900e6}, GroupBy: []string{"device"},
			Aggs: mustAggs(t, "avg(data1), count(*), max(data2), last(data3, time)"), RealTime: true},
		{Name: "all5", On: "conditions", Bucket: partition.Interval{Micros: 300e6}, Aggs: mustAggs(t, "count(*), sum(data1)"), RealTime: true},
	} {
		r, err := rs.Create(ctx, s)
		if err != nil {
			t.Fatal(err)
		}
		list = append(list, r)
	}
	views := map[string][2]string{
		"c15": {`SELECT (extract(epoch FROM bucket) * 1000000)::bigint, jsonb_build_array(device)::text, avg_data1, count, max_data2, last_data3 FROM c15`,
			`SELECT (extract(epoch FROM b) * 1000000)::bigint, jsonb_build_array(device)::text, avg(data1), count(*), max(data2), pgts.last(data3, time)
			FROM (SELECT pgts.time_bucket('15 minutes', time) b, * FROM conditions) x GROUP BY 1, 2`},
		"all5": {`SELECT (extract(epoch FROM bucket) * 1000000)::bigint, '', count, sum_data1 FROM all5`,
			`SELECT (extract(epoch FROM b) * 1000000)::bigint, '', count(*), sum(data1) FROM (SELECT pgts.time_bucket('5 minutes', time) b, * FROM conditions) x GROUP BY 1`},
	}
	count := func(sql string) int64 {
		var n int64
		if err := pool.QueryRow(ctx, sql).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, bulk := range []bool{true, false} {
		target, err := copyload.LookupTarget(ctx, pool, m, "conditions")
		if err != nil {
			t.Fatal(err)
		}
		cfg := copyload.DefaultConfig()
		cfg.BatchRows, cfg.Bulk = 3000, bulk
		var batches atomic.Int64
		cfg.OnBatch = func(copyload.BatchInfo) { batches.Add(1) }
		l, err := copyload.New(pool, m, target, cfg)
		if err != nil {
			t.Fatal(err)
		}
		opts, err := gen.DefaultOptions("conditions")
		if err != nil {
			t.Fatal(err)
		}
		opts.Batches, opts.BatchRows = 12, 1000
		g, err := gen.New("conditions", opts)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Run(ctx, &copyload.GenSource{Name: "conditions", Gen: g}); err != nil {
			t.Fatal(err)
		}
		want := batches.Load()
		if bulk {
			want = int64(l.BulkTimes().Partitions)
		}
		if want == 0 {
			t.Fatalf("bulk=%v: nothing loaded", bulk)
		}
		for _, r := range list {
			if n := count(fmt.Sprintf(`SELECT count(*) FROM pgts.rollup_invalidation_range WHERE rollup_id = %d`, r.ID)); n != want {
				t.Errorf("bulk=%v: rollup %s has %d range records, want %d (one per batch and partition, or per partition attached)", bulk, r, n, want)
			}
		}
		if n := count(`SELECT count(*) FROM pgts.rollup_invalidation`); n != 0 {
			t.Errorf("bulk=%v: %d (bucket, key) pair records: the loader's COPY went through a transition-table trigger", bulk, n)
		}
		if n := count(`SELECT count(*) FROM pg_trigger g JOIN pg_partition_tree('conditions') p ON p.relid = g.tgrelid
			WHERE p.level > 0 AND g.tgnewtable IS NOT NULL AND g.tgrelid <> 'conditions_default'::regclass`); n != 0 {
			t.Errorf("bulk=%v: %d triggers with transition tables on partitions", bulk, n)
		}
		if _, err := pool.Exec(ctx, `ANALYZE pgts.rollup_invalidation_range`); err != nil {
			t.Fatal(err)
		}
		for name, q := range views {
			if d := diff(fetch(t, pool, q[0]), fetch(t, pool, q[1]), all); d != "" {
				t.Fatalf("bulk=%v: real-time view %s before a refresh:\n%s", bulk, name, d)
			}
		}
		for _, r := range list {
			st, err := rs.Refresh(ctx, r)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("bulk=%v: refreshed %s: %+v", bulk, r, st)
		}
		for name, q := range views {
			if d := diff(fetch(t, pool, q[0]), fetch(t, pool, q[1]), all); d != "" {
				t.Fatalf("bulk=%v: %s after a refresh:\n%s", bulk, name, d)
			}
		}
		if n := count(`SELECT count(*) FROM pgts.rollup_invalidation_range`); n != 0 {
			t.Errorf("bulk=%v: %d range records left after the refresh", bulk, n)
		}
	}
}

// TestLegacyRollupKeepsPairRecords: a rollup made before catalog
// migration 10 has a view that reads only (bucket, key) pair records. Its
// partitions keep the triggers with transition tables, and neither pgts
// load (live or bulk) nor an attach records it by range, so that view
// never misses a write.
func TestLegacyRollupKeepsPairRecords(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	m := partition.NewManager(pool, nil, time.Now)
	rs, err := New(DefaultConfig(pool, m, nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Create(ctx, partition.CreateSpec{Name: "conditions", TimeColumn: "time", Interval: partition.Interval{Micros: 3600e6}, Premake: 1,
		Columns: "time timestamptz not null, device integer not null, data1 float8, data2 float8, data3 float8, data4 float8, data5 float8"}); err != nil {
		t.Fatal(err)
	}
	r, err := rs.Create(ctx, Spec{Name: "c15", On: "conditions", Bucket: partition.Interval{Micros: 900e6}, GroupBy: []string{"device"},
		Aggs: mustAggs(t, "avg(data1), count(*)"), RealTime: true})
	if err != nil {
		t.Fatal(err)
	}
	// What migration 10 leaves of a rollup it found.
	if _, err := pool.Exec(ctx, `UPDATE pgts.rollup SET records_ranges = false WHERE id = $1`, r.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `SELECT pgts.rollup_add_triggers($1, relid) FROM pg_partition_tree('conditions')`, r.ID); err != nil {
		t.Fatal(err)
	}
	count := func(sql string) int64 {
		var n int64
		if err := pool.QueryRow(ctx, sql).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, bulk := range []bool{true, false} {
		target, err := copyload.LookupTarget(ctx, pool, m, "conditions")
		if err != nil {
			t.Fatal(err)
		}
		cfg := copyload.DefaultConfig()
		cfg.BatchRows, cfg.Bulk = 3000, bulk
		l, err := copyload.New(pool, m, target, cfg)
		if err != nil {
			t.Fatal(err)
		}
		opts, err := gen.DefaultOptions("conditions")
		if err != nil {
			t.Fatal(err)
		}
		opts.Batches, opts.BatchRows = 6, 1000
		g, err := gen.New("conditions", opts)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Run(ctx, &copyload.GenSource{Name: "conditions", Gen: g}); err != nil {
			t.Fatal(err)
		}
		if n := count(`SELECT count(*) FROM pgts.rollup_invalidation_range`); n != 0 {
			t.Errorf("bulk=%v: %d range records for a rollup whose view reads only pairs", bulk, n)
		}
		if n := count(`SELECT count(*) FROM pgts.rollup_invalidation`); n == 0 {
			t.Errorf("bulk=%v: no (bucket, key) pair recorded", bulk)
		}
		if n := count(`SELECT count(*) FROM pg_partition_tree('conditions') p WHERE p.level > 0 AND NOT EXISTS
			(SELECT 1 FROM pg_trigger g WHERE g.tgrelid = p.relid AND g.tgnewtable IS NOT NULL)`); n != 0 {
			t.Errorf("bulk=%v: %d partitions without a transition-table trigger", bulk, n)
		}
		if _, err := rs.Refresh(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
}
