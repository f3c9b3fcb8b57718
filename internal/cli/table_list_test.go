package cli

import (
	"strings"
	"testing"

	"github.com/pgts/pgts/internal/pgtest"
)

// TestTableListIntervalsInWords: table list and show write partition
// lengths and retentions in words, "1 hour" beside "7 days" (1 hour used
// to be 01:00:00).
func TestTableListIntervalsInWords(t *testing.T) {
	env := map[string]string{"DATABASE_URL": pgtest.DB(t)}
	for _, c := range [][]string{{"hourly", "1 hour", "36 hours"}, {"weekly", "7 days", "90 days"}} {
		if _, stderr, code := run(t, env, "table", "create", c[0], "--columns", "time timestamptz not null, v float8",
			"--interval", c[1], "--retention", c[2], "--premake", "1"); code != 0 {
			t.Fatalf("create %s: %d %s", c[0], code, stderr)
		}
	}
	out, stderr, code := run(t, env, "table", "list")
	if code != 0 || !strings.Contains(out, "1 hour") || !strings.Contains(out, "36 hours") || strings.Contains(out, "01:00:00") {
		t.Fatalf("table list: %d\n%s%s", code, out, stderr)
	}
	if out, _, _ := run(t, env, "table", "show", "hourly"); !strings.Contains(out, "interval:     1 hour") {
		t.Fatalf("table show:\n%s", out)
	}
}
