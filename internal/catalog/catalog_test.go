package catalog

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/pgts/pgts/internal/pgtest"
	"github.com/pgts/pgts/internal/sqlfn"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestMigrateIdempotentAndConcurrent(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = Migrate(ctx, pool)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("migrate %d: %v", i, err)
		}
	}
	if err := Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	var versions, rows int
	if err := pool.QueryRow(ctx, `SELECT count(*), max(version) FROM pgts.schema_version`).Scan(&rows, &versions); err != nil {
		t.Fatal(err)
	}
	if rows != Version() || versions != Version() {
		t.Fatalf("schema_version has %d rows, max %d; want %d", rows, versions, Version())
	}
}

func TestNewerCatalogRefused(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	if err := Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `INSERT INTO pgts.schema_version (version) VALUES ($1)`, Version()+5); err != nil {
		t.Fatal(err)
	}
	if err := Migrate(ctx, pool); err == nil {
		t.Fatal("a newer catalog was accepted")
	}
}

// TestLoadDigestMigration: migration 3 adds the ledger's digest and the
// run's pid and host, and applies again cleanly over itself.
func TestLoadDigestMigration(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	if err := Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `DELETE FROM pgts.schema_version WHERE version = 3`); err != nil {
		t.Fatal(err)
	}
	if err := Migrate(ctx, pool); err != nil {
		t.Fatalf("migration 3 over itself: %v", err)
	}
	var n int
	err := pool.QueryRow(ctx, `SELECT count(*) FROM information_schema.columns WHERE table_schema = 'pgts'
		AND (table_name, column_name) IN (('load_batch', 'digest'), ('load_batch', 'first_line'), ('load_batch', 'last_line'),
			('load', 'run_pid'), ('load', 'run_host'), ('load', 'run_started_at'))`).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	if n != 6 {
		t.Fatalf("%d of the 6 columns of migration 3", n)
	}
}

// TestShardMigration: the scale-out migration applies again over itself
// (it is written to apply whatever migrations precede it).
func TestShardMigration(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	if err := Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `DELETE FROM pgts.schema_version WHERE version = 4`); err != nil {
		t.Fatal(err)
	}
	if err := Migrate(ctx, pool); err != nil {
		t.Fatalf("the scale-out migration over itself: %v", err)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE schemaname = 'pgts'
		AND tablename IN ('shard', 'sharded_table', 'shard_placement', 'shard_member')`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 4 {
		t.Fatalf("%d of the 4 tables of the scale-out migration", n)
	}
}

// TestHelpersReinstalledWhenOutdated: a database whose catalog is at the
// current version but whose SQL helpers are older (installed by an
// earlier pgts: no version, or a lower one, and an outdated body) gets the
// helpers of this build at the next Migrate; one with newer helpers keeps
// them.
func TestHelpersReinstalledWhenOutdated(t *testing.T) {
	ctx := context.Background()
	fresh := pgtest.Pool(t)
	if err := Migrate(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	const defs = `SELECT p.oid::regprocedure::text || ' ' || pg_get_functiondef(p.oid) FROM pg_proc p
		WHERE p.pronamespace = 'pgts'::regnamespace AND p.prokind IN ('f', 'p') ORDER BY 1`
	want := pgtest.Rows(t, fresh, defs)
	const stale = `CREATE OR REPLACE FUNCTION pgts.time_bucket(bucket_width interval, ts timestamptz) RETURNS timestamptz
		LANGUAGE sql IMMUTABLE AS 'SELECT ts'`
	for _, c := range []struct {
		name  string
		setup string
	}{
		{"no version (catalog migration 7 only)", `DROP FUNCTION pgts.sqlfn_version()`},
		{"older version", `CREATE OR REPLACE FUNCTION pgts.sqlfn_version() RETURNS integer LANGUAGE sql IMMUTABLE AS 'SELECT 0'`},
	} {
		t.Run(c.name, func(t *testing.T) {
			pool := pgtest.Pool(t)
			if err := Migrate(ctx, pool); err != nil {
				t.Fatal(err)
			}
			if _, err := pool.Exec(ctx, stale+";"+c.setup); err != nil {
				t.Fatal(err)
			}
			if err := Migrate(ctx, pool); err != nil {
				t.Fatal(err)
			}
			var b string
			if err := pool.QueryRow(ctx, `SELECT pgts.time_bucket('1 hour', timestamptz '2024-03-13 10:17+00')::text`).Scan(&b); err != nil {
				t.Fatal(err)
			}
			if b != "2024-03-13 10:00:00+00" {
				t.Errorf("time_bucket after Migrate: %s, want the new helpers' 2024-03-13 10:00:00+00", b)
			}
			got := pgtest.Rows(t, pool, defs)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("the helpers after Migrate differ from a fresh database's:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
	t.Run("newer version kept", func(t *testing.T) {
		pool := pgtest.Pool(t)
		if err := Migrate(ctx, pool); err != nil {
			t.Fatal(err)
		}
		newer := fmt.Sprintf(`CREATE OR REPLACE FUNCTION pgts.sqlfn_version() RETURNS integer LANGUAGE sql IMMUTABLE AS 'SELECT %d'`, sqlfn.Version+1)
		if _, err := pool.Exec(ctx, stale+";"+newer); err != nil {
			t.Fatal(err)
		}
		if err := Migrate(ctx, pool); err != nil {
			t.Fatal(err)
		}
		var b string
		if err := pool.QueryRow(ctx, `SELECT pgts.time_bucket('1 hour', timestamptz '2024-03-13 10:17+00')::text`).Scan(&b); err != nil {
			t.Fatal(err)
		}
		if b != "2024-03-13 10:17:00+00" {
			t.Errorf("a newer pgts' helpers were replaced by this build's (time_bucket gave %s)", b)
		}
	})
}
