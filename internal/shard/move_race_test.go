package shard

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/pgts/pgts/internal/copyload"
)

// TestLoadRacingMoveSaysMoved: a load whose partition is moved while it
// writes fails saying that the partition moved and that a rerun with the
// same load ID completes it (it used to fail with the old shard's raw
// `relation "public.cond_p1" does not exist`); the rerun then stores
// every row exactly once. The move runs, deterministically, while every
// partition's loader waits between two batches.
func TestLoadRacingMoveSaysMoved(t *testing.T) {
	ctx := context.Background()
	cl := newCluster(t, 3)
	shardedConditions(t, cl, "cond", 6)
	opts := genOpts(60000, testStart())
	lcfg := baseLoadConfig()
	lcfg.LoadID = "racing-move"
	var once sync.Once
	moved := make(chan struct{})
	var moveErr error
	lcfg.OnBatch = func(copyload.BatchInfo) {
		// After a committed batch, outside any transaction of the load.
		once.Do(func() {
			go func() {
				defer close(moved)
				_, moveErr = cl.c.Move(ctx, "cond", 1, "c", nil)
			}()
		})
		<-moved
	}
	_, err := loadGen(ctx, t, cl.c, "cond", opts, lcfg)
	if moveErr != nil {
		t.Fatalf("move: %v", moveErr)
	}
	var me *MovedError
	if !errors.As(err, &me) || me.Partition != 1 || me.From != "b" || me.To != "c" ||
		!strings.Contains(err.Error(), "moved") || !strings.Contains(err.Error(), "rerun the same load with --load-id racing-move") {
		t.Fatalf("load racing the move: %v; want a MovedError for partition 1, b to c", err)
	}
	t.Logf("load racing the move: %v", err)
	lcfg.OnBatch = nil
	second, err := loadGen(ctx, t, cl.c, "cond", opts, lcfg)
	if err != nil || second.Loaded+second.Skipped != opts.Rows {
		t.Fatalf("rerun after the move: %+v, %v", second, err)
	}
	if n := scalar(t, cl.coord, `SELECT count(*) FROM cond`); n != opts.Rows {
		t.Fatalf("%d rows stored, want %d", n, opts.Rows)
	}
	if n := scalar(t, cl.coord, `SELECT count(*) FROM (SELECT DISTINCT time, device FROM cond) x`); n != opts.Rows {
		t.Fatalf("%d distinct (time, device), want %d", n, opts.Rows)
	}
}

// TestMoveDestinationDiesNamesIt: a move whose destination's connection
// dies in the middle of the copy names the destination (it used to blame
// the source: `reading ... on shard "b": copy stopped`); once the
// destination is sound, the same move completes.
func TestMoveDestinationDiesNamesIt(t *testing.T) {
	ctx := context.Background()
	cl := newCluster(t, 3)
	shardedConditions(t, cl, "cond", 6)
	opts := genOpts(6000, testStart())
	if sum, err := loadGen(ctx, t, cl.c, "cond", opts, baseLoadConfig()); err != nil || sum.Loaded != opts.Rows {
		t.Fatalf("load: %+v, %v", sum, err)
	}
	inP1 := scalar(t, cl.shards[1], `SELECT count(*) FROM cond_p1`)
	// On shard c, the backend writing the first row of cond_p1 ends its
	// own connection, as a server that dies.
	dst := cl.shards[2]
	for _, q := range []string{
		`CREATE FUNCTION die_row() RETURNS trigger LANGUAGE plpgsql AS $$
		 BEGIN PERFORM pg_terminate_backend(pg_backend_pid()); PERFORM pg_sleep(5); RETURN NEW; END $$`,
		`CREATE FUNCTION arm_die() RETURNS event_trigger LANGUAGE plpgsql AS $$
		 BEGIN
		   IF EXISTS (SELECT FROM pg_event_trigger_ddl_commands() WHERE command_tag = 'CREATE TABLE' AND object_identity = 'public.cond_p1') THEN
		     CREATE TRIGGER die BEFORE INSERT ON public.cond_p1 FOR EACH ROW EXECUTE FUNCTION die_row();
		   END IF;
		 END $$`,
		`CREATE EVENT TRIGGER arm_die ON ddl_command_end EXECUTE FUNCTION arm_die()`,
	} {
		if _, err := dst.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	_, err := cl.c.Move(ctx, "cond", 1, "c", nil)
	if err == nil {
		t.Fatal("a move whose destination died succeeded")
	}
	t.Logf("move, destination died: %v", err)
	if !strings.Contains(err.Error(), `writing "public"."cond_p1" on shard "c"`) || strings.Contains(err.Error(), `on shard "b"`) && strings.Contains(err.Error(), "reading") {
		t.Fatalf("move, destination died: %v; want the failure of shard \"c\" named", err)
	}
	for _, q := range []string{`DROP EVENT TRIGGER arm_die`, `DROP TRIGGER die ON public.cond_p1`} {
		if _, err := dst.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	res, err := cl.c.Move(ctx, "cond", 1, "c", nil)
	if err != nil || res.Rows != inP1 {
		t.Fatalf("the same move again: %+v, %v; want %d rows", res, err, inP1)
	}
}
