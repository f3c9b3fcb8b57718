package rollup

import (
	"context"
	"log/slog"
	"os"
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
		if st.Pairs == 0 {
			t.Fatalf("bulk=%v: nothing rewritten: %+v", bulk, st)
		}
		if d := diff(fetch(t, pool, view), fetch(t, pool, raw), all); d != "" {
			t.Fatalf("bulk=%v: after a refresh:\n%s", bulk, d)
		}
	}
}
