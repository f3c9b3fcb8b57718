package cli

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

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
