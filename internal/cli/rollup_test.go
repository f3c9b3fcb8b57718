package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pgtest"
)

func TestRollupCommands(t *testing.T) {
	db := pgtest.DB(t)
	env := map[string]string{"DATABASE_URL": db}
	pool := pgtest.PoolFor(t, db)
	ctx := context.Background()
	if _, stderr, code := run(t, env, "table", "create", "cond", "--columns", `time timestamptz not null, "Dev ice" int, temp float8`,
		"--interval", "1 day", "--premake", "1"); code != 0 {
		t.Fatalf("table create: %d %s", code, stderr)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO cond SELECT now() - i * interval '1 minute', i % 3, i FROM generate_series(0, 600) i
		WHERE now() - i * interval '1 minute' >= date_trunc('day', now())`); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := run(t, env, "rollup", "create", `"Hour ly"`, "--on", "cond", "--bucket", "1 hour", "--group-by", `"Dev ice"`,
		"--agg", `avg(temp), max(temp) AS "Peak;", count(*)`)
	if code != 0 || !strings.Contains(out, "created rollup public.Hour ly") {
		t.Fatalf("rollup create: %d %s %s", code, out, stderr)
	}
	_, stderr, code = run(t, env, "rollup", "create", "bad", "--on", "cond", "--bucket", "1 hour", "--agg", "avg(temp); drop table cond")
	if code != 2 {
		t.Fatalf("hostile --agg: %d %s", code, stderr)
	}
	if _, stderr, code = run(t, env, "rollup", "refresh"); code != 0 || !strings.Contains(stderr, "refreshed rollup") {
		t.Fatalf("refresh: %d %s", code, stderr)
	}
	if _, stderr, code = run(t, env, "maintain"); code != 0 || !strings.Contains(stderr, "refreshed rollup") {
		t.Fatalf("maintain: %d %s", code, stderr)
	}
	got := pgtest.Rows(t, pool, `SELECT sum(count)::bigint, max("Peak;") FROM "Hour ly"`)
	want := pgtest.Rows(t, pool, `SELECT count(*), max(temp) FROM cond`)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("view totals %v, raw %v", got, want)
	}
	out, _, code = run(t, env, "rollup", "show", `"Hour ly"`, "--json")
	var j rollupJSON
	if err := json.Unmarshal([]byte(out), &j); err != nil || code != 0 {
		t.Fatalf("show --json: %d %v %s", code, err, out)
	}
	if j.On != "public.cond" || j.Bucket != "1 hour" || len(j.Aggs) != 3 || j.GroupBy[0] != "Dev ice" || !j.RealTime {
		t.Fatalf("show = %+v", j)
	}
	if out, _, code = run(t, env, "rollup", "list"); code != 0 || !strings.Contains(out, "public.Hour ly") {
		t.Fatalf("list: %d %s", code, out)
	}
	if _, _, code = run(t, env, "rollup", "refresh", `"Hour ly"`, "--from", "2000-01-01", "--to", "2100-01-01"); code != 0 {
		t.Fatalf("refresh --from --to: %d", code)
	}
	if _, _, code = run(t, env, "rollup", "drop", `"Hour ly"`); code != 2 {
		t.Fatalf("drop without --yes: %d", code)
	}
	if _, stderr, code = run(t, env, "rollup", "drop", `"Hour ly"`, "--yes"); code != 0 {
		t.Fatalf("drop: %d %s", code, stderr)
	}
	if _, stderr, code = run(t, env, "rollup", "show", `"Hour ly"`); code != 1 || !strings.Contains(stderr, "does not exist") {
		t.Fatalf("show after drop: %d %s", code, stderr)
	}
}

// TestRollupAlterCommand: rollup alter --add-agg adds a column that old
// buckets read NULL in until refresh --from --to; --drop-agg removes one;
// bad input is a usage error.
func TestRollupAlterCommand(t *testing.T) {
	db := pgtest.DB(t)
	env := map[string]string{"DATABASE_URL": db}
	pool := pgtest.PoolFor(t, db)
	ctx := context.Background()
	if _, stderr, code := run(t, env, "table", "create", "cond", "--columns", `time timestamptz not null, dev int, temp float8`,
		"--interval", "1 day", "--premake", "1"); code != 0 {
		t.Fatalf("table create: %d %s", code, stderr)
	}
	m := partition.NewManager(pool, nil, time.Now)
	tb, err := m.Table(ctx, "cond")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Ensure(ctx, tb, []int64{time.Now().Add(-24 * time.Hour).UnixMicro()}); err != nil {
		t.Fatal(err)
	}
	// 10 hours up to now: old buckets whatever the time of day.
	if _, err := pool.Exec(ctx, `INSERT INTO cond SELECT now() - i * interval '1 minute', i % 3, i FROM generate_series(0, 600) i`); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := run(t, env, "rollup", "create", "hourly", "--on", "cond", "--bucket", "1 hour", "--group-by", "dev",
		"--agg", "avg(temp)"); code != 0 {
		t.Fatalf("rollup create: %d %s", code, stderr)
	}
	if _, stderr, code := run(t, env, "rollup", "refresh"); code != 0 {
		t.Fatalf("refresh: %d %s", code, stderr)
	}
	if _, _, code := run(t, env, "rollup", "alter", "hourly"); code != 2 {
		t.Fatalf("alter without a change: %d", code)
	}
	if _, _, code := run(t, env, "rollup", "alter", "hourly", "--add-agg", "max(temp); drop table cond"); code != 2 {
		t.Fatalf("hostile --add-agg: %d", code)
	}
	out, stderr, code := run(t, env, "rollup", "alter", "hourly", "--add-agg", "max(temp), count(*)")
	if code != 0 || !strings.Contains(out, "altered rollup public.hourly") {
		t.Fatalf("alter: %d %s %s", code, out, stderr)
	}
	// The current hour is not materialized: the real-time view has it.
	got := pgtest.Rows(t, pool, `SELECT count(*) FILTER (WHERE max_temp IS NULL) > 0 FROM hourly`)
	if got[0] != "true" {
		t.Fatalf("no old bucket reads NULL after the alter: %v", got)
	}
	if _, stderr, code = run(t, env, "rollup", "refresh", "hourly", "--from", "2000-01-01", "--to", "2100-01-01"); code != 0 {
		t.Fatalf("refresh --from --to: %d %s", code, stderr)
	}
	got = pgtest.Rows(t, pool, `SELECT sum(count)::bigint, max(max_temp) FROM hourly`)
	want := pgtest.Rows(t, pool, `SELECT count(*), max(temp) FROM cond`)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("view totals %v, raw %v", got, want)
	}
	if out, stderr, code = run(t, env, "rollup", "alter", "hourly", "--drop-agg", "max_temp"); code != 0 {
		t.Fatalf("drop-agg: %d %s %s", code, out, stderr)
	}
	out, _, _ = run(t, env, "rollup", "show", "hourly", "--json")
	var j rollupJSON
	if err := json.Unmarshal([]byte(out), &j); err != nil || len(j.Aggs) != 2 {
		t.Fatalf("show after drop-agg: %v %s", err, out)
	}
}

// TestShardedRollupCommands: rollup create --on a sharded table, list,
// show, refresh, maintain and drop from the coordinator; alter is
// refused.
func TestShardedRollupCommands(t *testing.T) {
	coord := pgtest.DB(t)
	urls := pgtest.Servers(t, 2)
	env := map[string]string{"DATABASE_URL": coord}
	for i, name := range []string{"a", "b"} {
		if out, errOut, code := run(t, env, "shard", "add", name, urls[i]); code != 0 {
			t.Fatalf("shard add: %d\n%s%s", code, out, errOut)
		}
	}
	if _, errOut, code := run(t, env, "table", "create", "cond", "--columns", "time timestamptz not null, device integer not null, data1 float8, data2 float8",
		"--interval", "1 hour", "--premake", "2", "--shard-by", "device", "--shards", "4"); code != 0 {
		t.Fatalf("table create --shard-by: %d\n%s", code, errOut)
	}
	start := time.Now().UTC().Add(-3 * time.Hour).Format("2006-01-02 15:04:05")
	if out, errOut, code := run(t, env, "load", "cond", "--generate", "conditions", "--rows", "10000", "--devices", "20", "--width", "2",
		"--start", start, "--workers", "1", "--batch-size", "1000"); code != 0 {
		t.Fatalf("load: %d\n%s%s", code, out, errOut)
	}
	out, errOut, code := run(t, env, "rollup", "create", "ch", "--on", "cond", "--bucket", "1 hour", "--group-by", "device",
		"--agg", "avg(data1), max(data2), count(*)")
	if code != 0 || !strings.Contains(out, "sharded table public.cond") {
		t.Fatalf("rollup create: %d %s %s", code, out, errOut)
	}
	if out, _, code = run(t, env, "rollup", "list"); code != 0 || !strings.Contains(out, "public.ch") || !strings.Contains(out, "per shard") {
		t.Fatalf("list: %d %s", code, out)
	}
	out, _, code = run(t, env, "rollup", "show", "ch", "--json")
	var j rollupJSON
	if err := json.Unmarshal([]byte(out), &j); err != nil || code != 0 || !j.Sharded || j.On != "public.cond" || len(j.Aggs) != 3 {
		t.Fatalf("show --json: %d %v %s", code, err, out)
	}
	if _, errOut, code = run(t, env, "rollup", "refresh"); code != 0 || !strings.Contains(errOut, "sharded=true") {
		t.Fatalf("refresh: %d %s", code, errOut)
	}
	if _, errOut, code = run(t, env, "maintain"); code != 0 || !strings.Contains(errOut, "sharded=true") {
		t.Fatalf("maintain: %d %s", code, errOut)
	}
	if _, errOut, code = run(t, env, "rollup", "refresh", "ch", "--from", "2000-01-01", "--to", "2100-01-01"); code != 0 {
		t.Fatalf("refresh --from --to: %d %s", code, errOut)
	}
	pool := pgtest.PoolFor(t, coord)
	got := pgtest.Rows(t, pool, `SELECT sum(count)::bigint, max(max_data2) FROM ch`)
	want := pgtest.Rows(t, pool, `SELECT count(*), max(data2) FROM cond`)
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("view totals %v, raw %v", got, want)
	}
	if out, errOut, code = run(t, env, "rollup", "alter", "ch", "--add-agg", "min(data1)"); code != 0 || !strings.Contains(out, "altered rollup public.ch") {
		t.Fatalf("alter of a sharded rollup: %d %s %s", code, out, errOut)
	}
	if got := pgtest.Rows(t, pool, `SELECT count(*) > 0 FROM ch WHERE min_data1 IS NULL`); got[0] != "true" {
		t.Fatalf("no stored bucket of ch reads NULL for min_data1: %v", got)
	}
	if _, _, code = run(t, env, "rollup", "drop", "ch"); code != 2 {
		t.Fatalf("drop without --yes: %d", code)
	}
	if out, errOut, code = run(t, env, "rollup", "drop", "ch", "--yes"); code != 0 || !strings.Contains(out, "dropped rollup public.ch") {
		t.Fatalf("drop: %d %s %s", code, out, errOut)
	}
	if _, errOut, code = run(t, env, "rollup", "show", "ch"); code != 1 || !strings.Contains(errOut, "does not exist") {
		t.Fatalf("show after drop: %d %s", code, errOut)
	}
}
