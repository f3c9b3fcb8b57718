package tsstore

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgts/pgts/internal/catalog"
)

// The layout benchmarks write one closed slot for each of benchSeries
// series per flush, in steady state (every ring row exists: the rings have
// lapped), as a 10 s archive does at every flush:
//
//	go test -run '^$' -bench FlushLayout -benchtime 20x -count 3 ./internal/tsstore
//
// Segments is the layout of package tsstore (one row per segment of 200
// series and slot, array slices updated); Rows is one row per series and
// slot, upserted.
const (
	benchSeries = 20_000
	benchSlots  = 30
)

func BenchmarkFlushLayoutSegments(b *testing.B) {
	benchLayout(b, func(ctx context.Context, pool *pgxpool.Pool) (func(slot int) error, error) {
		var bundle int32
		if err := pool.QueryRow(ctx, `INSERT INTO pgts.rra_bundle (cf, step_s, size) VALUES ('wmean', 10, $1) RETURNING id`, benchSlots).Scan(&bundle); err != nil {
			return nil, err
		}
		r := slotRows{
			bundle: make([]int32, benchSeries), seg: make([]int64, benchSeries), slot: make([]int32, benchSeries),
			pos: make([]int32, benchSeries), time: make([]int64, benchSeries), val: make([]float64, benchSeries),
		}
		return func(slot int) error {
			for i := range benchSeries {
				id := int64(i + 1)
				r.bundle[i], r.seg[i], r.pos[i] = bundle, id/SegmentWidth, int32(id%SegmentWidth)+1
				r.slot[i], r.time[i], r.val[i] = int32(slot%benchSlots), int64(base+10*slot), float64(i)
			}
			_, err := pool.Exec(ctx, sqlWriteSlots, r.bundle, r.seg, r.slot, r.pos, r.time, r.val)
			return err
		}, nil
	})
}

func BenchmarkFlushLayoutRows(b *testing.B) {
	benchLayout(b, func(ctx context.Context, pool *pgxpool.Pool) (func(slot int) error, error) {
		if _, err := pool.Exec(ctx, `CREATE TABLE rra_rows (
			series_id bigint, archive int, slot int, time bigint, value float8,
			PRIMARY KEY (series_id, archive, slot))`); err != nil {
			return nil, err
		}
		ids, slots, times, vals := make([]int64, benchSeries), make([]int32, benchSeries), make([]int64, benchSeries), make([]float64, benchSeries)
		return func(slot int) error {
			for i := range benchSeries {
				ids[i], slots[i], times[i], vals[i] = int64(i+1), int32(slot%benchSlots), int64(base+10*slot), float64(i)
			}
			_, err := pool.Exec(ctx, `INSERT INTO rra_rows
				SELECT s, 0, sl, t, v FROM unnest($1::int8[], $2::int4[], $3::int8[], $4::float8[]) AS x(s, sl, t, v)
				ON CONFLICT (series_id, archive, slot) DO UPDATE SET time = excluded.time, value = excluded.value`,
				ids, slots, times, vals)
			return err
		}, nil
	})
}

// benchLayout fills every ring slot once, then times flushes of one slot
// of every series.
func benchLayout(b *testing.B, setup func(context.Context, *pgxpool.Pool) (func(slot int) error, error)) {
	ctx := context.Background()
	pool := newPool(b)
	if err := catalog.Migrate(ctx, pool); err != nil {
		b.Fatal(err)
	}
	flush, err := setup(ctx, pool)
	if err != nil {
		b.Fatal(err)
	}
	for slot := range benchSlots {
		if err := flush(slot); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := pool.Exec(ctx, `VACUUM ANALYZE`); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	slot := benchSlots
	for b.Loop() {
		if err := flush(slot); err != nil {
			b.Fatal(err)
		}
		slot++
	}
	b.ReportMetric(float64(benchSeries)*float64(b.N)/b.Elapsed().Seconds(), "slots/s")
	b.StopTimer()
	var size int64
	if err := pool.QueryRow(ctx, `SELECT coalesce(pg_total_relation_size(to_regclass('pgts.rra_data')), 0)
		+ coalesce(pg_total_relation_size(to_regclass('rra_rows')), 0)`).Scan(&size); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(size)/(benchSeries*benchSlots), "bytes/slot")
}
