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
		"--flush-interval", "1s", "--max-memory", "64MB", "--out", dir)
	if code != 0 {
		t.Fatalf("bench serve: exit %d\n%s\n%s", code, stdout, stderr)
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
		if !st.Sustained || st.Acked == 0 || st.Added != st.Acked || st.Registered != 300 || len(st.Samples) < 2 {
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
