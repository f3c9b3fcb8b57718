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
