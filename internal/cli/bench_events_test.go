package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgts/pgts/internal/pgtest"
)

// TestBenchEvents runs the event workload at a tiny scale, then refuses
// to overwrite its results and refuses --rows with --duration.
func TestBenchEvents(t *testing.T) {
	env := map[string]string{"DATABASE_URL": pgtest.DB(t)}
	dir := filepath.Join(t.TempDir(), "events")
	args := []string{"bench", "events", "--sessions", "2", "--rows", "200", "--week-rows", "100", "--out", dir}
	stdout, stderr, code := run(t, env, args...)
	if code != 0 {
		t.Fatalf("bench events: exit %d\n%s\n%s", code, stdout, stderr)
	}
	for _, s := range []string{"plain", "pgts", "end/start", "events_categories_ids", "PRIMARY KEY (id, created_at)"} {
		if !strings.Contains(stdout, s) {
			t.Errorf("output lacks %q:\n%s", s, stdout)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "events.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Runs []struct {
			Rows    int64 `json:"rows"`
			Samples []struct {
				IPS float64 `json:"ips"`
			} `json:"samples"`
		} `json:"runs"`
		Complete bool   `json:"complete"`
		Command  string `json:"command"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if !doc.Complete || len(doc.Runs) != 2 || doc.Runs[0].Rows != 200 || doc.Runs[1].Rows != 200 || len(doc.Runs[1].Samples) == 0 {
		t.Errorf("events.json: %s", b[:min(len(b), 300)])
	}
	if _, stderr, code := run(t, env, args...); code != 2 || !strings.Contains(stderr, "never overwritten") {
		t.Errorf("second run into the same --out: exit %d, %s", code, stderr)
	}
	if _, stderr, code := run(t, env, "bench", "events", "--rows", "10", "--duration", "1s", "--out", t.TempDir()); code != 2 {
		t.Errorf("--rows with --duration: exit %d, %s", code, stderr)
	}
}
