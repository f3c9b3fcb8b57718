package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgts/pgts/internal/bench"
	"github.com/pgts/pgts/internal/pgtest"
)

// TestBenchInsertAndReport runs tiny insert and load benchmarks end to end,
// parses their results back and renders the report of both.
func TestBenchInsertAndReport(t *testing.T) {
	env := map[string]string{"DATABASE_URL": pgtest.DB(t)}
	dir := filepath.Join(t.TempDir(), "run")
	stdout, stderr, code := run(t, env, "bench", "insert", "--rows-load", "2000", "--rows-more", "500",
		"--query-seconds", "1", "--query-rates", "100", "--out", dir)
	if code != 0 {
		t.Fatalf("bench insert: exit %d\n%s", code, stderr)
	}
	for _, s := range []string{"l.i0", "l.x", "l.i1", "l.i2", "qr100", "qp100"} {
		if !strings.Contains(stdout, s) {
			t.Errorf("step table lacks %s:\n%s", s, stdout)
		}
	}
	var ir bench.InsertResult
	readResults(t, filepath.Join(dir, "insert.json"), &ir)
	if !ir.Complete || !ir.Verified || len(ir.Steps) != 6 || ir.Rows != 2000+500+100+ir.Steps[4].Inserts+ir.Steps[5].Inserts ||
		ir.Machine.PostgreSQL == "" || ir.Command == "" {
		t.Errorf("insert.json: complete %v verified %v steps %d rows %d machine %+v", ir.Complete, ir.Verified, len(ir.Steps), ir.Rows, ir.Machine)
	}
	// Results are never overwritten.
	if _, stderr, code := run(t, env, "bench", "insert", "--rows-load", "2000", "--out", dir); code != 2 || !strings.Contains(stderr, "never overwritten") {
		t.Errorf("second run into the same --out: exit %d, %s", code, stderr)
	}

	_, stderr, code = run(t, env, "bench", "load", "--stores", "plain,weekly", "--loaders", "pgts-binary,insert", "--workers", "1",
		"--batches", "2", "--out", dir)
	if code != 0 {
		t.Fatalf("bench load: exit %d\n%s", code, stderr)
	}
	var lf struct {
		Runs    []bench.LoadRun `json:"runs"`
		Machine bench.Machine   `json:"machine"`
	}
	readResults(t, filepath.Join(dir, "load.json"), &lf)
	if len(lf.Runs) != 4 || lf.Machine.Cores == 0 || lf.Machine.Settings["shared_buffers"] == "" {
		t.Errorf("load.json: %d runs, machine %+v", len(lf.Runs), lf.Machine)
	}

	out := filepath.Join(t.TempDir(), "report")
	stdout, stderr, code = run(t, nil, "report", dir, "--out", out)
	if code != 0 {
		t.Fatalf("report: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "Loading, medians per run") || !strings.Contains(stdout, "Insert benchmark, run (plain table)") {
		t.Errorf("report tables:\n%s", stdout)
	}
	for _, f := range []string{"report.txt", "report.html", "load-batches.png", "load-batches-sorted.png", "load-average.png", "insert-steps.png", "query-steps.png"} {
		if fi, err := os.Stat(filepath.Join(out, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func readResults(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func TestReportUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"report"},
		{"report", filepath.Join(t.TempDir(), "missing")},
		{"bench", "insert", "--table-kind", "heap"},
		{"bench", "insert", "--rows-load", "0"},
		{"bench", "insert", "--query-rates", "100,x"},
	} {
		if _, stderr, code := run(t, nil, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, stderr)
		}
	}
}
