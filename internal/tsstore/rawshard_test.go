package tsstore

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgts/pgts/internal/copyload"
	"github.com/pgts/pgts/internal/ingest"
	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pgtest"
	scaleout "github.com/pgts/pgts/internal/shard"
)

// shardedRaw makes the coordinator pool's shards (n servers) and a raw
// table sharded by series_id into 4 partitions over them, as
// `pgts table create raw_points --shard-by series_id` does; it returns
// the shards' URLs.
func shardedRaw(t *testing.T, pool *pgxpool.Pool, cfg Config, n int) []string {
	t.Helper()
	ctx := context.Background()
	c := scaleout.New(pool, nil)
	urls := pgtest.Servers(t, n)
	for i, u := range urls {
		if _, err := c.Add(ctx, string(rune('a'+i)), u); err != nil {
			t.Fatal(err)
		}
	}
	spec := scaleout.TableSpec{Series: partition.CreateSpec{Name: cfg.Raw.Table, Columns: "time timestamptz NOT NULL, series_id bigint NOT NULL, value float8",
		TimeColumn: "time", Interval: cfg.Raw.Interval, Premake: 2, Retention: cfg.Raw.Retention, Index: rawTimeIndex, ExtraIndexes: []string{"series_id, time"}},
		ShardColumn: "series_id", Partitions: 4}
	if _, err := c.CreateTable(ctx, spec, cfg.Now); err != nil {
		t.Fatal(err)
	}
	return urls
}

// rawRound is round r of the test points: 40 raw-only series (b.* match
// no rule), 50 points each, 1 s apart, values unique across rounds.
func rawRound(r int) []ingest.Point {
	var pts []ingest.Point
	for i := 0; i < 50; i++ {
		for sr := 0; sr < 40; sr++ {
			pts = append(pts, pt(fmt.Sprintf("b.s%d", sr), float64(r*50+i)-200, float64(r*100000+i*100+sr)))
		}
	}
	return pts
}

