package partition

import (
	"context"
	"testing"
	"time"

	"github.com/pgts/pgts/internal/pgtest"
)

// TestMaintainVacuumsClosedPartitions: rows INSERTed into a partition
// leave its pages not all-visible (so an index-only scan still reads the
// heap) until a VACUUM; too few rows for autovacuum's insert threshold
// never get one. Maintain vacuums (and analyzes) each closed partition
// (its upper bound passed) written since its last vacuum, once; it leaves
// the open partition alone.
func TestMaintainVacuumsClosedPartitions(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	s := spec("vac")
	s.Interval = day()
	m := NewManager(pool, nil, fixedClock(clock0)) // 2024-03-13 15:30
	tb, err := m.Create(ctx, s)
	if err != nil {
		t.Fatal(err)
	}
	day12 := time.Date(2024, 3, 12, 0, 0, 0, 0, time.UTC)
	if _, err := m.Ensure(ctx, tb, []int64{day12.UnixMicro()}); err != nil {
		t.Fatal(err)
	}
	// 300 rows in the closed day 03-12 and in the open day 03-13, their
	// statistics sent before the session reports ready (PostgreSQL 15+),
	// committed synchronously (the test cluster commits asynchronously,
	// and VACUUM does not mark a page all-visible while the commit of its
	// rows is not flushed yet)
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SET synchronous_commit = on; INSERT INTO vac SELECT timestamptz '2024-03-12 00:00+00' + i * interval '4 minutes', i % 10, i FROM generate_series(0, 299) AS i;
		INSERT INTO vac SELECT timestamptz '2024-03-13 00:00+00' + i * interval '1 minute', i % 10, i FROM generate_series(0, 299) AS i`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `SELECT pg_stat_force_next_flush()`); err != nil {
		t.Fatal(err)
	}
	visible := func(name string) (pages, allVisible int, analyzed bool) {
		t.Helper()
		if err := pool.QueryRow(ctx, `SELECT c.relpages, c.relallvisible, c.reltuples >= 0 FROM pg_class c WHERE c.oid = to_regclass($1)`, name).Scan(&pages, &allVisible, &analyzed); err != nil {
			t.Fatal(err)
		}
		return
	}
	res := m.Maintain(ctx, []*Table{tb})
	if len(res) != 1 || res[0].Err != nil {
		t.Fatalf("maintain: %+v", res)
	}
	if pages, all, analyzed := visible("vac_p20240312"); pages == 0 || all != pages || !analyzed {
		t.Errorf("closed partition vac_p20240312 after maintain: %d pages, %d all-visible, analyzed %v; want all pages all-visible, analyzed", pages, all, analyzed)
	}
	if _, all, _ := visible("vac_p20240313"); all != 0 {
		t.Errorf("open partition vac_p20240313 was vacuumed by maintain (%d pages all-visible)", all)
	}
	if res[0].Vacuumed != 1 {
		t.Errorf("maintain reports %d partitions vacuumed, want 1 (vac_p20240312)", res[0].Vacuumed)
	}
	// A second pass with nothing written since finds nothing to do.
	res = m.Maintain(ctx, []*Table{tb})
	if len(res) != 1 || res[0].Err != nil || res[0].Vacuumed != 0 {
		t.Errorf("second maintain: %+v, want nothing vacuumed", res)
	}
}
