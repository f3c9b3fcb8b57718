package rollup

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgts/pgts/internal/copyload"
	"github.com/pgts/pgts/internal/gen"
	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pg"
	"github.com/pgts/pgts/internal/pgtest"
	"github.com/pgts/pgts/internal/shard"
)

// TestShardedRollup: a rollup of a sharded table is a rollup of each
// partition on its shard, combined on the coordinator. Loaded straight
// into the shards by pgts' sharded loader, written through the
// coordinator, refreshed from the coordinator, its view equals GROUP BY
// over the coordinator's raw table, before and after refreshes, grouped
// by the shard key and not; a rollup built on it (daily from hourly)
// too. A shard that is down makes the refresh fail naming it; drop
// removes every part.
func TestShardedRollup(t *testing.T) {
	ctx := context.Background()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	coord := pgtest.Pool(t)
	urls := pgtest.Servers(t, 2)
	c := shard.New(coord, log)
	for i, u := range urls {
		if _, err := c.Add(ctx, string(rune('a'+i)), u); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.CreateTable(ctx, shard.TableSpec{Series: partition.CreateSpec{Name: "m",
		Columns:    "time timestamptz not null, device integer not null, data1 double precision, data2 double precision",
		TimeColumn: "time", Interval: partition.Interval{Micros: 3600e6}, Premake: 2}, ShardColumn: "device", Partitions: 4}, time.Now); err != nil {
		t.Fatal(err)
	}
	load := func(start time.Time, rows int64) {
		t.Helper()
		// 40 rows a generator batch: one a device, a batch a minute
		g, err := gen.New("conditions", gen.Options{Rows: rows, Devices: 40, Width: 2, BatchRows: 40, Start: start})
		if err != nil {
			t.Fatal(err)
		}
		in, stop, err := shard.GeneratorInput(ctx, "conditions", g)
		if err != nil {
			t.Fatal(err)
		}
		defer stop()
		cfg := copyload.DefaultConfig()
		cfg.Workers, cfg.BatchRows = 1, 1000
		if _, err := c.Load(ctx, "m", []shard.Input{in}, shard.LoadConfig{Load: cfg, Columns: []string{"time", "device", "data1", "data2"},
			Logger: log, Now: time.Now}); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now().UTC().Add(-6 * time.Hour).Truncate(time.Hour)
	load(start, 14000) // about 6 hours, up to now

	// The rollups' clock is past the end of every row's day: every
	// bucket, the daily rollup's too, is closed and materialized by a
	// refresh whatever the time of day (a rollup on a rollup does not
	// materialize the bucket holding now); the real-time parts are
	// checked before.
	ahead := time.Now().Add(25 * time.Hour)
	m := partition.NewManager(coord, log, func() time.Time { return ahead })
	rs, err := New(DefaultConfig(coord, m, log))
	if err != nil {
		t.Fatal(err)
	}
	srs := NewSharded(rs, c)
	const aggs = "avg(data1), min(data1), max(data2), sum(data2), count(*), first(data1, time), last(data2, time)"
	all15, err := srs.Create(ctx, Spec{Name: "m15", On: "m", Bucket: partition.Interval{Micros: 900e6}, Aggs: mustAggs(t, aggs), RealTime: true})
	if err != nil {
		t.Fatal(err)
	}
	byDev, err := srs.Create(ctx, Spec{Name: "mdev", On: "m", Bucket: partition.Interval{Micros: 3600e6}, GroupBy: []string{"device"},
		Aggs: mustAggs(t, aggs), RealTime: true})
	if err != nil {
		t.Fatal(err)
	}
	daily, err := srs.Create(ctx, Spec{Name: "mday", On: "m15", Bucket: partition.Interval{Days: 1}, Aggs: mustAggs(t, "avg(data1), count(*), last(data2, time)"), RealTime: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := srs.Create(ctx, Spec{Name: "plain", On: "nope", Bucket: partition.Interval{Days: 1}, Aggs: mustAggs(t, "count(*)")}); err == nil ||
		!strings.Contains(err.Error(), ErrNotShardedSource.Error()) {
		t.Fatalf("a rollup on a table that is not sharded: %v", err)
	}

	view := func(name string, keys string) string {
		return `SELECT (extract(epoch FROM bucket) * 1000000)::bigint, jsonb_build_array(` + keys + `)::text,
			avg_data1::float8, min_data1, max_data2, sum_data2::float8, count, first_data1, last_data2 FROM ` + name
	}
	raw := func(width, keys string) string {
		return `SELECT (extract(epoch FROM b) * 1000000)::bigint, jsonb_build_array(` + keys + `)::text,
			avg(data1)::float8, min(data1), max(data2), sum(data2)::float8, count(*), pgts.first(data1, time), pgts.last(data2, time)
			FROM (SELECT pgts.time_bucket('` + width + `', time) b, * FROM m) x GROUP BY 1, 2`
	}
	check := func(when string) {
		t.Helper()
		want := fetch(t, coord, raw("15 minutes", ""))
		if len(want) < 10 {
			t.Fatalf("%s: the raw table has %d buckets", when, len(want))
		}
		if d := diff(fetch(t, coord, view("m15", "")), want, all); d != "" {
			t.Fatalf("%s: m15:\n%s", when, d)
		}
		if d := diff(fetch(t, coord, view("mdev", "device")), fetch(t, coord, raw("1 hour", "device")), all); d != "" {
			t.Fatalf("%s: mdev:\n%s", when, d)
		}
	}
	if _, err := c.Move(ctx, "m", 1, "a", time.Now); err == nil || !strings.Contains(err.Error(), "rollups") {
		t.Fatalf("moving a partition of a table with rollups: %v", err)
	}
	if _, err := c.DropTable(ctx, "m"); err == nil || !strings.Contains(err.Error(), "rollups") {
		t.Fatalf("dropping a table with rollups: %v", err)
	}
	check("before a refresh (real-time)")
	for _, r := range []*ShardedRollup{all15, byDev, daily} {
		st, err := srs.Refresh(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		if st.RowsWritten == 0 {
			t.Fatalf("refresh of %s wrote nothing: %+v", r, st)
		}
	}
	check("after a refresh")
	// Materialized on the shards, not only shown in real time.
	shardPools := []*pgxpool.Pool{pgtest.PoolFor(t, urls[0]), pgtest.PoolFor(t, urls[1])}
	var materialized int64
	for _, sp := range shardPools {
		names := pgtest.Rows(t, sp, `SELECT data_name FROM pgts.rollup WHERE rollup_name LIKE 'm15\_p%'`)
		if len(names) != 2 {
			t.Fatalf("a shard has the rollups %v, want 2 of m15", names)
		}
		for _, n := range names {
			var k int64
			if err := sp.QueryRow(ctx, `SELECT count(*) FROM `+pg.QuoteIdent(n)).Scan(&k); err != nil {
				t.Fatal(err)
			}
			materialized += k
		}
	}
	if materialized == 0 {
		t.Fatal("nothing materialized on the shards")
	}

	// More rows by the loader, a backfill and an update through the
	// coordinator; then refresh and --from --to.
	load(start.Add(3*time.Hour), 2000)
	execSQL(t, coord, `INSERT INTO m VALUES ($1, 3, 1e6, -1e6), ($1, 4, -5, 5)`, start.Add(10*time.Minute))
	execSQL(t, coord, `UPDATE m SET data1 = data1 + 1 WHERE device = 7 AND time < $1`, start.Add(time.Hour))
	check("after writes (real-time)")
	for _, r := range []*ShardedRollup{all15, byDev, daily} {
		if _, err := srs.Refresh(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	check("after the second refresh")
	if _, err := srs.Invalidate(ctx, byDev, start.UnixMicro(), time.Now().UnixMicro()); err != nil {
		t.Fatal(err)
	}
	check("after refresh --from --to")
	// Filters on the bucket and the group key reach the shards.
	plan := strings.Join(pgtest.Rows(t, coord, `EXPLAIN (VERBOSE, COSTS OFF) SELECT * FROM mdev WHERE device = 3 AND bucket >= now() - interval '1 day'`), "\n")
	remote := 0
	for _, line := range strings.Split(plan, "\n") {
		if strings.Contains(line, "Remote SQL:") && strings.Contains(line, "WHERE") && strings.Contains(line, "device") && strings.Contains(line, "bucket") {
			remote++
		}
	}
	if remote == 0 {
		t.Fatalf("the filters are not sent to the shards:\n%s", plan)
	}
	// Alter: an aggregate added to mdev reads NULL in the stored buckets
	// until refresh --from --to, then equals GROUP BY; a dropped one is
	// gone; one that mday combines cannot be dropped from m15.
	if byDev, err = srs.Alter(ctx, byDev, AlterSpec{Add: mustAggs(t, "min(data2)")}); err != nil {
		t.Fatal(err)
	}
	if n := len(fetch(t, coord, `SELECT bucket, device FROM mdev WHERE min_data2 IS NULL`)); n == 0 {
		t.Fatal("no stored bucket reads NULL for the added aggregate")
	}
	check("after alter")
	if _, err := srs.Invalidate(ctx, byDev, start.UnixMicro(), time.Now().UnixMicro()); err != nil {
		t.Fatal(err)
	}
	minView := `SELECT (extract(epoch FROM bucket) * 1000000)::bigint, jsonb_build_array(device)::text, min_data2 FROM mdev`
	minRaw := `SELECT (extract(epoch FROM pgts.time_bucket('1 hour', time)) * 1000000)::bigint, jsonb_build_array(device)::text, min(data2) FROM m GROUP BY 1, 2`
	if d := diff(fetch(t, coord, minView), fetch(t, coord, minRaw), all); d != "" {
		t.Fatalf("the added aggregate after refresh --from --to:\n%s", d)
	}
	if byDev, err = srs.Alter(ctx, byDev, AlterSpec{Drop: []string{"min_data2"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := coord.Exec(ctx, `SELECT min_data2 FROM mdev`); err == nil {
		t.Fatal("mdev still has min_data2 after dropping it")
	}
	if _, err := srs.Alter(ctx, all15, AlterSpec{Drop: []string{"avg_data1"}}); err == nil || !strings.Contains(err.Error(), "mday") {
		t.Fatalf("dropping an aggregate mday is built on: %v", err)
	}
	check("after dropping the added aggregate")

	dailyView := `SELECT (extract(epoch FROM bucket) * 1000000)::bigint, '[]', avg_data1::float8, count, last_data2 FROM mday`
	dailyRaw := `SELECT (extract(epoch FROM pgts.time_bucket('1 day', time)) * 1000000)::bigint, '[]', avg(data1)::float8, count(*), pgts.last(data2, time)
		FROM m GROUP BY 1`
	if d := diff(fetch(t, coord, dailyView), fetch(t, coord, dailyRaw), all); d != "" {
		t.Fatalf("mday:\n%s", d)
	}

	// A shard down: the refresh fails naming it, the others are refreshed.
	var port string
	if err := coord.QueryRow(ctx, `SELECT split_part(o, '=', 2) FROM pg_foreign_server, unnest(srvoptions) o WHERE srvname = 'pgts_shard_b' AND o LIKE 'port=%'`).Scan(&port); err != nil {
		t.Fatal(err)
	}
	execSQL(t, coord, `ALTER SERVER pgts_shard_b OPTIONS (SET port '1')`)
	if _, err := srs.Refresh(ctx, all15); err == nil || !strings.Contains(err.Error(), `shard "b"`) {
		t.Fatalf("refresh with shard b down: %v", err)
	}
	if _, err := coord.Exec(ctx, `SELECT count(*) FROM m15`); err == nil || !strings.Contains(err.Error(), "pgts_shard_b") {
		t.Fatalf("query with shard b down: %v", err)
	}
	execSQL(t, coord, `ALTER SERVER pgts_shard_b OPTIONS (SET port '`+port+`')`)

	list, err := srs.List(ctx)
	if err != nil || len(list) != 3 || list[0].Name != "m15" || list[2].Parent == nil || list[2].Parent.Name != "m15" {
		t.Fatalf("list: %+v %v", list, err)
	}
	if err := srs.Drop(ctx, all15); err == nil {
		t.Fatal("dropped a sharded rollup another is built on")
	}
	for _, r := range []*ShardedRollup{daily, all15, byDev} {
		if err := srs.Drop(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if got := pgtest.Rows(t, coord, `SELECT relname FROM pg_class WHERE relname LIKE 'm15%' OR relname LIKE 'mdev%' OR relname LIKE 'mday%'`); len(got) != 0 {
		t.Fatalf("left on the coordinator: %v", got)
	}
	for _, sp := range shardPools {
		if got := pgtest.Rows(t, sp, `SELECT relname FROM pg_class WHERE relname LIKE 'm15%' OR relname LIKE 'mdev%' OR relname LIKE 'mday%'
			UNION ALL SELECT rollup_name FROM pgts.rollup`); len(got) != 0 {
			t.Fatalf("left on a shard: %v", got)
		}
	}
}
