package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/pgts/pgts/internal/pgtest"
)

func TestPartitionAdvice(t *testing.T) {
	const mb = 1 << 20
	for _, c := range []struct {
		name     string
		rps      float64
		devices  int64
		budget   int64
		nonTime  int
		interval string
		why      string
		warn     bool
	}{
		// The memory benchmark's two cases: 10,000 rows a minute of
		// data, a 128 MB server (budget a quarter: 32 MB).
		{"100,000 devices", 10000.0 / 60, 100000, 32 * mb, 1, "1 hour", "within", false},
		{"1,000 devices", 10000.0 / 60, 1000, 32 * mb, 1, "", "fit", false},
		{"no device index", 5000, 0, 1 << 30, 0, "", "no index", false},
		{"unknown devices", 1000, 0, 1 << 30, 1, "6 hours", "within", false},
		{"two indexes", 1000, 0, 1 << 30, 2, "3 hours", "within", false},
		{"too fast", 1e6, 0, 64 * mb, 1, "1 hour", "more memory", true},
		// 20,000 rows/s: 1 hour takes 2.7 GiB of a 1 GiB cache, 15
		// minutes 687 MiB.
		{"1 hour too long", 2e4, 0, 1 << 30, 1, "1 hour", "--interval '15 minutes' fits", true},
		{"slow", 10, 1e6, 6 << 30, 1, "1 week", "within", false},
	} {
		iv, why, warn := partitionAdvice(c.rps, c.devices, c.budget, c.nonTime)
		if iv != c.interval || !strings.Contains(why, c.why) || warn != c.warn {
			t.Errorf("%s: %q, %q, warn %v; want %q, a reason saying %q, warn %v", c.name, iv, why, warn, c.interval, c.why, c.warn)
		}
	}
}

func TestNonTimeIndexes(t *testing.T) {
	if n := nonTimeIndexes([]string{"device, time", "time", ` "time" DESC`, "Time", `"Time"`, "tag", "device"}, "time"); n != 4 {
		t.Errorf("%d, want 4 (device, \"Time\", tag, device)", n)
	}
}

// TestTableCreateAdvice: with an expected rate, table create chooses the
// advised partition length, warns when --interval is longer, and keeps
// --interval when memory sets no limit.
func TestTableCreateAdvice(t *testing.T) {
	db := pgtest.DB(t)
	env := map[string]string{"DATABASE_URL": db}
	pool := pgtest.PoolFor(t, db)
	create := func(name string, extra ...string) string {
		t.Helper()
		args := append([]string{"table", "create", name, "--columns", "time timestamptz not null, device int not null, v float8",
			"--index-on", "device, time", "--premake", "1"}, extra...)
		_, stderr, code := run(t, env, args...)
		if code != 0 {
			t.Fatalf("create %s: exit %d %s", name, code, stderr)
		}
		return stderr
	}
	interval := func(name string) string {
		t.Helper()
		var iv string
		if err := pool.QueryRow(context.Background(), "SELECT make_interval(0, interval_months, 0, interval_days, 0, 0, interval_micros / 1e6)::text FROM pgts.series_table WHERE table_name = $1", name).Scan(&iv); err != nil {
			t.Fatal(err)
		}
		return iv
	}
	// The memory benchmark's case: 10,000 rows a minute over 100,000
	// devices on a 128 MB server.
	stderr := create("hourly", "--expect-rows-per-second", "167", "--expect-devices", "100000", "--server-memory", "128MB")
	if iv := interval("hourly"); iv != "01:00:00" || !strings.Contains(stderr, "chosen") {
		t.Errorf("advised: interval %s, log %s", iv, stderr)
	}
	stderr = create("weekly", "--interval", "1 week", "--expect-rows-per-second", "167", "--expect-devices", "100000", "--server-memory", "128MB")
	if iv := interval("weekly"); iv != "7 days" || !strings.Contains(stderr, "longer than advised") {
		t.Errorf("given longer: interval %s, log %s", iv, stderr)
	}
	stderr = create("few", "--interval", "1 day", "--expect-rows-per-second", "167", "--expect-devices", "1000", "--server-memory", "128MB")
	if iv := interval("few"); iv != "1 day" || !strings.Contains(stderr, "flat rate") {
		t.Errorf("1,000 devices: interval %s, log %s", iv, stderr)
	}
	// Even 1 hour outgrows the cache: a warning proposing a shorter
	// length that fits (it used to be an INFO line proposing none).
	stderr = create("fast", "--expect-rows-per-second", "20000", "--server-memory", "4GB")
	if !strings.Contains(stderr, "WARN") || !strings.Contains(stderr, "--interval '15 minutes' fits") {
		t.Errorf("1 hour outgrows the cache: log %s", stderr)
	}
	if _, stderr, code := run(t, env, "table", "create", "bad", "--columns", "time timestamptz not null", "--expect-devices", "5"); code != 2 {
		t.Errorf("--expect-devices alone: exit %d %s", code, stderr)
	}
}
