package copyload

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/pgts/pgts/internal/catalog"
	"github.com/pgts/pgts/internal/pgtest"
)

// TestSecondRunRefused: while a run of a load ID holds its lock, a second
// run says the load is running and where, and writes nothing (two runs
// used to race into a raw duplicate key on load_batch_pkey).
func TestSecondRunRefused(t *testing.T) {
	ctx := context.Background()
	pool, m, target := setupConditions(t, pgtest.DB(t))
	cfg := testConfig(2)
	cfg.LoadID, cfg.Fingerprint = "busy", "fp"
	first, err := New(pool, m, target, cfg)
	if err != nil {
		t.Fatal(err)
	}
	first.cols = target.Columns
	if _, err := first.openLedger(ctx); err != nil {
		t.Fatal(err)
	}
	second, _ := New(pool, m, target, cfg)
	sum, err := second.Run(ctx, &GenSource{Name: "conditions", Gen: conditions(t, 2)})
	if !errors.Is(err, ErrLoadRunning) || !strings.Contains(err.Error(), "pid ") || !strings.Contains(err.Error(), "on host ") {
		t.Fatalf("second run: %v", err)
	}
	if sum.Loaded != 0 {
		t.Fatalf("second run loaded %d rows", sum.Loaded)
	}
	first.unlockLoad()
	third, _ := New(pool, m, target, cfg)
	if _, err := third.Run(ctx, &GenSource{Name: "conditions", Gen: conditions(t, 2)}); err != nil {
		t.Fatalf("after the first run ended: %v", err)
	}
	// This database's only: a server given by PGTS_TEST_DATABASE_URL
	// may be shared with other test binaries, whose loads hold locks of
	// the same key.
	var locks int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = $1
			AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`, catalog.LoadLockKey).Scan(&locks); err != nil {
		t.Fatal(err)
	}
	if locks != 0 {
		t.Fatalf("%d load locks held after the runs", locks)
	}
}
