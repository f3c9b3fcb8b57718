package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pgts/pgts/internal/pgtest"
)

// TestBenchStudyTiny runs every study at its tiny size end to end against
// the test cluster (without the memory limits, which need the embedded
// cluster) and checks each writes its parts' results and a report that
// opens with the verdict.
func TestBenchStudyTiny(t *testing.T) {
	for _, c := range []struct {
		study   string
		parts   []string
		verdict []string // sentences (or their start) the verdict must hold
	}{
		{"loading", []string{"loading/load.json"}, []string{
			"pgts-binary with 2 workers loaded", "psql-copy into a plain table (repeats ",
			"Into a pgts series table (7-day partitions), pgts-binary with 1 worker loaded",
			"Into weekly native partitions", "Into monthly native partitions"}},
		{"memory", []string{"memory-100000/load.json", "memory-1000/load.json"}, []string{
			"Into a pgts series table (1-hour partitions), pgts-binary with 2 workers loaded"}},
		{"insert", []string{"insert-plain/insert.json", "insert-pgts/insert.json"}, []string{
			"Step l.i0 on a pgts series table ran at", "the inserts/s of a plain table (one run).",
			"Step qp100 on a pgts series table ran at"}},
		{"events", []string{"events/events.json"}, []string{
			"4 sessions committing one row each inserted into a weekly pgts series table at"}},
	} {
		t.Run(c.study, func(t *testing.T) {
			env := map[string]string{"DATABASE_URL": pgtest.DB(t)}
			out := filepath.Join(t.TempDir(), "study")
			stdout, stderr, code := run(t, env, "bench", "study", c.study, "--size", "tiny", "--memory-limit", "none", "--workers", "2",
				"--out", out)
			if code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
			}
			for _, p := range append(c.parts, "report.html", "report.txt") {
				if _, err := os.Stat(filepath.Join(out, p)); err != nil {
					t.Errorf("%s: %v", p, err)
				}
			}
			if !strings.HasPrefix(stdout, "Study "+c.study+" (tiny)") || !strings.Contains(stdout, "Verdict") {
				t.Errorf("stdout does not state the verdict:\n%s", stdout)
			}
			page, _ := os.ReadFile(filepath.Join(out, "report.html"))
			for _, s := range c.verdict {
				if !strings.Contains(stdout, s) || !strings.Contains(string(page), s) {
					t.Errorf("verdict lacks %q:\n%s", s, stdout)
				}
			}
			if c.study == "loading" || c.study == "memory" {
				if !regexp.MustCompile(`skipping store timescaledb.*install TimescaleDB`).MatchString(stderr) {
					t.Errorf("timescaledb not skipped with how to get it:\n%s", stderr)
				}
			}
		})
	}
}

func TestBenchStudyUsage(t *testing.T) {
	env := map[string]string{"DATABASE_URL": "postgres://127.0.0.1:1/none"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"nosuch"}, `unknown study "nosuch"`},
		{nil, "needs one study: loading, memory, insert, events"},
		{[]string{"memory", "--size", "tiny"}, "needs the embedded cluster"},
		{[]string{"insert", "--size", "huge"}, `size "huge"`},
		{[]string{"insert", "--timescaledb-chunk", "1h"}, "the loading study's choice"},
		{[]string{"loading", "--timescaledb-chunk", "10s"}, "whole number of minutes"},
	} {
		_, stderr, code := run(t, env, append([]string{"bench", "study", "--out", filepath.Join(t.TempDir(), "x")}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 with %q", c.args, code, stderr, c.want)
		}
	}
}