// TestShardedRawExactlyOnce: with the raw table sharded over 2 servers,
// raw points go to the shards; a kill -9 of one shard fails the flush
// after the other shard's partitions committed, and the points stay
// buffered; once the shard is restarted a flush writes the rest: every
// point once, no ledger left on the shards.
func TestShardedRawExactlyOnce(t *testing.T) {
	ctx := context.Background()
	pgtest.Servers(t, 2) // started before newPool's goroutine baseline
	victim := pgtest.ServerCluster(t, 1)
	pool := newPool(t)
	cfg := testConfig(t, &clock{})
	cfg.Raw.Retry = copyload.RetryPolicy{Attempts: 2, BaseDelay: 10 * time.Millisecond, MaxDelay: 20 * time.Millisecond}
	cfg.Logger = slog.New(slog.NewTextHandler(testLogWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	shards := shardedRaw(t, pool, cfg, 2)
	s := open(t, pool, cfg)

	mustAdd(t, s, rawRound(0)...)
	mustFlush(t, s)
	info, err := victim.Start(ctx) // running: gives its postmaster's pid
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(info.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	mustAdd(t, s, rawRound(1)...)
	if err := s.Flush(ctx); err == nil {
		t.Fatal("a flush with a shard killed succeeded")
	} else {
		t.Logf("flush with shard b down: %v", err)
	}
	if st := s.Stats(); st.RawStored <= 2000 || st.RawStored >= 4000 {
		t.Fatalf("with shard b down, %d raw points stored; want the first round and shard a's share of the second", st.RawStored)
	}
	if _, err := victim.Start(ctx); err != nil {
		t.Fatalf("restarting the killed shard: %v", err)
	}
	mustAdd(t, s, rawRound(2)...)
	// The first flush after the restart may meet connections the kill
	// broke (each is dropped on failure); the daemon retries every
	// flush interval, the test a few times.
	for i := 0; ; i++ {
		err := s.Flush(ctx)
		if err == nil {
			break
		}
		if i == 3 {
			t.Fatalf("flushes after the restart keep failing: %v", err)
		}
		t.Logf("flush %d after the restart: %v", i, err)
	}
	const total = 3 * 2000
	var rows, distinct int64
	if err := pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT value) FROM raw_points`).Scan(&rows, &distinct); err != nil {
		t.Fatal(err)
	}
	if rows != total || distinct != total {
		t.Fatalf("the coordinator sees %d raw points, %d distinct; want %d each", rows, distinct, total)
	}
	var onShards int64
	for i, u := range shards {
		sp := pgtest.PoolFor(t, u) // opened after the restart
		var n, ledger int64
		for p := i; p < 4; p += 2 {
			if err := sp.QueryRow(ctx, fmt.Sprintf(`SELECT count(*) FROM raw_points_p%d`, p)).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				t.Errorf("partition %d on shard %d holds no points", p, i)
			}
			onShards += n
		}
		if err := sp.QueryRow(ctx, `SELECT count(*) FROM pgts.load`).Scan(&ledger); err != nil {
			t.Fatal(err)
		}
		if ledger != 0 {
			t.Errorf("shard %d keeps %d ledgers of completed writes: %v", i, ledger, pgtest.Rows(t, sp, `SELECT load_id FROM pgts.load`))
		}
	}
	if onShards != total {
		t.Fatalf("the shards hold %d points, want %d", onShards, total)
	}
	if st := s.Stats(); st.RawStored != total {
		t.Fatalf("stats: %d raw points stored, want %d", st.RawStored, total)
	}
}

// TestShardedRawSameAsLocal: the same points sent to a daemon whose raw
// table is sharded and to one whose raw table is local give the same
// pgts.raw_points on the coordinator and the same Fetch of raw series.
func TestShardedRawSameAsLocal(t *testing.T) {
	pgtest.Servers(t, 2)
	coord := newPool(t)
	local := pgtest.Pool(t)
	cfg := testConfig(t, &clock{})
	shardedRaw(t, coord, cfg, 2)
	sharded := open(t, coord, cfg)
	plain := open(t, local, cfg)
	for r := 0; r < 2; r++ {
		mustAdd(t, sharded, rawRound(r)...)
		mustAdd(t, plain, rawRound(r)...)
		mustFlush(t, sharded)
		mustFlush(t, plain)
	}
	q := `SELECT name, time, value FROM pgts.raw_points ORDER BY name, time`
	got, want := pgtest.Rows(t, coord, q), pgtest.Rows(t, local, q)
	if len(want) != 4000 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("pgts.raw_points: %d rows sharded, %d local", len(got), len(want))
	}
	// the hourly maintenance reaches every shard holding the raw table
	res := sharded.rawShard.Maintain(context.Background())
	if len(res) != 2 {
		t.Fatalf("maintenance of the raw table on %d shards, want 2", len(res))
	}
	for _, r := range res {
		if r.Failed() || len(r.Results) != 2 {
			t.Fatalf("maintenance on shard %s: %+v", r.Shard, r)
		}
	}
	for _, name := range []string{"b.s0", "b.s7", "b.s39"} {
		g := fetch1(t, sharded, name, base-300, base+100)
		w := fetch1(t, plain, name, base-300, base+100)
		if g.Start != w.Start || g.Step != w.Step || !sameValues(g.Values, w.Values) {
			t.Fatalf("fetch %s: sharded %d %d %v\nlocal %d %d %v", name, g.Start, g.Step, g.Values, w.Start, w.Step, w.Values)
		}
	}
}

type testLogWriter struct{ t *testing.T }

func (w testLogWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// TestShardedRawAfterMove: a partition of the sharded raw table moved to
// another shard while the daemon runs (pgts shard move) is written on its
// new shard: the write that meets the old shard's dropped table is kept,
// the writer rereads the placement, and the next flush completes it;
// every point once.
func TestShardedRawAfterMove(t *testing.T) {
	ctx := context.Background()
	pgtest.Servers(t, 2)
	pool := newPool(t)
	cfg := testConfig(t, &clock{})
	cfg.Raw.Retry = copyload.RetryPolicy{Attempts: 2, BaseDelay: 10 * time.Millisecond, MaxDelay: 20 * time.Millisecond}
	shardedRaw(t, pool, cfg, 2)
	s := open(t, pool, cfg)
	mustAdd(t, s, rawRound(0)...)
	mustFlush(t, s)
	res, err := scaleout.New(pool, nil).Move(ctx, "raw_points", 1, "a", cfg.Now)
	if err != nil || res.From != "b" || res.Rows == 0 {
		t.Fatalf("move: %+v, %v", res, err)
	}
	mustAdd(t, s, rawRound(1)...)
	for i := 0; ; i++ {
		err := s.Flush(ctx)
		if err == nil {
			break
		}
		if i == 2 {
			t.Fatalf("flushes after the move keep failing: %v", err)
		}
		t.Logf("flush %d after the move: %v", i, err)
	}
	var rows, distinct int64
	if err := pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT value) FROM raw_points`).Scan(&rows, &distinct); err != nil {
		t.Fatal(err)
	}
	if rows != 4000 || distinct != 4000 {
		t.Fatalf("after the move: %d raw points, %d distinct; want 4000 each", rows, distinct)
	}
}
