package bench

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pgts/pgts/internal/pgtest"
)

func TestServeVersusValidate(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ok := ServeVersus{Serve: ServeScenario{Exe: "pgts", Series: []int{10}, Rates: []float64{5}, Window: time.Second, MaxMemory: 1 << 30,
		FlushInterval: time.Second, Archives: []string{"10s:1h"}}, VMExe: exe, Repeats: 1}
	if err := ok.Validate(); err != nil {
		t.Fatalf("valid run: %v", err)
	}
	for _, c := range []struct {
		edit func(*ServeVersus)
		want string
	}{
		{func(v *ServeVersus) { v.VMExe = "" }, "no victoria-metrics binary"},
		{func(v *ServeVersus) { v.VMExe = filepath.Join(t.TempDir(), "none") }, "no such file"},
		{func(v *ServeVersus) { v.VMExe = t.TempDir() }, "not an executable file"},
		{func(v *ServeVersus) { v.Repeats = 0 }, "repeats 0"},
		{func(v *ServeVersus) { v.Repeats = 21 }, "repeats 21"},
		{func(v *ServeVersus) { v.Serve.Quiet = 11 * time.Minute }, "quiet wait"},
		{func(v *ServeVersus) { v.Serve.Series = nil }, "at least one series count"},
	} {
		v := ok
		c.edit(&v)
		if err := v.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v, want %q", err, c.want)
		}
	}
}

// TestVersusTable: medians per system, series count and rate; a column
// per system; what went wrong listed under the table.
func TestVersusTable(t *testing.T) {
	runs := []VersusRun{
		{System: SystemPgts, Series: 1000, Rate: 500, Acked: 5000, AckedRate: 500, DaemonCPU: 0.02, ServerCPU: 0.01, QuietRSS: 100 << 20,
			PostgresPSS: 50 << 20, SeriesBytes: 1 << 20, DiskBytes: 8 << 20, StoredSeries: 1000, StoredPoints: 5000},
		{System: SystemVM, Series: 1000, Rate: 500, Acked: 5000, AckedRate: 500, DaemonCPU: 0.01, QuietRSS: 50 << 20, DiskBytes: 1 << 20,
			StoredSeries: 1000, StoredPoints: 5000},
		{System: SystemVM, Repeat: 1, Series: 1000, Rate: 500, Acked: 4000, AckedRate: 400, DaemonCPU: 0.01, QuietRSS: 70 << 20, DiskBytes: 1 << 20,
			StoredSeries: 1000, StoredPoints: 3000, Reason: "3000 points stored, 4000 acknowledged"},
		{System: SystemPgts, Repeat: 1, Series: 1000, Rate: 500, Acked: 5000, AckedRate: 480, DaemonCPU: 0.04, ServerCPU: 0.01, QuietRSS: 120 << 20,
			PostgresPSS: 50 << 20, SeriesBytes: 1 << 20, DiskBytes: 8 << 20, StoredSeries: 1000, StoredPoints: 5000},
	}
	sums := SummarizeVersus(runs)
	if len(sums) != 2 || sums[0].System != SystemPgts || sums[1].System != SystemVM {
		t.Fatalf("summaries %+v", sums)
	}
	if sums[0].AckedRate != 490 || sums[0].CPUPerPoint != 8 || sums[0].QuietRSS != 110<<20 || sums[1].StoredPoints != 4000 {
		t.Errorf("pgts medians %+v, vm %+v", sums[0], sums[1])
	}
	var b bytes.Buffer
	if err := WriteVersusTable(&b, VersusResult{WindowS: 10, QuietS: 60, Repeats: 2, Runs: runs}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"1,000 series @ 500 points/s, 10 s window, quiet, medians of 2 repeats",
		"| measure | pgts serve (+ PostgreSQL) | VictoriaMetrics | pgts/VM |",
		"| acked points/s | 490 | 450 | 1.09 |",
		"| CPU µs/point | 8.0 | 2.2 | 3.56 |",
		"| RSS after 60 s quiet, MiB | 110 | 60.0 | 1.83 |",
		"| PostgreSQL PSS beside, MiB | 50.0 | - | |",
		"| pgts_store_series_bytes, MiB | 1.0 | - | |",
		"\n\n- VictoriaMetrics, repeat 2: 3000 points stored, 4000 acknowledged\n\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

// buildPgts builds the pgts binary for a test that runs the daemon.
func buildPgts(t *testing.T) string {
	t.Helper()
	exe := filepath.Join(t.TempDir(), "pgts")
	cmd := exec.Command("go", "build", "-o", exe, "./cmd/pgts")
	cmd.Dir = "../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return exe
}

// TestServeVersusSmall runs pgts serve and the real VictoriaMetrics side
// by side at a tiny scale, twice: the rounds alternate the order, both
// systems store every series and point, and the table has both columns.
func TestServeVersusSmall(t *testing.T) {
	vmExe := vmBinary(t)
	if testing.Short() {
		t.Skip("builds pgts and runs two daemons")
	}
	s := ServeScenario{Exe: buildPgts(t), ConnString: pgtest.DB(t), Series: []int{200}, Rates: []float64{100}, Window: 3 * time.Second,
		MaxMemory: 64 << 20, FlushInterval: time.Second, Archives: []string{"10s:1h", "1m:1d"}, Quiet: time.Second, Dir: t.TempDir()}
	res, err := RunServeVersus(context.Background(), ServeVersus{Serve: s, VMExe: vmExe, Repeats: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, r := range res.Runs {
		order = append(order, r.System)
		if r.Reason != "" {
			t.Errorf("%s repeat %d: %s", r.System, r.Repeat+1, r.Reason)
		}
		if r.StoredSeries != 200 || r.StoredPoints != r.Acked || r.Acked < 250 {
			t.Errorf("%s repeat %d: %d series and %d points stored, %d acknowledged", r.System, r.Repeat+1, r.StoredSeries, r.StoredPoints, r.Acked)
		}
		if r.QuietRSS == 0 || r.DiskBytes == 0 || r.DaemonCPU <= 0 {
			t.Errorf("%s repeat %d: RSS %d, disk %d, CPU %v", r.System, r.Repeat+1, r.QuietRSS, r.DiskBytes, r.DaemonCPU)
		}
		if r.System == SystemPgts && (r.PostgresPSS == 0 || r.SeriesBytes == 0) {
			t.Errorf("pgts repeat %d: PostgreSQL PSS %d, series bytes %d", r.Repeat+1, r.PostgresPSS, r.SeriesBytes)
		}
	}
	if strings.Join(order, ",") != "pgts,vm,vm,pgts" {
		t.Errorf("order %v, want pgts,vm,vm,pgts", order)
	}
	var b bytes.Buffer
	if err := WriteVersusTable(&b, res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "| measure | pgts serve (+ PostgreSQL) | VictoriaMetrics |") ||
		!strings.Contains(b.String(), "| stored series | 200 | 200 | 1.00 |") {
		t.Errorf("table:\n%s", b.String())
	}
	t.Logf("\n%s", b.String())
	ents, _ := os.ReadDir(s.Dir)
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "vm-data-") {
			t.Errorf("VictoriaMetrics data directory %s left behind", e.Name())
		}
	}
}
