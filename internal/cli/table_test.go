package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgts/pgts/internal/pgtest"
)

// TestGhostTables drops series tables with plain SQL and checks that every
// command gets the user out: list marks the stale entry, drop removes it,
// create replaces it, and load into a plain table of that name loads.
func TestGhostTables(t *testing.T) {
	db := pgtest.DB(t)
	env := map[string]string{"DATABASE_URL": db}
	pool := pgtest.PoolFor(t, db)
	ctx := context.Background()
	create := func(name string) {
		t.Helper()
		if _, stderr, code := run(t, env, "table", "create", name, "--columns", "time timestamptz not null, device int, v float8",
			"--interval", "1 day"); code != 0 {
			t.Fatalf("create %s: %d %s", name, code, stderr)
		}
	}
	create("listed")
	create("dropped")
	create("recreated")
	create("plain")
	for _, q := range []string{`DROP TABLE listed`, `DROP TABLE dropped`, `DROP TABLE recreated`,
		`DROP TABLE plain`, `CREATE TABLE plain (time timestamptz, device int, v float8)`} {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}

	out, stderr, code := run(t, env, "table", "list")
	if code != 0 || !strings.Contains(out, "public.listed") || !strings.Contains(out, "stale") {
		t.Fatalf("list: %d\n%s\n%s", code, out, stderr)
	}
	if out, _, _ = run(t, env, "table", "list"); strings.Contains(out, "public.listed") {
		t.Fatalf("list again still shows the removed entry:\n%s", out)
	}

	create("dropped2")
	if _, err := pool.Exec(ctx, `DROP TABLE dropped2`); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code = run(t, env, "table", "drop", "dropped2", "--yes"); code != 0 || !strings.Contains(stderr, "stale") {
		t.Fatalf("drop of a dropped table: %d %s", code, stderr)
	}
	create("recreated")

	now := time.Now().UTC().Format(time.RFC3339)
	in := filepath.Join(t.TempDir(), "in.csv")
	if err := os.WriteFile(in, []byte(now+",1,1.5\n"+now+",2,2.5\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code = run(t, env, "load", "plain", in); code != 0 {
		t.Fatalf("load into a plain table that replaced a series table: %d %s", code, stderr)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM plain`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("plain has %d rows (%v), want 2", n, err)
	}
}

// TestTableCreateMessages: errors about columns name a column, and a
// bigint time column's error says which flag gives its unit.
func TestTableCreateMessages(t *testing.T) {
	env := map[string]string{"DATABASE_URL": pgtest.DB(t)}
	_, stderr, code := run(t, env, "table", "create", "m", "--columns", "time timestamptz not null", "--time-column", `"unterminated`)
	if code != 2 || !strings.Contains(stderr, "column name") || strings.Contains(stderr, "table name") {
		t.Errorf("bad --time-column: %d %q", code, stderr)
	}
	_, stderr, code = run(t, env, "table", "create", "m", "--columns", "time bigint not null")
	if code == 0 || !strings.Contains(stderr, "--epoch") {
		t.Errorf("bigint time column without --epoch: %d %q", code, stderr)
	}
}

// TestTableShowWaiting: a row a SQL client inserted for a day without a
// partition is counted as waiting by table show and list, and maintain
// moves it.
func TestTableShowWaiting(t *testing.T) {
	db := pgtest.DB(t)
	env := map[string]string{"DATABASE_URL": db}
	if _, stderr, code := run(t, env, "table", "create", "w", "--columns", "time timestamptz not null, v float8",
		"--interval", "1 day", "--premake", "1", "--retention", "30 days"); code != 0 {
		t.Fatalf("create: %d %s", code, stderr)
	}
	pool := pgtest.PoolFor(t, db)
	if _, err := pool.Exec(context.Background(), `INSERT INTO w VALUES (now() - interval '3 days', 1), (now() - interval '3 days', 2)`); err != nil {
		t.Fatalf("INSERT into a day without a partition: %v", err)
	}
	show := func() (tableJSON, string) {
		t.Helper()
		out, stderr, code := run(t, env, "table", "show", "w", "--json")
		if code != 0 {
			t.Fatalf("show: %d %s", code, stderr)
		}
		var j tableJSON
		if err := json.Unmarshal([]byte(out), &j); err != nil {
			t.Fatalf("show --json: %v\n%s", err, out)
		}
		text, _, _ := run(t, env, "table", "show", "w")
		return j, text
	}
	j, text := show()
	if j.Waiting != 2 || j.PartitionCount != 2 || !strings.Contains(text, "waiting:      2 rows in w_default") || strings.Contains(text, "w_default\t") {
		t.Fatalf("before maintain: waiting %d, %d partitions, show:\n%s", j.Waiting, j.PartitionCount, text)
	}
	if out, _, _ := run(t, env, "table", "list"); !strings.Contains(out, "public.w: 2 rows wait") {
		t.Fatalf("list does not say rows wait:\n%s", out)
	}
	if _, stderr, code := run(t, env, "maintain"); code != 0 || !strings.Contains(stderr, "moved_rows=2") {
		t.Fatalf("maintain: %d %q", code, stderr)
	}
	if j, text = show(); j.Waiting != 0 || j.PartitionCount != 3 {
		t.Fatalf("after maintain: waiting %d, %d partitions, show:\n%s", j.Waiting, j.PartitionCount, text)
	}
}
