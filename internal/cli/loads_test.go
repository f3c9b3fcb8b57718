package cli

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pgts/pgts/internal/copyload"
	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pgtest"
	"github.com/pgts/pgts/internal/records"
)

// TestPendingBulkShownAndAbandoned: a partition an interrupted bulk load
// left unattached is shown by table show and table list with its load ID
// and the fix, listed by loads list; a load without --bulk into its range
// is refused naming the load (not "relation already exists"); loads
// abandon drops it and the ledger, and the range loads again.
func TestPendingBulkShownAndAbandoned(t *testing.T) {
	env, db := loadTable(t)
	ctx := context.Background()
	day := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -10)
	input := textRows(day, 0, 600)

	pool := pgtest.PoolFor(t, db)
	m := partition.NewManager(pool, nil, time.Now)
	target, err := copyload.LookupTarget(ctx, pool, m, "m")
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cfg := copyload.DefaultConfig()
	cfg.Workers, cfg.BatchRows, cfg.Bulk, cfg.BulkUnitRows, cfg.LoadID = 1, 100, true, 200, "P1"
	var n atomic.Int64
	cfg.OnBatch = func(copyload.BatchInfo) {
		if n.Add(1) == 3 {
			cancel()
		}
	}
	o := records.DefaultOptions(records.Text)
	rd, err := records.NewReader(strings.NewReader(input), o)
	if err != nil {
		t.Fatal(err)
	}
	l, err := copyload.New(pool, m, target, cfg)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := l.Run(cctx, &copyload.FileSource{Inputs: []copyload.Input{{Name: "in", Reader: rd}}, Columns: []int{0, 1, 2}})
	if !errors.Is(err, context.Canceled) || len(sum.Pending) != 1 {
		t.Fatalf("interrupted bulk load: %+v, %v", sum, err)
	}

	out, stderr, code := run(t, env, "table", "show", "m")
	if code != 0 || !strings.Contains(out, "pending bulk partitions") || !strings.Contains(out, "P1") || !strings.Contains(out, "pgts loads abandon P1") {
		t.Fatalf("table show: exit %d\n%s%s", code, out, stderr)
	}
	if out, stderr, code = run(t, env, "table", "list"); code != 0 || !strings.Contains(out, `interrupted bulk load "P1"`) {
		t.Fatalf("table list: exit %d\n%s%s", code, out, stderr)
	}
	if out, stderr, code = run(t, env, "loads", "list"); code != 0 || !strings.Contains(out, "P1") || !strings.Contains(out, "interrupted") {
		t.Fatalf("loads list: exit %d\n%s%s", code, out, stderr)
	}
	in := filepath.Join(t.TempDir(), "in.tsv")
	if err := os.WriteFile(in, []byte(input), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code = run(t, env, "load", "m", in, "--format", "text"); code != 1 || !strings.Contains(stderr, `held by the interrupted bulk load "P1"`) || strings.Contains(stderr, "42P07") {
		t.Fatalf("a live load into the pending range: exit %d\n%s", code, stderr)
	}
	if out, stderr, code = run(t, env, "loads", "abandon", "P1"); code != 0 || !strings.Contains(out, "1 unattached partition dropped") {
		t.Fatalf("loads abandon: exit %d\n%s%s", code, out, stderr)
	}
	if out, _, _ = run(t, env, "table", "show", "m"); strings.Contains(out, "pending") {
		t.Fatalf("table show after abandon:\n%s", out)
	}
	if _, stderr, code = run(t, env, "loads", "abandon", "P1"); code != 2 || !strings.Contains(stderr, "no such load") {
		t.Fatalf("abandoning it again: exit %d\n%s", code, stderr)
	}
	if _, stderr, code = run(t, env, "load", "m", in, "--format", "text"); code != 0 {
		t.Fatalf("the live load after abandon: exit %d\n%s", code, stderr)
	}
	if rows, _ := countM(t, db); rows != 600+sum.Loaded-sum.Pending[0].Rows {
		t.Fatalf("%d rows; want the 600 rows and the %d the bulk load attached", rows, sum.Loaded-sum.Pending[0].Rows)
	}
}

// TestLoadOnConflict: --on-conflict is checked, and a reload with skip
// and with update says what became of each row.
func TestLoadOnConflict(t *testing.T) {
	db := pgtest.DB(t)
	env := map[string]string{"DATABASE_URL": db}
	if _, stderr, code := run(t, env, "table", "create", "m", "--columns", "time timestamptz not null, device int not null, v float8, primary key (time, device)",
		"--interval", "1 day", "--accept-past", "30 days"); code != 0 {
		t.Fatalf("create: %d %s", code, stderr)
	}
	day := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, -3)
	in := filepath.Join(t.TempDir(), "in.tsv")
	if err := os.WriteFile(in, []byte(textRows(day, 0, 100)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := run(t, env, "load", "m", in, "--format", "text", "--on-conflict", "replace"); code != 2 || !strings.Contains(stderr, "choose reject, skip or update") {
		t.Fatalf("--on-conflict replace: exit %d\n%s", code, stderr)
	}
	if _, stderr, code := run(t, env, "load", "m", in, "--format", "text"); code != 0 {
		t.Fatalf("first load: exit %d\n%s", code, stderr)
	}
	if err := os.WriteFile(in, []byte(textRows(day, 50, 100)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := run(t, env, "load", "m", in, "--format", "text", "--on-conflict", "skip"); code != 0 ||
		!strings.Contains(stderr, "on conflict skip: loaded 100 = inserted 50 + updated 0 + stored rows kept 50") {
		t.Fatalf("skip: exit %d\n%s", code, stderr)
	}
	if _, stderr, code := run(t, env, "load", "m", in, "--format", "text", "--on-conflict", "update"); code != 0 ||
		!strings.Contains(stderr, "on conflict update: loaded 100 = inserted 0 + updated 100 + stored rows kept 0") {
		t.Fatalf("update: exit %d\n%s", code, stderr)
	}
	if rows, distinct := countM(t, db); rows != 150 || distinct != 150 {
		t.Fatalf("%d rows, %d distinct; want 150", rows, distinct)
	}
}
