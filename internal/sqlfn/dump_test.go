package sqlfn_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/pgts/pgts/internal/catalog"
	"github.com/pgts/pgts/internal/pgtest"
	"github.com/pgts/pgts/internal/sqlfn"
)

// TestDumpRestore: a database with the helpers, dumped with plain pg_dump
// and restored with psql, answers the same queries the same way (no
// extension to install first; function bodies that call each other
// restore in any order).
func TestDumpRestore(t *testing.T) {
	ctx := context.Background()
	src := pgtest.DB(t)
	pool := pgtest.PoolFor(t, src)
	if err := catalog.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `CREATE TABLE r AS SELECT timestamptz '2024-03-30 20:00+00' + i * interval '7 minutes' AS time, i % 5 AS device, (i % 13)::float8 AS v
		FROM generate_series(1, 2000) AS i`); err != nil {
		t.Fatal(err)
	}
	bindir := pgBinDir(t)
	dump := filepath.Join(t.TempDir(), "dump.sql")
	if out, err := exec.Command(filepath.Join(bindir, "pg_dump"), "--dbname", src, "--file", dump).CombinedOutput(); err != nil {
		t.Fatalf("pg_dump: %v\n%s", err, out)
	}
	dst := pgtest.DB(t)
	if out, err := exec.Command(filepath.Join(bindir, "psql"), "--dbname", dst, "-v", "ON_ERROR_STOP=1", "-q", "-f", dump).CombinedOutput(); err != nil {
		t.Fatalf("restore: %v\n%s", err, out)
	}
	restored := pgtest.PoolFor(t, dst)
	// The restored helpers keep their version: pgts leaves them as they are.
	var v int
	if err := restored.QueryRow(ctx, `SELECT pgts.sqlfn_version()`).Scan(&v); err != nil || v != sqlfn.Version {
		t.Fatalf("restored pgts.sqlfn_version(): %d, %v; want %d", v, err, sqlfn.Version)
	}
	if err := catalog.Migrate(ctx, restored); err != nil {
		t.Fatalf("migrate after restore: %v", err)
	}
	for _, q := range []string{
		`SELECT pgts.time_bucket('1 day', time, 'Europe/Berlin') AS b, device, count(*), pgts.first(v, time), pgts.last(v, time)
			FROM r GROUP BY 1, 2 ORDER BY 1, 2`,
		`SELECT pgts.time_bucket('1 month', time), pgts.time_bucket(300::bigint, extract(epoch FROM time)::bigint), count(*) FROM r GROUP BY 1, 2 ORDER BY 1, 2`,
		`SELECT b.bucket, a.v, pgts.locf(a.v) OVER w, pgts.interpolate(a.v, b.bucket, pgts.known(a.v, b.bucket) OVER w, pgts.known(a.v, b.bucket) OVER (ORDER BY b.bucket DESC))
			FROM pgts.buckets('1 hour', '2024-03-30 18:00+00', '2024-04-01') AS b(bucket)
			LEFT JOIN (SELECT pgts.time_bucket('1 hour', time) AS bucket, avg(v) AS v FROM r WHERE device = 2 AND v > 6 GROUP BY 1) AS a USING (bucket)
			WINDOW w AS (ORDER BY b.bucket) ORDER BY 1`,
	} {
		want, got := pgtest.Rows(t, pool, q), pgtest.Rows(t, restored, q)
		if len(want) == 0 || len(got) != len(want) {
			t.Fatalf("%s: %d rows restored, %d before", q, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: row %d restored %q, before %q", q, i, got[i], want[i])
			}
		}
	}
}

func pgBinDir(t *testing.T) string {
	t.Helper()
	if c := pgtest.Cluster(t); c != nil {
		return c.BinDir()
	}
	p, err := exec.LookPath("pg_dump")
	if err != nil {
		t.Fatal("pg_dump not found")
	}
	return filepath.Dir(p)
}
