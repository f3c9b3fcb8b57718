package partition

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/pgts/pgts/internal/pgtest"
)

// TestStaleEntries drops or replaces series tables with plain SQL and
// checks that pgts notices, says so once, removes the entry, and then
// treats the name as what it now is.
func TestStaleEntries(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	var logs bytes.Buffer
	m := NewManager(pool, slog.New(slog.NewTextHandler(&logs, nil)), fixedClock(clock0))
	for _, name := range []string{"gone", "plain", "listed", "keyed"} {
		if _, err := m.Create(ctx, spec(name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{
		`DROP TABLE gone`,
		`DROP TABLE plain`, `CREATE TABLE plain (time timestamptz, device int, value float8)`,
		`DROP TABLE listed`, `CREATE TABLE listed (time timestamptz, device int, value float8) PARTITION BY LIST (device)`,
		`DROP TABLE keyed`, `CREATE TABLE keyed (time timestamptz, device int, value float8) PARTITION BY RANGE (device)`,
	} {
		if _, err := pool.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}

	// Table: a dropped table does not exist, a plain table is not a
	// series table; each is said once, with the removal of its entry.
	_, err := m.Table(ctx, "gone")
	var nf *TableNotFoundError
	if !errors.As(err, &nf) || nf.Stale == nil || !nf.Stale.Removed || !strings.Contains(err.Error(), "dropped outside pgts") {
		t.Fatalf("Table(gone) = %v, want a TableNotFoundError naming the stale entry", err)
	}
	if _, err := m.Table(ctx, "gone"); !errors.As(err, &nf) || nf.Stale != nil {
		t.Fatalf("Table(gone) again = %v, want a plain TableNotFoundError (the entry is gone)", err)
	}
	_, err = m.Table(ctx, "plain")
	var nst *NotSeriesTableError
	if !errors.As(err, &nst) || nst.Stale == nil || !nst.Stale.Removed || !strings.Contains(err.Error(), "not a partitioned table") {
		t.Fatalf("Table(plain) = %v, want a stale NotSeriesTableError", err)
	}
	if _, err := m.Table(ctx, "plain"); !errors.As(err, &nst) || nst.Stale != nil {
		t.Fatalf("Table(plain) again = %v, want a plain NotSeriesTableError (the entry is gone)", err)
	}

	// CheckedTables: the other two are reported, once, and removed.
	tables, stale, err := m.CheckedTables(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) != 0 || len(stale) != 2 || stale[0].Name != "keyed" || stale[1].Name != "listed" ||
		!strings.Contains(stale[0].Reason, `time column "time"`) || !strings.Contains(stale[1].Reason, "not partitioned by range") {
		t.Fatalf("CheckedTables = %v, %+v", tables, stale)
	}
	if _, stale, err = m.CheckedTables(ctx); err != nil || len(stale) != 0 {
		t.Fatalf("CheckedTables again: %+v, %v", stale, err)
	}
	if n := strings.Count(logs.String(), "removed a stale entry"); n != 4 {
		t.Fatalf("%d removal warnings, want 4:\n%s", n, logs.String())
	}

	// Create replaces a stale entry: the name is free again.
	if _, err := m.Create(ctx, spec("gone")); err != nil {
		t.Fatalf("create over a stale entry: %v", err)
	}
	if _, err := pool.Exec(ctx, `DROP TABLE gone`); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Create(ctx, spec("gone")); err != nil {
		t.Fatalf("create over a stale entry (not read first): %v", err)
	}
	if _, err := m.Table(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
}
