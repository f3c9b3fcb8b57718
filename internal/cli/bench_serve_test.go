package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgts/pgts/internal/pgtest"
)

// TestBenchServe runs the daemon benchmark at a tiny scale: this test
// binary plays pgts serve as the child process.
func TestBenchServe(t *testing.T) {
	t.Setenv("PGTS_CLI_CHILD", "1")
	env := map[string]string{"DATABASE_URL": pgtest.DB(t)}
	dir := filepath.Join(t.TempDir(), "serve")
	stdout, stderr, code := run(t, env, "bench", "serve", "--series", "300", "--rates", "200,300", "--window", "2s",
		"--flush-interval", "1s", "--flush-workers", "1", "--max-memory", "64MB", "--out", dir)
	if code != 0 {
		t.Fatalf("bench serve: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if conf, err := os.ReadFile(filepath.Join(dir, "serve-300-200.toml")); err != nil || !strings.Contains(string(conf), "\nflush-workers = 1\n") {
		t.Errorf("the daemon's configuration does not carry --flush-workers (%v):\n%s", err, conf)
	}
	b, err := os.ReadFile(filepath.Join(dir, "serve.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Result struct {
			Steps []struct {
				Series     int     `json:"series"`
				Rate       float64 `json:"offered_rate"`
				Acked      int64   `json:"acked"`
				Added      int64   `json:"added"`
				Registered int64   `json:"series_registered"`
				Sustained  bool    `json:"sustained"`
				EndSeries  int64   `json:"end_series_bytes"`
				DiskBytes  int64   `json:"disk_bytes"`
				Reason     string  `json:"reason"`
				Samples    []struct {
					CacheBytes int64 `json:"cache_bytes"`
				} `json:"samples"`
			} `json:"steps"`
			Best     map[string]float64 `json:"best_sustained_rate"`
			Complete bool               `json:"complete"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	r := doc.Result
	if !r.Complete || len(r.Steps) != 2 {
		t.Fatalf("result: %+v", r)
	}
	for _, st := range r.Steps {
		if !st.Sustained || st.Acked == 0 || st.Added != st.Acked || st.Registered != 300 || len(st.Samples) < 2 ||
			st.EndSeries == 0 || st.DiskBytes == 0 {
			t.Errorf("step %+v", st)
		}
	}
	if r.Best["300"] != 300 {
		t.Errorf("best = %v", r.Best)
	}
	if !strings.Contains(stdout, "highest sustained rate with 300 series: 300 points/s") {
		t.Errorf("stdout:\n%s", stdout)
	}
}

func TestBenchServeVersusUsage(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--contention"}, "give --vm"},
		{[]string{"--repeat", "3"}, "give --vm"},
		{[]string{"--vm", filepath.Join(t.TempDir(), "none")}, "victoria-metrics binary"},
		{[]string{"--vm", os.Args[0], "--repeat", "0"}, "repeats 0"},
		{[]string{"--vm", os.Args[0], "--quiet", "1h"}, "quiet wait"},
	} {
		_, stderr, code := run(t, nil, append([]string{"bench", "serve"}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
}

// TestBenchServeVersus runs `bench serve --vm` with the real
// VictoriaMetrics, when one is built, at a tiny scale with the busy loop.
func TestBenchServeVersus(t *testing.T) {
	vm := ""
	for _, p := range []string{"../../.bench-tools/bin/victoria-metrics", "/tmp/vmbin/victoria-metrics"} {
		if _, err := os.Stat(p); err == nil {
			vm, _ = filepath.Abs(p)
			break
		}
	}
	if vm == "" {
		t.Skip("no victoria-metrics binary in .bench-tools/bin or /tmp/vmbin: `make bench-tools` builds one")
	}
	t.Setenv("PGTS_CLI_CHILD", "1")
	env := map[string]string{"DATABASE_URL": pgtest.DB(t)}
	dir := filepath.Join(t.TempDir(), "versus")
	stdout, stderr, code := run(t, env, "bench", "serve", "--vm", vm, "--contention", "--series", "300", "--rates", "150",
		"--window", "2s", "--flush-interval", "1s", "--max-memory", "64MB", "--quiet", "1s", "--out", dir)
	if code != 0 {
		t.Fatalf("bench serve --vm: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"300 series @ 150 points/s, 2 s window, one core kept busy, one run each",
		"| measure | pgts serve (+ PostgreSQL) | VictoriaMetrics | pgts/VM |", "| stored series | 300 | 300 | 1.00 |"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "versus.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Kind   string `json:"kind"`
		Result struct {
			Runs []struct {
				System     string `json:"system"`
				Contention bool   `json:"contention"`
			} `json:"runs"`
			Complete bool `json:"complete"`
		} `json:"result"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Kind != "serve-versus" || !doc.Result.Complete || len(doc.Result.Runs) != 2 || !doc.Result.Runs[0].Contention {
		t.Errorf("versus.json: %+v", doc)
	}
}
