package copyload

import (
	"context"
	"testing"
	"time"

	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pgtest"
)

// TestReloadAfterTableDrop: a series table dropped with pgts and made
// again is a new table; a load into it under the load ID that filled the
// old one loads every row (the old ledger said they were all loaded, and
// the rerun skipped them: the new table stayed empty).
func TestReloadAfterTableDrop(t *testing.T) {
	ctx := context.Background()
	url := pgtest.DB(t)
	load := func() Summary {
		pool, m, target := setupConditions(t, url)
		cfg := testConfig(2)
		cfg.LoadID = "nightly"
		l, err := New(pool, m, target, cfg)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := l.Run(ctx, &GenSource{Name: "conditions", Gen: conditions(t, 3)})
		if err != nil {
			t.Fatal(err)
		}
		return sum
	}
	if sum := load(); sum.Loaded != 30_000 {
		t.Fatalf("first load: %+v", sum)
	}
	pool := pgtest.PoolFor(t, url)
	m := partition.NewManager(pool, nil, time.Now)
	tb, err := m.Table(ctx, "conditions")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Drop(ctx, tb); err != nil {
		t.Fatal(err)
	}
	if sum := load(); sum.Loaded != 30_000 || sum.Skipped != 0 {
		t.Fatalf("load into the table made again: %+v", sum)
	}
	var n int64
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM conditions`).Scan(&n); err != nil || n != 30_000 {
		t.Fatalf("%d rows in the table made again (%v)", n, err)
	}
}
