package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/pgts/pgts/internal/pg"
	"github.com/pgts/pgts/internal/pgtest"
)

func TestServerMemory(t *testing.T) {
	const mib = 1 << 20
	got, err := serverMemory(192*mib, "")
	want := map[string]int64{"shared_buffers": 32 * mib, "effective_cache_size": 144 * mib, "maintenance_work_mem": 12 * mib, "work_mem": 4 * mib,
		"wal_buffers": 1 * mib}
	if err != nil || len(got) != len(memorySettings) {
		t.Fatalf("192 MiB limit: %v, %v", got, err)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("192 MiB limit: %s = %d MiB, want %d MiB", k, got[k]>>20, v>>20)
		}
	}
	if got, err := serverMemory(192*mib, "48MB"); err != nil || got["shared_buffers"] != 48*mib {
		t.Errorf("--shared-buffers 48MB: %v, %v", got, err)
	}
	for _, sb := range []string{"8MB", "100MB", "lots"} {
		if _, err := serverMemory(192*mib, sb); err == nil {
			t.Errorf("--shared-buffers %s under 192 MiB accepted", sb)
		}
	}
	if _, err := serverMemory(64*mib, ""); err == nil {
		t.Error("a 64 MiB limit (10 MiB of shared_buffers) accepted")
	}
}

// autoConf returns the memory settings postgresql.auto.conf holds.
func autoConf(t *testing.T, cs string) map[string]string {
	t.Helper()
	conn, err := pg.Connect(context.Background(), cs)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	rows, err := conn.Query(context.Background(), `SELECT name, setting FROM pg_file_settings
		WHERE name = ANY($1) AND sourcefile LIKE '%/postgresql.auto.conf'`, append([]string{savedMemorySetting}, memorySettings...))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		out[k] = v
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestSetServerMemory sets the memory settings with ALTER SYSTEM and puts
// back what was there: nothing for shared_buffers, an earlier value for
// effective_cache_size. The settings take effect only at a restart, which
// the test cluster never gets; the file is put back as found.
func TestSetServerMemory(t *testing.T) {
	ctx := context.Background()
	cs := userSetting(t, "effective_cache_size = '3GB'")
	restore, err := setServerMemory(ctx, cs, map[string]int64{"shared_buffers": 32 << 20, "effective_cache_size": 144 << 20,
		"work_mem": 4 << 20, "maintenance_work_mem": 12 << 20, "wal_buffers": 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	got := autoConf(t, cs)
	if got["shared_buffers"] != "32768kB" || got["effective_cache_size"] != "147456kB" {
		t.Errorf("after setServerMemory: %v", got)
	}
	if err := restore(ctx); err != nil {
		t.Fatal(err)
	}
	got = autoConf(t, cs)
	if _, ok := got["shared_buffers"]; ok || got["effective_cache_size"] != "3GB" || len(got) != 1 {
		t.Errorf("after restore: %v; want no shared_buffers and effective_cache_size 3GB", got)
	}
}

// TestBenchLoadMemoryFlags: --shared-buffers needs --memory-limit, and
// --memory-limit refuses a database that is not the embedded cluster.
func TestBenchLoadMemoryFlags(t *testing.T) {
	env := map[string]string{"DATABASE_URL": pgtest.DB(t)}
	for _, cmd := range [][]string{{"bench", "load"}, {"bench", "events"}} {
		_, stderr, code := run(t, env, append(cmd, "--shared-buffers", "32MB", "--out", t.TempDir())...)
		if code != 2 || !strings.Contains(stderr, "--memory-limit") {
			t.Errorf("%v --shared-buffers alone: exit %d, %s", cmd, code, stderr)
		}
		_, stderr, code = run(t, env, append(cmd, "--memory-limit", "192MB", "--out", t.TempDir())...)
		if code != 2 || !strings.Contains(stderr, "embedded cluster") {
			t.Errorf("%v --memory-limit with DATABASE_URL: exit %d, %s", cmd, code, stderr)
		}
	}
	if _, stderr, code := run(t, env, "bench", "load", "--devices", "-3", "--out", t.TempDir()); code != 2 || !strings.Contains(stderr, "devices") {
		t.Errorf("--devices -3: exit %d, %s", code, stderr)
	}
	if _, stderr, code := run(t, env, "bench", "load", "--pgts-interval", "90s", "--out", t.TempDir()); code != 2 || !strings.Contains(stderr, "interval") {
		t.Errorf("--pgts-interval 90s: exit %d, %s", code, stderr)
	}
}

// TestSetServerMemoryAfterKilledRun: a run whose server the limit killed
// could not put the settings back; the next run must put back the
// user's settings, not the killed run's.
func TestSetServerMemoryAfterKilledRun(t *testing.T) {
	ctx := context.Background()
	cs := userSetting(t, "work_mem = '7MB'")
	sizes := map[string]int64{"shared_buffers": 32 << 20, "effective_cache_size": 144 << 20,
		"work_mem": 4 << 20, "maintenance_work_mem": 12 << 20, "wal_buffers": 1 << 20}
	if _, err := setServerMemory(ctx, cs, sizes); err != nil { // its restore never runs
		t.Fatal(err)
	}
	restore, err := setServerMemory(ctx, cs, sizes)
	if err != nil {
		t.Fatal(err)
	}
	if err := restore(ctx); err != nil {
		t.Fatal(err)
	}
	got := autoConf(t, cs)
	if got["work_mem"] != "7MB" || len(got) != 1 {
		t.Errorf("after the second run's restore: %v; want only work_mem 7MB", got)
	}
}

// resetAutoConf removes the settings these tests write from the test
// cluster's postgresql.auto.conf, which every test database shares.
func resetAutoConf(t *testing.T, cs string) {
	ctx := context.Background()
	conn, err := pg.Connect(ctx, cs)
	if err != nil {
		t.Error(err)
		return
	}
	defer conn.Close(ctx)
	for _, sql := range append([]string{"SET " + savedMemorySetting + " = ''", "ALTER SYSTEM RESET " + savedMemorySetting},
		"ALTER SYSTEM RESET shared_buffers", "ALTER SYSTEM RESET effective_cache_size", "ALTER SYSTEM RESET work_mem",
		"ALTER SYSTEM RESET maintenance_work_mem", "ALTER SYSTEM RESET wal_buffers") {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Error(err)
		}
	}
}

// userSetting returns a test database whose cluster's postgresql.auto.conf
// holds setting ("name = 'value'"), as a user's ALTER SYSTEM would leave
// it; the settings these tests write are removed at the end.
func userSetting(t *testing.T, setting string) string {
	ctx := context.Background()
	cs := pgtest.DB(t)
	conn, err := pg.Connect(ctx, cs)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "ALTER SYSTEM SET "+setting); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resetAutoConf(t, cs) })
	return cs
}
