package bench

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pgts/pgts/internal/embedded"
	"github.com/pgts/pgts/internal/pgtest"
)

func TestRunLoadSmall(t *testing.T) {
	bins, err := embedded.DefaultFinder("").Find()
	if err != nil {
		t.Fatalf("PostgreSQL binaries: %v", err)
	}
	var logs bytes.Buffer
	s := LoadScenario{Stores: []string{"plain", "pgts", "timescaledb"}, Loaders: []string{"psql-pipe", "pgts-binary", "pgts-file", "insert"},
		Workers: []int{2}, Width: 5, Batches: 2, Index: "time", Repeat: 1, ConnString: pgtest.DB(t), Psql: bins.Psql(),
		Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	runs, err := RunLoad(context.Background(), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 8 {
		t.Fatalf("%d runs, want 8 (timescaledb skipped): %+v", len(runs), runs)
	}
	if !strings.Contains(logs.String(), "skipping store timescaledb") || !strings.Contains(logs.String(), "install TimescaleDB") {
		t.Errorf("no skip logged, or without how to get TimescaleDB: %s", logs.String())
	}
	for _, r := range runs {
		if r.Error != "" || !r.Verified || r.Rows != 20000 || r.RowsPerSec <= 0 || r.TableBytes <= 0 || r.IndexBytes <= 0 {
			t.Errorf("%s/%s: %+v", r.Store, r.Loader, r)
		}
		if r.Loader != "pgts-binary" && len(r.Batches) == 0 {
			t.Errorf("%s/%s: no per-batch timings", r.Store, r.Loader)
		}
	}
	only := s
	only.Stores = []string{"timescaledb"}
	if _, err := RunLoad(context.Background(), only, nil); err == nil || !strings.Contains(err.Error(), "timescaledb") {
		t.Errorf("only timescaledb, absent: err = %v", err)
	}
	// Every chunk interval is a store of its own; all are skipped in one line.
	logs.Reset()
	only.TimescaleChunks = []time.Duration{0, time.Hour}
	if _, err := RunLoad(context.Background(), only, nil); err == nil || !strings.Contains(err.Error(), "install TimescaleDB") {
		t.Errorf("only timescaledb with chunks, absent: err = %v", err)
	}
	if n := strings.Count(logs.String(), "skipping store"); n != 1 || !strings.Contains(logs.String(), "timescaledb, timescaledb-1h") {
		t.Errorf("%d skip lines, want one naming both stores: %s", n, logs.String())
	}
}

func TestDescribeMachine(t *testing.T) {
	m := DescribeMachine(context.Background(), pgtest.Pool(t))
	if m.Cores < 1 || m.MemoryBytes <= 0 || m.Kernel == "" || m.GoVersion == "" || !strings.HasPrefix(m.PostgreSQL, "PostgreSQL ") {
		t.Errorf("machine: %+v", m)
	}
	for _, k := range ServerSettings {
		if m.Settings[k] == "" {
			t.Errorf("setting %s missing: %v", k, m.Settings)
		}
	}
	if len(m.Warnings) > 0 {
		t.Errorf("warnings: %v", m.Warnings)
	}
}

// TestMemoryLimit puts a child process (standing in for a postmaster)
// under a limit and takes it out again.
func TestMemoryLimit(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	lim, err := NewMemoryLimit(256<<20, cmd.Process.Pid)
	if err != nil {
		if _, merr := memoryCgroupMount(); merr != nil {
			t.Skipf("no memory cgroup on this machine: %v (NewMemoryLimit: %v)", merr, err)
		}
		if os.Geteuid() != 0 {
			// A normal user may not make cgroups here: the refusal must say
			// so and what to do.
			if msg := err.Error(); !strings.Contains(msg, "not writable") || !strings.Contains(msg, "run as root") {
				t.Fatalf("refusal as a normal user: %v", err)
			}
			return
		}
		t.Fatalf("NewMemoryLimit: %v", err)
	}
	procs, err := os.ReadFile(filepath.Join(lim.Dir, "cgroup.procs"))
	if err != nil || !slices.Contains(strings.Fields(string(procs)), strconv.Itoa(cmd.Process.Pid)) {
		t.Errorf("cgroup.procs = %q, %v; want pid %d", procs, err, cmd.Process.Pid)
	}
	file := "memory.limit_in_bytes"
	if lim.Version == 2 {
		file = "memory.max"
	}
	if b, err := os.ReadFile(filepath.Join(lim.Dir, file)); err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(256<<20) {
		t.Errorf("%s = %q, %v", file, b, err)
	}
	if err := lim.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(lim.Dir); !os.IsNotExist(err) {
		t.Errorf("cgroup %s left behind: %v", lim.Dir, err)
	}
	if _, err := NewMemoryLimit(1<<20, cmd.Process.Pid); err == nil {
		t.Error("a 1 MiB limit was accepted")
	}
}

// TestBulkAndServerCopy runs the pgts-bulk and server-copy loaders on a
// plain table, weekly partitions and a pgts series table: every run
// stores its rows; server-copy times each file, and pgts-bulk reports its
// index builds and attaches where it bulk-loads (the series table only).
func TestBulkAndServerCopy(t *testing.T) {
	s := LoadScenario{Stores: []string{"plain", "weekly", "pgts"}, Loaders: []string{"pgts-bulk", "server-copy"},
		Workers: []int{2}, Width: 3, Batches: 3, Index: "both", Repeat: 1, ConnString: pgtest.DB(t)}
	runs, err := RunLoad(context.Background(), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 6 {
		t.Fatalf("%d runs, want 6: %+v", len(runs), runs)
	}
	for _, r := range runs {
		if r.Error != "" || !r.Verified || r.Rows != 30000 || r.IndexBytes <= 0 {
			t.Errorf("%s/%s: %+v", r.Store, r.Loader, r)
		}
		switch {
		case r.Loader == "server-copy":
			var rows int64
			for _, b := range r.Batches {
				rows += b.Rows
			}
			if len(r.Batches) != 2 || rows != 30000 || r.ClientCPU > r.ServerCPU {
				t.Errorf("%s/server-copy: %d files, %d rows, client CPU %.2fs, server %.2fs", r.Store, len(r.Batches), rows, r.ClientCPU, r.ServerCPU)
			}
		case r.Store == "pgts":
			if r.Phases["bulk_partitions"] != 1 || r.Phases["index_build"] <= 0 {
				t.Errorf("pgts/pgts-bulk: phases %v", r.Phases)
			}
		default:
			if r.Phases != nil {
				t.Errorf("%s/pgts-bulk: bulk phases %v on a table the bulk path does not serve", r.Store, r.Phases)
			}
		}
	}
}

// TestServerCopyFollowsPgtsInterval: server-copy writes its files for the
// pgts store's partitions at the length asked (--pgts-interval), so the
// ceiling is measured on the layout the pgts loaders fill.
func TestServerCopyFollowsPgtsInterval(t *testing.T) {
	s := LoadScenario{Stores: []string{"pgts"}, Loaders: []string{"server-copy"}, Interval: time.Minute,
		Workers: []int{2}, Width: 3, Batches: 3, Index: "time", Repeat: 1, ConnString: pgtest.DB(t)}
	runs, err := RunLoad(context.Background(), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Error != "" || !runs[0].Verified || runs[0].Rows != 30000 {
		t.Fatalf("runs: %+v", runs)
	}
	// A batch is 60 s of simulated time: each minute's leaf is its own
	// file, where weekly leaves would have made two.
	if n := len(runs[0].Batches); n < 3 {
		t.Errorf("%d files, want one per 1-minute partition (at least 3)", n)
	}
}

// TestServerCopyRefusesUnreadableFiles: files the server cannot read (here
// a directory private to root, as files on another machine would be
// missing) are refused up front, saying what the loader needs.
func TestServerCopyRefusesUnreadableFiles(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to make a directory the server's user cannot enter")
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	err := checkServerSeesFiles(context.Background(), pgtest.Pool(t), dir)
	if !errors.Is(err, ErrServerElsewhere) || !strings.Contains(err.Error(), "on this machine") {
		t.Fatalf("err = %v", err)
	}
}

// TestFileLoaderSameRows: the pgts-file loader stores the rows the
// generator loaders store, value for value (the CSV it writes is read
// back in the same time zone, floats exactly).
func TestFileLoaderSameRows(t *testing.T) {
	ctx := context.Background()
	cs := pgtest.DB(t)
	pool := pgtest.PoolFor(t, cs)
	fingerprint := func(loader string) string {
		s := LoadScenario{Stores: []string{"pgts"}, Loaders: []string{loader}, Workers: []int{2}, Width: 5, Batches: 3,
			Index: "time", Repeat: 1, ConnString: cs, Logger: slog.New(slog.DiscardHandler)}
		runs, err := RunLoad(ctx, s, nil)
		if err != nil || len(runs) != 1 || runs[0].Error != "" {
			t.Fatalf("%s: %v %+v", loader, err, runs)
		}
		var fp string
		if err := pool.QueryRow(ctx, `SELECT count(*) || ' ' || md5(string_agg(c::text, ',' ORDER BY time, device)) FROM conditions c`).Scan(&fp); err != nil {
			t.Fatal(err)
		}
		return fp
	}
	if a, b := fingerprint("pgts-binary"), fingerprint("pgts-file"); a != b || !strings.HasPrefix(a, "30000 ") {
		t.Errorf("pgts-binary stored %s, pgts-file %s", a, b)
	}
}

// TestHypertableSQL checks the create_hypertable call the timescaledb
// stores send (TimescaleDB is not installed where the tests run).
func TestHypertableSQL(t *testing.T) {
	sql, args := hypertableSQL("conditions", 0)
	if sql != "SELECT create_hypertable($1::regclass, 'time', create_default_indexes => false)" || len(args) != 1 || args[0] != "conditions" {
		t.Errorf("default chunk: %s %v", sql, args)
	}
	sql, args = hypertableSQL("conditions", time.Hour)
	if sql != "SELECT create_hypertable($1::regclass, 'time', chunk_time_interval => $2::interval, create_default_indexes => false)" ||
		len(args) != 2 || args[0] != "conditions" || args[1] != "3600 seconds" {
		t.Errorf("1-hour chunk: %s %v", sql, args)
	}
	if _, args = hypertableSQL("conditions", 7*24*time.Hour); args[1] != "604800 seconds" {
		t.Errorf("7-day chunk: %v", args)
	}
}

func TestTimescaleStores(t *testing.T) {
	got := TimescaleStores([]string{"plain", "timescaledb", "pgts"}, []time.Duration{0, time.Hour, 7 * 24 * time.Hour, 90 * time.Minute})
	want := []string{"plain", "timescaledb", "timescaledb-1h", "timescaledb-7d", "timescaledb-90m", "pgts"}
	if !slices.Equal(got, want) {
		t.Errorf("stores %v, want %v", got, want)
	}
	for _, st := range want[1:5] {
		d, ok := TimescaleChunkOf(st)
		if !ok || TimescaleStoreName(d) != st {
			t.Errorf("%s: chunk %s, %v", st, d, ok)
		}
	}
	for _, st := range []string{"plain", "timescaledb-", "timescaledb-0h", "timescaledb-1y", "timescaledbx"} {
		if _, ok := TimescaleChunkOf(st); ok {
			t.Errorf("%q taken for a timescaledb store", st)
		}
	}
	if got := TimescaleStores([]string{"timescaledb"}, nil); !slices.Equal(got, []string{"timescaledb"}) {
		t.Errorf("no chunks: %v", got)
	}
}

func TestTimescaleChunkValidation(t *testing.T) {
	s := LoadScenario{Stores: []string{"plain", "timescaledb"}, Loaders: []string{"pgts-binary"}, Workers: []int{1}, Width: 5, Batches: 1,
		Index: "time", Repeat: 1}
	for _, c := range []struct {
		stores []string
		chunks []time.Duration
		err    string
	}{
		{nil, []time.Duration{0, time.Hour}, ""},
		{nil, []time.Duration{30 * time.Second}, "whole number of minutes"},
		{nil, []time.Duration{90 * time.Second}, "whole number of minutes"},
		{nil, []time.Duration{time.Hour, time.Hour}, "given twice"},
		{[]string{"plain"}, []time.Duration{time.Hour}, "without the timescaledb store"},
	} {
		sc := s
		sc.TimescaleChunks = c.chunks
		if c.stores != nil {
			sc.Stores = c.stores
		}
		err := sc.Validate()
		if (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("stores %v chunks %v: err = %v, want %q", sc.Stores, c.chunks, err, c.err)
		}
	}
}
