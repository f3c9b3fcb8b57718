package cli

import (
	"context"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/pgts/pgts/internal/pgtest"
)

// TestShardCommands: shard add/list/remove, table create --shard-by, a
// resumable load straight into the shards, and maintain on every shard,
// through the command line; no password is ever printed.
func TestShardCommands(t *testing.T) {
	ctx := context.Background()
	coord := pgtest.DB(t)
	urls := pgtest.Servers(t, 2)
	pw := func(u string) string {
		p, _ := url.Parse(u)
		s, _ := p.User.Password()
		return s
	}
	noPassword := func(what, out string) {
		t.Helper()
		for _, u := range urls {
			if strings.Contains(out, pw(u)) {
				t.Fatalf("%s shows a password:\n%s", what, out)
			}
		}
	}
	for i, name := range []string{"a", "b"} {
		out, errOut, code := run(t, nil, "shard", "add", name, urls[i], "--db", coord)
		if code != 0 {
			t.Fatalf("shard add: %d\n%s%s", code, out, errOut)
		}
		noPassword("shard add", out+errOut)
	}
	out, errOut, code := run(t, nil, "shard", "list", "--db", coord)
	if code != 0 || !strings.Contains(out, "pgts_shard_a") || !strings.Contains(out, "pgts_shard_b") {
		t.Fatalf("shard list: %d\n%s%s", code, out, errOut)
	}
	noPassword("shard list", out+errOut)

	start := time.Now().UTC().Add(-3 * time.Hour).Format("2006-01-02 15:04:05")
	_, errOut, code = run(t, nil, "table", "create", "cond", "--db", coord,
		"--columns", "time timestamptz not null, device integer not null, data1 float8, data2 float8",
		"--interval", "1 hour", "--premake", "2", "--shard-by", "device", "--shards", "4")
	if code != 0 {
		t.Fatalf("table create --shard-by: %d\n%s", code, errOut)
	}
	out, errOut, code = run(t, nil, "load", "cond", "--db", coord, "--generate", "conditions", "--rows", "30000",
		"--devices", "20", "--width", "2", "--start", start, "--load-id", "l1", "--workers", "1", "--batch-size", "1000")
	if code != 0 || !strings.Contains(errOut, "loaded 30,000 rows") || !strings.Contains(errOut, "2 shards") {
		t.Fatalf("load: %d\n%s%s", code, out, errOut)
	}
	noPassword("load", out+errOut)
	// the same load again: everything already loaded
	_, errOut, code = run(t, nil, "load", "cond", "--db", coord, "--generate", "conditions", "--rows", "30000",
		"--devices", "20", "--width", "2", "--start", start, "--load-id", "l1", "--workers", "1", "--batch-size", "1000")
	if code != 0 || !strings.Contains(errOut, "already loaded 30,000") {
		t.Fatalf("load again: %d\n%s", code, errOut)
	}
	pool := pgtest.PoolFor(t, coord)
	var n int64
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM cond`).Scan(&n); err != nil || n != 30000 {
		t.Fatalf("count %d, %v", n, err)
	}
	if _, errOut, code = run(t, nil, "maintain", "--db", coord); code != 0 || !strings.Contains(errOut, "maintained shard") {
		t.Fatalf("maintain: %d\n%s", code, errOut)
	}
	if _, errOut, code = run(t, nil, "shard", "remove", "a", "--db", coord); code == 0 || !strings.Contains(errOut, "holds partitions") {
		t.Fatalf("removing a shard in use: %d\n%s", code, errOut)
	}
	// partition 1 (on b) to a, then again: nothing to do
	if out, errOut, code = run(t, nil, "shard", "move", "cond", "1", "a", "--db", coord); code != 0 || !strings.Contains(out, "moved partition 1 of public.cond from shard b to a") {
		t.Fatalf("shard move: %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code = run(t, nil, "shard", "move", "cond", "1", "a", "--db", coord); code != 0 || !strings.Contains(out, "already on shard a") {
		t.Fatalf("shard move again: %d\n%s%s", code, out, errOut)
	}
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM cond`).Scan(&n); err != nil || n != 30000 {
		t.Fatalf("count after the move %d, %v", n, err)
	}
	// table list and show know the sharded table and where its
	// partitions are (partition 1 now on a)
	var place string
	if err := pool.QueryRow(ctx, `SELECT string_agg(shard || ' ' || partition, ',' ORDER BY shard, partition) FROM pgts.shard_placement`).Scan(&place); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = run(t, nil, "table", "list", "--db", coord)
	if code != 0 || !strings.Contains(out, "SHARDED TABLE") || !regexp.MustCompile(`public\.cond\s+device\s+time\s+1 hour\s+-\s+a 0-2, b 3\s+ready`).MatchString(out) {
		t.Fatalf("table list: %d (placement %s)\n%s%s", code, place, out, errOut)
	}
	out, errOut, code = run(t, nil, "table", "show", "cond", "--db", coord)
	if code != 0 || !strings.Contains(out, "shard key:    device, 4 hash partitions") || !strings.Contains(out, "placement:    a 0-2, b 3") {
		t.Fatalf("table show: %d\n%s%s", code, out, errOut)
	}
	out, _, code = run(t, nil, "table", "show", "cond", "--json", "--db", coord)
	if code != 0 || !strings.Contains(out, `"shard_by": "device"`) && !strings.Contains(out, `"shard_by":"device"`) {
		t.Fatalf("table show --json: %d\n%s", code, out)
	}
	// table drop: refused without --yes, then everywhere; then the shards
	// hold nothing and can be removed
	if _, errOut, code = run(t, nil, "table", "drop", "cond", "--db", coord); code != 2 || !strings.Contains(errOut, "every shard") {
		t.Fatalf("table drop without --yes: %d\n%s", code, errOut)
	}
	if _, errOut, code = run(t, nil, "table", "drop", "cond", "--yes", "--db", coord); code != 0 || !strings.Contains(errOut, "dropped sharded table") {
		t.Fatalf("table drop: %d\n%s", code, errOut)
	}
	for _, name := range []string{"a", "b"} {
		if _, errOut, code = run(t, nil, "shard", "remove", name, "--db", coord); code != 0 {
			t.Fatalf("removing shard %s after the drop: %d\n%s", name, code, errOut)
		}
	}
}
