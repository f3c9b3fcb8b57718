package tsstore

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Two daemons on one database share segments: series ids are handed out in
// ranges to each, so the ids of one segment's 200 positions can belong to
// both, and both may insert the same missing archive or state row at
// once. The flush that loses the race must not fail: it writes its
// positions into the row the other inserted, in the same flush.
//
// The other daemon is played by a transaction inserting the rows a flush
// of its own would insert (empty but for its positions), held open until
// this store's flush waits for it.
func TestFlushRacesAnotherWriterInsertingItsRows(t *testing.T) {
	raced := flushAgainstAnotherWriter(t, newPool(t), true)
	alone := flushAgainstAnotherWriter(t, newPool(t), false)
	known := 0
	for _, v := range alone.Values {
		if !math.IsNaN(v) {
			known++
		}
	}
	if known < 4 {
		t.Fatalf("the store alone kept %d values: %v", known, alone.Values)
	}
	checkSeries(t, raced, alone.Start, alone.Step, alone.Values)
}

// flushAgainstAnotherWriter writes a series in two flushes, the first
// writing its consolidation state's row, the second its archive rows;
// with race, another writer inserts those rows during each flush. It
// returns the series as a store that has only the database reads it.
func flushAgainstAnotherWriter(t *testing.T, pool *pgxpool.Pool, race bool) Series {
	ctx := context.Background()
	var c clock
	cfg := testConfig(t, &c)
	cfg.Raw = nil
	s := open(t, pool, cfg)
	flush := func(stmt string) {
		if !race {
			mustFlush(t, s)
			return
		}
		flushWhileHeld(t, pool, s, holdInsert(t, pool, stmt))
	}

	// The consolidation state's row of segment 0.
	mustAdd(t, s, pt("a.one", 0, 1))
	flush(`INSERT INTO pgts.ds_state (seg, states) VALUES (0, array_fill(NULL::bytea, ARRAY[` + segmentWidthSQL + `]))`)
	// The archive rows of segment 0: every slot of every archive.
	mustAdd(t, s, pt("a.one", 10, 2), pt("a.one", 20, 3), pt("a.one", 30, 4), pt("a.one", 40, 5))
	flush(`INSERT INTO pgts.rra_data (bundle_id, seg, slot, vals, times)
		SELECT b.id, 0, g, decode(repeat('` + packedNullHex + `', ` + segmentWidthSQL + `), 'hex'), decode(repeat('` + packedNoTimeHex + `', ` + segmentWidthSQL + `), 'hex')
		FROM pgts.rra_bundle b CROSS JOIN generate_series(0, b.size - 1) g`)
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	var states int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pgts.ds_state, unnest(states) st WHERE st IS NOT NULL`).Scan(&states); err != nil {
		t.Fatal(err)
	}
	if states != 1 {
		t.Fatalf("%d saved states, want the one of a.one", states)
	}
	return fetch1(t, open(t, pool, cfg), "a.one", base-10, base+40)
}

// holdInsert runs stmt in a transaction it leaves open, rolled back at the
// end of the test unless committed before.
func holdInsert(t *testing.T, pool *pgxpool.Pool, stmt string) pgx.Tx {
	t.Helper()
	ctx := context.Background()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback(ctx) })
	if _, err := tx.Exec(ctx, stmt); err != nil {
		t.Fatal(err)
	}
	return tx
}

// flushWhileHeld flushes s in the background, commits other once the flush
// waits for one of other's rows, and fails unless the flush succeeds.
func flushWhileHeld(t *testing.T, pool *pgxpool.Pool, s *Store, other pgx.Tx) {
	t.Helper()
	ctx := context.Background()
	done := make(chan error, 1)
	go func() { done <- s.Flush(ctx) }()
	var otherPID int
	if err := other.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&otherPID); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Minute)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for waiting := false; !waiting; {
		select {
		case err := <-done:
			t.Fatalf("the flush ended (%v) before waiting for the other writer's rows", err)
		case <-tick.C:
		}
		if time.Now().After(deadline) {
			t.Fatal("the flush never waited for the other writer's rows")
		}
		if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid)))`, otherPID).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
	}
	if err := other.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("flush racing another writer: %v", err)
	}
}
