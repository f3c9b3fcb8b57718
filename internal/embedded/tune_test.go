package embedded

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestTune(t *testing.T) {
	got := map[string]string{}
	for _, s := range Tune(Machine{MemoryBytes: 24 * gib, CPUs: 2}) {
		got[s.Name] = s.Value
	}
	want := map[string]string{
		"shared_buffers":           "6GB",
		"effective_cache_size":     "18GB",
		"maintenance_work_mem":     "1536MB",
		"wal_buffers":              "16MB",
		"max_wal_size":             "8GB",
		"max_worker_processes":     "10",
		"max_parallel_workers":     "2",
		"shared_preload_libraries": "plpgsql",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	small := map[string]string{}
	for _, s := range Tune(Machine{MemoryBytes: 1 * gib, CPUs: 1}) {
		small[s.Name] = s.Value
	}
	if small["shared_buffers"] != "256MB" || small["max_wal_size"] != "2GB" || small["max_parallel_workers_per_gather"] != "1" {
		t.Errorf("1GB machine: %v", small)
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"16GB": 16 * gib, "512MB": 512 * mib, "2048kB": 2 * mib, "100": 100, " 1 tb": 1024 * gib} {
		got, err := ParseSize(in)
		if err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "GB", "12XB", "-1GB", "99999999999999999999"} {
		if _, err := ParseSize(bad); err == nil {
			t.Errorf("ParseSize(%q) accepted", bad)
		}
	}
}

func TestMemTotal(t *testing.T) {
	got, err := memTotal(strings.NewReader("MemFree: 1 kB\nMemTotal:       24607040 kB\n"))
	if err != nil || got != 24607040*1024 {
		t.Fatalf("memTotal = %d, %v", got, err)
	}
}

// TestTuneBoundsWALByDisk: max_wal_size never takes more than an eighth
// of the free disk, and says why.
func TestTuneBoundsWALByDisk(t *testing.T) {
	for _, c := range []struct {
		free int64
		want string
	}{{0, "8GB"}, {1024 * gib, "8GB"}, {10 * gib, "1280MB"}, {1 * gib, "128MB"}, {100 * mib, "64MB"}} {
		var maxWal, minWal Setting
		for _, s := range Tune(Machine{MemoryBytes: 24 * gib, CPUs: 2, DiskFreeBytes: c.free}) {
			switch s.Name {
			case "max_wal_size":
				maxWal = s
			case "min_wal_size":
				minWal = s
			}
		}
		if maxWal.Value != c.want {
			t.Errorf("free %d: max_wal_size = %s, want %s", c.free, maxWal.Value, c.want)
		}
		if c.free > 0 && c.free < 64*gib && !strings.Contains(maxWal.Why, "free disk") {
			t.Errorf("free %d: max_wal_size's reason %q does not mention the disk", c.free, maxWal.Why)
		}
		if mw, _ := ParseSize(minWal.Value); mw < 32*mib {
			t.Errorf("free %d: min_wal_size = %s, below 2 segments", c.free, minWal.Value)
		}
	}
}

// TestMinimalWALProfile starts a cluster with the bulk-load profile: the
// server accepts it (it refuses wal_level = minimal beside WAL senders or
// archiving), and a table made and filled in one transaction — what pgts
// load --bulk does with a partition of one unit — writes almost no WAL
// for its rows, where the same rows into an existing table write it all.
func TestMinimalWALProfile(t *testing.T) {
	settings := append([]Setting{{"fsync", "off", "test"}, {"shared_buffers", "32MB", "test"}}, MinimalWAL()...)
	c := newTestCluster(t, Config{Settings: settings})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	info, err := c.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, info.ConnString("postgres"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var level string
	if err := conn.QueryRow(ctx, "SHOW wal_level").Scan(&level); err != nil || level != "minimal" {
		t.Fatalf("wal_level = %q, %v", level, err)
	}
	wal := func(sql string) int64 {
		var n int64
		var start string
		if err := conn.QueryRow(ctx, "SELECT pg_current_wal_insert_lsn()::text").Scan(&start); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, sql, pgx.QueryExecModeSimpleProtocol); err != nil {
			t.Fatal(err)
		}
		if err := conn.QueryRow(ctx, "SELECT pg_current_wal_insert_lsn() - $1::pg_lsn", start).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	const rows = "INSERT INTO %s SELECT g, g FROM generate_series(1, 200000) g"
	if _, err := conn.Exec(ctx, "CREATE TABLE old (a int, b int)"); err != nil {
		t.Fatal(err)
	}
	logged := wal(strings.Replace(rows, "%s", "old", 1))
	skipped := wal("BEGIN; CREATE TABLE fresh (a int, b int); " + strings.Replace(rows, "%s", "fresh", 1) + "; COMMIT")
	if logged < 5<<20 || skipped > logged/20 {
		t.Fatalf("WAL for 200,000 rows: %d bytes into an existing table, %d into one made in the same transaction", logged, skipped)
	}
}
