package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/pgts/pgts/internal/bench"
)

// memorySources are two load results of the memory benchmark's shape:
// the same stores at 1,000 and at 100,000 devices.
func memorySources() []Source {
	var srcs []Source
	for i, dev := range []int{1000, 100000} {
		var runs []bench.LoadRun
		for j, store := range []string{"plain", "pgts"} {
			r := bench.LoadRun{Store: store, Loader: "pgts-binary", Workers: 2, Repeat: 1, Rows: 200_000, IndexBytes: 3 << 20, Verified: true}
			for b := 0; b < 20; b++ {
				d := 100.0
				if i == 1 && j == 0 {
					d = 100 + 20*float64(b) // plain at 100,000 devices slows down
				}
				r.Batches = append(r.Batches, bench.BatchTiming{StartMS: float64(b) * 1000, DurationMS: d, Rows: 10_000})
			}
			runs = append(runs, r)
		}
		srcs = append(srcs, Source{Label: []string{"20261123T1-memory-1000", "20261123T1-memory-100000"}[i],
			Load: &LoadFile{Runs: runs, Scenario: bench.LoadScenario{Devices: dev, Index: "device,time", MemoryLimit: 128 << 20}}})
	}
	return srcs
}

func TestRunNames(t *testing.T) {
	srcs := memorySources()
	got := runName(srcs, srcs[1], srcs[1].Load.Runs[0])
	if got != "plain / pgts-binary / 2 workers / 100,000 devices" {
		t.Errorf("two sources of different device counts: %q", got)
	}
	if got := runName(srcs[:1], srcs[0], srcs[0].Load.Runs[1]); got != "pgts / pgts-binary / 2 workers" {
		t.Errorf("one source: %q", got)
	}
	same := []Source{srcs[0], srcs[0]}
	same[1].Label = "other"
	if got := runName(same, same[1], same[1].Load.Runs[0]); got != "plain / pgts-binary / 2 workers / other" {
		t.Errorf("two sources alike but for their label: %q", got)
	}
	for _, r := range batchSeries(srcs) {
		if strings.Contains(r.name, "20261123") {
			t.Errorf("chart legend names a results directory: %q", r.name)
		}
	}
}

func TestLoadDriftTable(t *testing.T) {
	var b bytes.Buffer
	writeLoadDrift(&b, memorySources())
	out := b.String()
	// plain at 100,000 devices: batches 0–1 take 100 and 120 ms (20,000
	// rows in 1.12 s), batches 18–19 460 and 480 ms (20,000 in 1.48 s).
	for _, want := range []string{"end/start", "128 MiB", "device,time", "17,857", "13,514", "0.76", "1.00"} {
		if !strings.Contains(out, want) {
			t.Errorf("drift table lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "\n"); n != 6 {
		t.Errorf("%d lines, want a title, a head and 4 runs:\n%s", n, out)
	}
}
