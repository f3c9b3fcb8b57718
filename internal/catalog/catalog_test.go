package catalog

import (
	"context"
	"sync"
	"testing"

	"github.com/pgts/pgts/internal/pgtest"
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
