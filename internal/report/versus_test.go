package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pgts/pgts/internal/bench"
)

// versusFixture writes the versus.json of two interleaved rounds of
// pgts serve beside VictoriaMetrics at one series count and rate, as
// `pgts bench serve --vm` writes it.
func versusFixture(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "versus")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	res := bench.VersusResult{Series: []int{300000}, Rates: []float64{150000}, WindowS: 120, QuietS: 60, Repeats: 2, Complete: true}
	for rep, acked := range [][2]float64{{120000, 150000}, {130000, 148000}} {
		for i, sys := range []string{bench.SystemPgts, bench.SystemVM} {
			r := bench.VersusRun{System: sys, Repeat: rep, Series: 300000, Rate: 150000, AckedRate: acked[i],
				Acked: int64(acked[i] * 120), StoredSeries: 300000, StoredPoints: int64(acked[i] * 120),
				DaemonCPU: 60, QuietRSS: 300 << 20, DiskBytes: 30 << 20}
			if sys == bench.SystemPgts {
				r.ServerCPU = 40
				r.QuietRSS = 1200 << 20
				r.PostgresPSS = 400 << 20
			}
			res.Runs = append(res.Runs, r)
		}
	}
	writeJSONFile(t, filepath.Join(dir, "versus.json"), VersusFile{Kind: "serve-versus", Result: res,
		Command: "pgts bench serve --vm victoria-metrics --series 300000 --rates 150000"})
	return dir
}

// TestVersusReport: a directory holding only the side-by-side run of the
// daemon and VictoriaMetrics is reported like any other result: the
// verdict compares the two systems, the tables are those bench serve
// printed, and the page names the command.
func TestVersusReport(t *testing.T) {
	dir := versusFixture(t)
	out, text, err := Render(Options{Dirs: []string{dir}, Out: t.TempDir(), Command: "pgts report versus"})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"At 300,000 series and 150,000 points/s offered, pgts serve acknowledged 0.84× the points/s of VictoriaMetrics (repeats 0.80–0.88).",
		"pgts serve (with its PostgreSQL) used",
		"| acked points/s | 125,000 | 149,000 | 0.84 |",
		"medians of 2 repeats",
	} {
		if !strings.Contains(text, s) {
			t.Errorf("text lacks %q:\n%s", s, text)
		}
	}
	page, err := os.ReadFile(out.HTML)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"pgts bench serve --vm victoria-metrics", "acked points/s", "0.84×"} {
		if !strings.Contains(string(page), s) {
			t.Errorf("page lacks %q", s)
		}
	}
}
