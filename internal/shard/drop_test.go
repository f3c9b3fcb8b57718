package shard

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/pgts/pgts/internal/partition"
)

// TestDropTable: with a shard down, a drop removes the table from the
// coordinator at once (parent, foreign partitions, bucket function),
// drops the partitions on the shards that answer, names the shard left
// and refuses loads and creates of the name meanwhile; run again once
// the shard answers, it finishes: nothing of the table is left on any
// node or in any catalog, and the name can be created again.
func TestDropTable(t *testing.T) {
	ctx := context.Background()
	cl := newCluster(t, 3)
	shardedConditions(t, cl, "cond", 6)
	lcfg := baseLoadConfig()
	lcfg.LoadID = "before-drop"
	if sum, err := loadGen(ctx, t, cl.c, "cond", genOpts(6000, testStart()), lcfg); err != nil || sum.Loaded != 6000 {
		t.Fatalf("load: %+v, %v", sum, err)
	}
	// a move of partition 0 (shard a) to shard c that stopped after
	// making its copy there: the drop removes the copy too
	tb, err := cl.c.Table(ctx, "cond")
	if err != nil {
		t.Fatal(err)
	}
	shards, err := cl.c.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := cl.c.createOnShard(ctx, tb, shards[2], []int{0}, time.Now); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.coord.Exec(ctx, `UPDATE pgts.shard_placement SET move_peer = 'c' WHERE table_name = 'cond' AND partition = 0`); err != nil {
		t.Fatal(err)
	}
	port := serverPort(t, cl, "b")
	setPort(t, cl, "b", "1")
	res, err := cl.c.DropTable(ctx, "cond")
	var inc *DropIncompleteError
	if !errors.As(err, &inc) {
		t.Fatalf("drop with shard b down: %v", err)
	}
	t.Logf("drop with shard b down: %v", err)
	if fmt.Sprint(res.Left) != "map[b:[1 4]]" || res.Dropped != 4 {
		t.Fatalf("left %v, dropped %d", res.Left, res.Dropped)
	}
	if n := scalar(t, cl.coord, `SELECT count(*) FROM pg_class WHERE relname LIKE 'cond%'`); n != 0 {
		t.Fatalf("%d relations of cond left on the coordinator", n)
	}
	if n := scalar(t, cl.coord, `SELECT count(*) FROM pg_proc WHERE proname = 'cond_buckets'`); n != 0 {
		t.Fatal("cond_buckets left on the coordinator")
	}
	for i, want := range []int64{0, 2, 0} {
		if n := scalar(t, cl.shards[i], `SELECT count(*) FROM pg_class WHERE relname ~ '^cond_p[0-9]+$'`); n != want {
			t.Errorf("shard %d holds %d partitions, want %d", i, n, want)
		}
		if n := scalar(t, cl.shards[i], `SELECT count(*) FROM pgts.shard_member WHERE parent_name = 'cond'`); n != want {
			t.Errorf("shard %d records %d members, want %d", i, n, want)
		}
	}
	if _, err := loadGen(ctx, t, cl.c, "cond", genOpts(10, testStart()), baseLoadConfig()); err == nil {
		t.Fatal("a load into a table being dropped started")
	}
	spec := TableSpec{Series: shardedSpec("cond"), ShardColumn: "device", Partitions: 6}
	if _, err := cl.c.CreateTable(ctx, spec, time.Now); err == nil {
		t.Fatal("a create of a table being dropped succeeded")
	}
	if err := cl.c.Remove(ctx, "b"); err == nil {
		t.Fatal("removed a shard that still holds partitions")
	}

	setPort(t, cl, "b", port)
	if _, err := cl.c.DropTable(ctx, "cond"); err != nil {
		t.Fatalf("rerun: %v", err)
	}
	if n := scalar(t, cl.shards[1], `SELECT count(*) FROM pg_class WHERE relname LIKE 'cond%'`); n != 0 {
		t.Fatalf("%d relations of cond left on shard b", n)
	}
	for i, sp := range cl.shards {
		if n := scalar(t, sp, `SELECT (SELECT count(*) FROM pgts.shard_member) + (SELECT count(*) FROM pgts.series_table) + (SELECT count(*) FROM pgts.load)`); n != 0 {
			t.Errorf("shard %d's catalog keeps %d rows of dropped partitions", i, n)
		}
	}
	if n := scalar(t, cl.coord, `SELECT (SELECT count(*) FROM pgts.sharded_table) + (SELECT count(*) FROM pgts.shard_placement)`); n != 0 {
		t.Fatalf("the coordinator's catalog keeps %d rows", n)
	}
	if _, err := cl.c.DropTable(ctx, "cond"); !errors.Is(err, ErrNotSharded) {
		t.Fatalf("dropping again: %v", err)
	}
	if _, err := cl.c.CreateTable(ctx, spec, time.Now); err != nil {
		t.Fatalf("creating the name again: %v", err)
	}
	if n := scalar(t, cl.coord, `SELECT count(*) FROM cond`); n != 0 {
		t.Fatalf("the new table shows %d old rows", n)
	}
	// the same load under the same ID loads again: the old ledgers went
	if sum, err := loadGen(ctx, t, cl.c, "cond", genOpts(6000, testStart()), lcfg); err != nil || sum.Loaded != 6000 || sum.Skipped != 0 {
		t.Fatalf("the same load into the new table: %+v, %v", sum, err)
	}
}

func shardedSpec(name string) partition.CreateSpec {
	return partition.CreateSpec{Name: name, Columns: genColumns, TimeColumn: "time", Interval: partition.Interval{Micros: 3600e6}, Premake: 2}
}

// serverPort reads the port of shard name's foreign server.
func serverPort(t *testing.T, cl *cluster, name string) string {
	t.Helper()
	var port string
	if err := cl.coord.QueryRow(context.Background(), `SELECT split_part(o, '=', 2) FROM pg_foreign_server, unnest(srvoptions) o
		WHERE srvname = $1 AND o LIKE 'port=%'`, ServerName(name)).Scan(&port); err != nil {
		t.Fatal(err)
	}
	return port
}

// setPort points shard name's foreign server (and so pgts' direct
// connections, which read it) at port: "1" makes the shard unreachable.
func setPort(t *testing.T, cl *cluster, name, port string) {
	t.Helper()
	if _, err := cl.coord.Exec(context.Background(), `ALTER SERVER `+ServerName(name)+` OPTIONS (SET port '`+port+`')`); err != nil {
		t.Fatal(err)
	}
}
