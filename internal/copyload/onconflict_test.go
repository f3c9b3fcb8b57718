package copyload

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pg"
	"github.com/pgts/pgts/internal/pgtest"
	"github.com/pgts/pgts/internal/records"
)

// keyed makes series table kv (hourly, time, device, v) with primary
// key (time, device) unless pk is empty, and CHECK (v >= 0).
func keyed(t *testing.T, pk string) (*pgxpool.Pool, *partition.Manager, *Target) {
	t.Helper()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	m := partition.NewManager(pool, nil, time.Now)
	cols := "time timestamptz not null, device int not null, v float8 check (v >= 0)"
	if pk != "" {
		cols += ", " + pk
	}
	if _, err := m.Create(ctx, partition.CreateSpec{Name: "kv", TimeColumn: "time", Interval: partition.Interval{Micros: 3600e6}, Columns: cols}); err != nil {
		t.Fatal(err)
	}
	target, err := LookupTarget(ctx, pool, m, "kv")
	if err != nil {
		t.Fatal(err)
	}
	return pool, m, target
}

// kvRows renders rows i in [from, to) of 2020-01-01 (one a second,
// device i%10) with value v(i), as CSV.
func kvRows(from, to int, v func(int) string) string {
	start := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	var b strings.Builder
	for i := from; i < to; i++ {
		fmt.Fprintf(&b, "%s,%d,%s\n", start.Add(time.Duration(i)*time.Second).Format(time.RFC3339), i%10, v(i))
	}
	return b.String()
}

func loadKV(t *testing.T, pool *pgxpool.Pool, m *partition.Manager, target *Target, mode ConflictMode, id, input string) (Summary, error) {
	t.Helper()
	cfg := testConfig(2)
	cfg.BatchRows, cfg.OnConflict, cfg.LoadID, cfg.Fingerprint = 300, mode, id, "fp"
	l, err := New(pool, m, target, cfg)
	if err != nil {
		t.Fatal(err)
	}
	rd, err := records.NewReader(strings.NewReader(input), records.DefaultOptions(records.CSV))
	if err != nil {
		t.Fatal(err)
	}
	return l.Run(context.Background(), &FileSource{Inputs: []Input{{Name: "kv.csv", Reader: rd}}, Columns: []int{0, 1, 2}})
}

func kvSum(t *testing.T, pool *pgxpool.Pool) (rows int64, sum float64) {
	t.Helper()
	if err := pool.QueryRow(context.Background(), `SELECT count(*), coalesce(sum(v), 0) FROM kv`).Scan(&rows, &sum); err != nil {
		t.Fatal(err)
	}
	return rows, sum
}

// TestOnConflict loads 2,000 rows, then rows 1,000-3,000 again with other
// values: skip keeps the stored ones, update overwrites them (the last
// row of a key repeated in the input wins), a row the CHECK refuses is
// rejected with its reason; the summary counts inserted, updated and kept
// rows, and a rerun under the same load ID changes nothing.
func TestOnConflict(t *testing.T) {
	one := func(int) string { return "1" }
	two := func(i int) string {
		if i == 2500 {
			return "-1" // refused by the CHECK
		}
		return "2"
	}
	// Row 1,500's key once more, last: its value must win under update.
	again := kvRows(1000, 3000, two) + kvRows(1500, 1501, func(int) string { return "7" })
	for _, tc := range []struct {
		mode                   ConflictMode
		inserted, updated, kep int64
		sum                    float64
	}{
		// skip: 1,000 stored rows kept, 999 new (one refused), the repeat of 1,500 kept.
		{ConflictSkip, 999, 0, 1001, 1000*1 + 999*2 + 1000*1},
		// update: 1,000 stored rows overwritten, 999 new, the earlier row of 1,500 superseded.
		{ConflictUpdate, 999, 1001, 0, 1000*1 + 999*2 + 999*2 + 7},
	} {
		t.Run(tc.mode.String(), func(t *testing.T) {
			pool, m, target := keyed(t, "primary key (time, device)")
			if sum, err := loadKV(t, pool, m, target, ConflictReject, "", kvRows(0, 2000, one)); err != nil || sum.Loaded != 2000 {
				t.Fatalf("first load: %+v, %v", sum, err)
			}
			sum, err := loadKV(t, pool, m, target, tc.mode, "again", again)
			if err != nil || sum.Rejected != 1 || sum.Inserted != tc.inserted || sum.Updated != tc.updated || sum.Kept != tc.kep ||
				sum.Loaded != sum.Inserted+sum.Updated+sum.Kept {
				t.Fatalf("summary %+v, %v", sum, err)
			}
			if rows, got := kvSum(t, pool); rows != 2999 || got != tc.sum {
				t.Fatalf("%d rows, sum %v; want 2999, %v", rows, got, tc.sum)
			}
			rerun, err := loadKV(t, pool, m, target, tc.mode, "again", again)
			if err != nil || rerun.Skipped != sum.Loaded || rerun.Loaded != 0 {
				t.Fatalf("rerun: %+v, %v", rerun, err)
			}
			if rows, got := kvSum(t, pool); rows != 2999 || got != tc.sum {
				t.Fatalf("after the rerun: %d rows, sum %v", rows, got)
			}
		})
	}
}

// TestOnConflictNeedsAKey: --on-conflict on a table without a unique key
// is a usage error, and so is update with several unique keys and no
// primary key; skip takes any.
func TestOnConflictNeedsAKey(t *testing.T) {
	pool, m, target := keyed(t, "")
	_, err := loadKV(t, pool, m, target, ConflictSkip, "", kvRows(0, 10, func(int) string { return "1" }))
	if !pg.IsUsage(err) || !strings.Contains(err.Error(), "no primary key or unique constraint") {
		t.Fatalf("no key: %v", err)
	}
	pool, m, target = keyed(t, "unique (time, device), unique (time, v)")
	_, err = loadKV(t, pool, m, target, ConflictUpdate, "", kvRows(0, 10, func(int) string { return "1" }))
	if !pg.IsUsage(err) || !strings.Contains(err.Error(), "ambiguous") {
		t.Fatalf("two keys: %v", err)
	}
	if sum, err := loadKV(t, pool, m, target, ConflictSkip, "", kvRows(0, 10, func(int) string { return "1" })); err != nil || sum.Inserted != 10 {
		t.Fatalf("skip with two keys: %+v, %v", sum, err)
	}
}
