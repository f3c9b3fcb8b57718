package shard

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/pgts/pgts/internal/copyload"
	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pgtest"
)

// TestKillShardMidLoadThenResume: a kill -9 of a shard's postmaster in
// the middle of a load fails the load; once the shard is restarted, the
// same load with the same load ID completes, and every row is stored
// exactly once. Then pg_dump of every node succeeds.
func TestKillShardMidLoadThenResume(t *testing.T) {
	ctx := context.Background()
	cl := newCluster(t, 3)
	shardedConditions(t, cl, "cond", 6)
	opts := genOpts(120000, testStart())
	victim := pgtest.ServerCluster(t, 1) // shard b
	info, err := victim.Start(ctx)       // running: gives its postmaster's pid
	if err != nil {
		t.Fatal(err)
	}
	cfg := baseLoadConfig()
	cfg.LoadID = "crash-1"
	cfg.Retry = copyload.RetryPolicy{Attempts: 2, BaseDelay: 10 * time.Millisecond, MaxDelay: 20 * time.Millisecond}
	var batches atomic.Int64
	var once sync.Once
	killed := make(chan struct{})
	cfg.OnBatch = func(copyload.BatchInfo) {
		if batches.Add(1) == 20 {
			once.Do(func() {
				if err := syscall.Kill(info.PID, syscall.SIGKILL); err != nil {
					t.Errorf("kill -9: %v", err)
				}
				close(killed)
			})
		}
	}
	first, err := loadGen(ctx, t, cl.c, "cond", opts, cfg)
	select {
	case <-killed:
	default:
		t.Fatalf("the load ended before the kill: %+v, %v", first, err)
	}
	if err == nil {
		t.Fatalf("the load survived the kill of a shard without a retry: %+v", first)
	}
	var be *copyload.BatchError
	if !errors.As(err, &be) {
		t.Logf("first run's error (not a batch error): %v", err)
	}
	t.Logf("first run: loaded %d, not loaded %d: %v", first.Loaded, first.NotLoaded, err)
	if first.Loaded == 0 || first.Loaded >= opts.Rows {
		t.Fatalf("first run loaded %d of %d", first.Loaded, opts.Rows)
	}
	if _, err := victim.Start(ctx); err != nil {
		t.Fatalf("restarting the killed shard: %v", err)
	}
	cfg.OnBatch = nil
	cfg.Retry = copyload.DefaultConfig().Retry
	second, err := loadGen(ctx, t, cl.c, "cond", opts, cfg)
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	if second.Skipped+second.Loaded != opts.Rows || second.Skipped == 0 || second.Rejected != 0 {
		t.Fatalf("resume: %+v", second)
	}
	if n := scalar(t, cl.coord, `SELECT count(*) FROM cond`); n != opts.Rows {
		t.Fatalf("%d rows stored, want %d", n, opts.Rows)
	}
	if n := scalar(t, cl.coord, `SELECT count(*) FROM (SELECT DISTINCT time, device FROM cond) x`); n != opts.Rows {
		t.Fatalf("%d distinct (time, device), want %d: rows stored twice", n, opts.Rows)
	}

	dump := filepath.Join(pgtest.ServerCluster(t, 0).BinDir(), "pg_dump")
	nodes := append([]string{cl.coord.Config().ConnString()}, cl.urls...)
	for i, u := range nodes {
		out, err := exec.CommandContext(ctx, dump, "--schema-only", "-d", u).CombinedOutput()
		if err != nil {
			t.Fatalf("pg_dump of node %d: %v\n%s", i, err, out)
		}
		if len(out) == 0 {
			t.Fatalf("pg_dump of node %d printed nothing", i)
		}
	}
}

// TestRetentionOnEveryShard: maintenance through the coordinator drops
// expired time partitions on every shard and premakes new ones; a shard
// that is down is reported and the others are maintained.
func TestRetentionOnEveryShard(t *testing.T) {
	ctx := context.Background()
	cl := newCluster(t, 2)
	past := time.Now().Add(-48 * time.Hour)
	then := func() time.Time { return past }
	ret := partition.Interval{Micros: 6 * 3600e6}
	spec := TableSpec{Series: partition.CreateSpec{Name: "old", Columns: genColumns, TimeColumn: "time",
		Interval: partition.Interval{Micros: 3600e6}, Premake: 2, Retention: &ret}, ShardColumn: "device", Partitions: 4}
	if _, err := cl.c.CreateTable(ctx, spec, then); err != nil {
		t.Fatal(err)
	}
	g := genOpts(8000, past.Add(-time.Hour).Truncate(time.Hour))
	g.Rows = 8000
	cfg := baseLoadConfig()
	sum, err := loadGenAt(ctx, t, cl.c, "old", g, cfg, then)
	if err != nil || sum.Loaded != 8000 {
		t.Fatalf("load: %+v, %v", sum, err)
	}
	before := make([]int64, len(cl.shards))
	for i, sp := range cl.shards {
		before[i] = scalar(t, sp, `SELECT count(*) FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhparent WHERE c.relname LIKE 'old_p%'`)
	}
	res, err := cl.c.Maintain(ctx, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Failed() {
			t.Fatalf("shard %s: %+v", r.Shard, r)
		}
		dropped := 0
		for _, tr := range r.Results {
			dropped += len(tr.Dropped)
		}
		if len(r.Results) != 2 || dropped == 0 {
			t.Fatalf("shard %s: %d tables maintained, %d partitions dropped", r.Shard, len(r.Results), dropped)
		}
	}
	if n := scalar(t, cl.coord, `SELECT count(*) FROM old`); n != 0 {
		t.Fatalf("%d expired rows remain", n)
	}
	// the partitions of now were premade on every shard: a row of now
	// for every device goes in through the coordinator
	if _, err := cl.coord.Exec(ctx, `INSERT INTO old SELECT now(), d, 1, 1 FROM generate_series(1, 40) d`); err != nil {
		t.Fatalf("inserting rows of now after maintenance: %v", err)
	}
	for i, sp := range cl.shards {
		after := scalar(t, sp, `SELECT count(*) FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhparent WHERE c.relname LIKE 'old_p%'`)
		t.Logf("shard %d: %d time partitions before maintenance, %d after", i, before[i], after)
	}
	// a shard down: reported, the other maintained
	if _, err := cl.coord.Exec(ctx, `ALTER SERVER pgts_shard_b OPTIONS (SET port '1')`); err != nil {
		t.Fatal(err)
	}
	res, err = cl.c.Maintain(ctx, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].Failed() || !res[1].Failed() {
		t.Fatalf("with shard b down: %+v", res)
	}
}
