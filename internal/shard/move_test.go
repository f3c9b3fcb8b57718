package shard

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/pgts/pgts/internal/copyload"
	"github.com/pgts/pgts/internal/pg"
	"github.com/pgts/pgts/internal/pgtest"
)

// TestMovePartition: a partition moves whole to another shard — its
// rows, and its load ledger, so that rerunning the load that filled it
// loads nothing twice; queries through the coordinator answer the same;
// a move that fails half-way (the new shard down) leaves the old shard
// serving, refuses another target, and completes when run again.
func TestMovePartition(t *testing.T) {
	ctx := context.Background()
	cl := newCluster(t, 3)
	shardedConditions(t, cl, "cond", 6)
	opts := genOpts(12000, testStart())
	lcfg := baseLoadConfig()
	lcfg.LoadID = "before-move"
	if sum, err := loadGen(ctx, t, cl.c, "cond", opts, lcfg); err != nil || sum.Loaded != opts.Rows {
		t.Fatalf("load: %+v, %v", sum, err)
	}
	perDevice := `SELECT device, date_bin('1 hour', time, '2000-01-01'), count(*), round(avg(data1)::numeric, 9) FROM cond GROUP BY 1, 2 ORDER BY 1, 2`
	before := pgtest.Rows(t, cl.coord, perDevice)
	inP1 := scalar(t, cl.shards[1], `SELECT count(*) FROM cond_p1`)

	// partition 1 (shard b) to shard c, with shard c down: fails, b serves
	port := serverPort(t, cl, "c")
	setPort(t, cl, "c", "1")
	if _, err := cl.c.Move(ctx, "cond", 1, "c", nil); err == nil {
		t.Fatal("a move to a shard that is down succeeded")
	} else {
		t.Logf("move to a shard down: %v", err)
	}
	if n := scalar(t, cl.coord, `SELECT count(*) FROM cond_p1`); n != inP1 {
		t.Fatalf("during a failed move the coordinator reads %d rows of partition 1, want %d", n, inP1)
	}
	var ue *pg.UsageError
	if _, err := cl.c.Move(ctx, "cond", 1, "a", nil); !errors.As(err, &ue) {
		t.Fatalf("a second move of a partition being moved: %v", err)
	}
	setPort(t, cl, "c", port)

	res, err := cl.c.Move(ctx, "cond", 1, "c", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.From != "b" || res.To != "c" || res.Rows != inP1 || res.Ledgers != 1 {
		t.Fatalf("move: %+v, want %d rows from b to c", res, inP1)
	}
	sameRows(t, "per-device hourly rows after the move", pgtest.Rows(t, cl.coord, perDevice), before)
	if n := scalar(t, cl.shards[1], `SELECT count(*) FROM pg_class WHERE relname LIKE 'cond_p1%'`); n != 0 {
		t.Fatalf("shard b keeps %d relations of cond_p1", n)
	}
	if n := scalar(t, cl.shards[1], `SELECT (SELECT count(*) FROM pgts.load WHERE load_id LIKE '%/cond_p1') + (SELECT count(*) FROM pgts.shard_member WHERE table_name = 'cond_p1')`); n != 0 {
		t.Fatalf("shard b's catalog keeps %d rows of cond_p1", n)
	}
	if n := scalar(t, cl.shards[2], `SELECT count(*) FROM cond_p1`); n != inP1 {
		t.Fatalf("shard c holds %d rows of cond_p1, want %d", n, inP1)
	}
	if n := scalar(t, cl.coord, `SELECT count(*) FROM pgts.shard_placement WHERE table_name = 'cond' AND partition = 1 AND shard = 'c' AND move_peer IS NULL`); n != 1 {
		t.Fatal("the placement of partition 1 is not shard c")
	}
	// the load that filled it, again: every batch already loaded
	again, err := loadGen(ctx, t, cl.c, "cond", opts, lcfg)
	if err != nil || again.Loaded != 0 || again.Skipped != opts.Rows {
		t.Fatalf("the same load after the move: %+v, %v", again, err)
	}
	if n := scalar(t, cl.coord, `SELECT count(*) FROM cond`); n != opts.Rows {
		t.Fatalf("%d rows after the move and the rerun", n)
	}
	// new rows of partition 1's keys go to shard c
	var dev int
	if err := cl.coord.QueryRow(ctx, `SELECT d FROM generate_series(1, 1000) d WHERE satisfies_hash_partition('cond'::regclass, 6, 1, d) LIMIT 1`).Scan(&dev); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.coord.Exec(ctx, fmt.Sprintf(`INSERT INTO cond VALUES (now(), %d, 1, 1)`, dev)); err != nil {
		t.Fatal(err)
	}
	if n := scalar(t, cl.shards[2], `SELECT count(*) FROM cond_p1`); n != inP1+1 {
		t.Fatalf("a new row of partition 1 did not reach shard c (%d rows)", n)
	}
	if res, err := cl.c.Move(ctx, "cond", 1, "c", nil); err != nil || !res.AlreadyThere {
		t.Fatalf("moving again: %+v, %v", res, err)
	}
	if err := cl.c.Remove(ctx, "b"); err == nil {
		t.Fatal("removed shard b, which still holds partition 4")
	}
}

// TestMoveDuringLoad: a partition moved while a load writes into it: the
// load's writes to the old copy wait for the move and then fail or land
// before it; rerunning the load with its load ID completes it; every row
// is stored exactly once.
func TestMoveDuringLoad(t *testing.T) {
	ctx := context.Background()
	cl := newCluster(t, 3)
	shardedConditions(t, cl, "cond", 6)
	opts := genOpts(60000, testStart())
	lcfg := baseLoadConfig()
	lcfg.LoadID = "during-move"
	var once sync.Once
	moved := make(chan error, 1)
	var batches atomic.Int64
	lcfg.OnBatch = func(copyload.BatchInfo) {
		if batches.Add(1) == 10 {
			once.Do(func() {
				go func() {
					_, err := cl.c.Move(ctx, "cond", 1, "c", nil)
					moved <- err
				}()
			})
		}
	}
	first, err := loadGen(ctx, t, cl.c, "cond", opts, lcfg)
	t.Logf("load during the move: loaded %d, %v", first.Loaded, err)
	if err := <-moved; err != nil {
		t.Fatalf("move during a load: %v", err)
	}
	lcfg.OnBatch = nil
	second, err := loadGen(ctx, t, cl.c, "cond", opts, lcfg)
	if err != nil || second.Loaded+second.Skipped != opts.Rows {
		t.Fatalf("rerun after the move: %+v, %v", second, err)
	}
	if n := scalar(t, cl.coord, `SELECT count(*) FROM cond`); n != opts.Rows {
		t.Fatalf("%d rows stored, want %d", n, opts.Rows)
	}
	if n := scalar(t, cl.coord, `SELECT count(*) FROM (SELECT DISTINCT time, device FROM cond) x`); n != opts.Rows {
		t.Fatalf("%d distinct (time, device), want %d: rows stored twice", n, opts.Rows)
	}
	if n := scalar(t, cl.shards[1], `SELECT count(*) FROM pg_class WHERE relname LIKE 'cond_p1%'`); n != 0 {
		t.Fatalf("shard b keeps %d relations of cond_p1", n)
	}
}
