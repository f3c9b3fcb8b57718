package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/pgts/pgts/internal/bench"
)

// loadRuns makes runs of one store/loader/workers with the given rows/s,
// one repeat each, and per-batch timings whose last tenth runs at endRatio
// times the speed of the first (20 batches).
func loadRuns(store, loader string, workers int, endRatio float64, rates ...float64) []bench.LoadRun {
	var out []bench.LoadRun
	for i, r := range rates {
		run := bench.LoadRun{Store: store, Loader: loader, Workers: workers, Repeat: i + 1, Rows: 200_000, RowsPerSec: r, Verified: true}
		at := 0.0
		for b := 0; b < 20; b++ {
			d := 100.0
			if b >= 18 {
				d = 100 / endRatio
			}
			run.Batches = append(run.Batches, bench.BatchTiming{StartMS: at, DurationMS: d, Rows: 10_000})
			at += d
		}
		out = append(out, run)
	}
	return out
}

func TestVerdictsLoad(t *testing.T) {
	var runs []bench.LoadRun
	runs = append(runs, loadRuns("plain", "psql-copy", 1, 1, 100, 100, 100)...)
	runs = append(runs, loadRuns("plain", "pgts-binary", 2, 0.5, 205, 219, 231)...)
	runs = append(runs, loadRuns("pgts", "psql-copy", 1, 1, 95, 105, 101)...)
	runs = append(runs, loadRuns("pgts", "pgts-binary", 2, 1, 400, 438, 460)...)
	lf := LoadFile{Scenario: bench.LoadScenario{Interval: time.Hour}, Runs: runs, Summary: bench.Summarize(runs)}
	vs := Verdicts([]Source{{Label: "loading", Load: &lf}})
	find := func(sub string) Verdict {
		t.Helper()
		for _, v := range vs {
			if strings.Contains(v.Sentence, sub) {
				return v
			}
		}
		var all []string
		for _, v := range vs {
			all = append(all, v.Sentence)
		}
		t.Fatalf("no verdict says %q; verdicts:\n%s", sub, strings.Join(all, "\n"))
		return Verdict{}
	}
	v := find("pgts-binary with 2 workers loaded 2.19× psql-copy into a plain table (repeats 2.05–2.31).")
	if v.Noisy() || v.Base != "psql-copy" || len(v.Repeats) != 3 {
		t.Errorf("loader verdict: %+v noisy %v", v, v.Noisy())
	}
	// pgts/psql-copy against plain/psql-copy: 1.01, repeats 0.95–1.05:
	// the spread (0.10) is larger than the difference (0.01).
	v = find("Into a pgts series table (1-hour partitions), psql-copy loaded 1.01× as fast as into a plain table (repeats 0.95–1.05).")
	if !v.Noisy() {
		t.Errorf("%q: not flagged noisy", v.Sentence)
	}
	// Repeats 1.95, 2.00, 1.99: the median of the repeats, not 438/219.
	v = find("Into a pgts series table (1-hour partitions), pgts-binary with 2 workers loaded 1.99× as fast as into a plain table (repeats 1.95–2.00).")
	if v.Noisy() {
		t.Errorf("%q: flagged noisy (repeats %v)", v.Sentence, v.Repeats)
	}
	v = find("Loading into a plain table with pgts-binary with 2 workers ended at 0.50× its starting rate, last tenth of the batches against the first (repeats 0.50–0.50).")
	if v.Measure != "end/start" || v.Noisy() {
		t.Errorf("end/start verdict: %+v", v)
	}
	if n := len(vs); n != 2+1+4 {
		t.Errorf("%d verdicts, want 7 (2 stores, 1 loader, 4 end/start)", n)
	}
}

func TestStoreNames(t *testing.T) {
	for store, want := range map[string]string{"timescaledb": "a TimescaleDB hypertable (default 7-day chunks)",
		"timescaledb-1h": "a TimescaleDB hypertable (1-hour chunks)", "pgts": "a pgts series table (7-day partitions)",
		"weekly": "weekly native partitions"} {
		if got := storeName(store, bench.LoadScenario{}); got != want {
			t.Errorf("%s: %q, want %q", store, got, want)
		}
	}
}

func TestVerdictsOneRun(t *testing.T) {
	runs := append(loadRuns("plain", "psql-copy", 1, 1, 100), loadRuns("plain", "pgts-binary", 1, 1, 150)...)
	lf := LoadFile{Runs: runs}
	vs := Verdicts([]Source{{Label: "x", Load: &lf}})
	if len(vs) == 0 || vs[0].Sentence != "pgts-binary with 1 worker loaded 1.50× psql-copy into a plain table (one run)." || vs[0].Noisy() {
		t.Fatalf("verdicts %+v", vs)
	}
	if lo, hi := vs[0].Spread(); lo != 1.5 || hi != 1.5 {
		t.Errorf("spread of one run %v–%v, want 1.5–1.5", lo, hi)
	}
}

func TestVerdictsInsertEvents(t *testing.T) {
	ins := func(kind string, ips, qps float64) *bench.InsertResult {
		return &bench.InsertResult{Scenario: bench.InsertScenario{TableKind: kind}, Steps: []bench.InsertStep{
			{Name: "l.i0", IPS: ips}, {Name: "l.x"}, {Name: "qr100", IPS: 100, QPS: qps}}}
	}
	ev := &bench.EventsResult{Scenario: bench.EventsScenario{Sessions: 16}, Runs: []bench.EventsRun{
		{Store: "plain", IPS: 1000, EndToStart: 1.02}, {Store: "pgts", IPS: 900, EndToStart: 0.75}}}
	srcs := []Source{{Label: "insert-plain", Insert: ins("plain", 1000, 200)}, {Label: "insert-pgts", Insert: ins("pgts", 730, 82)},
		{Label: "events", Events: ev}}
	var b bytes.Buffer
	if err := WriteVerdict(&b, srcs); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"insert-pgts:\n",
		"Step l.i0 on a pgts series table ran at 0.73× the inserts/s of a plain table (one run).",
		"Step qr100 on a pgts series table ran at 0.41× the queries/s of a plain table (one run).",
		"16 sessions committing one row each inserted into a weekly pgts series table at 0.90× the rate of a plain table (one run).",
		"Inserting into a weekly pgts series table ended at 0.75× its starting rate, last tenth of the run against the first (one run).",
		"Inserting into a plain table ended at 1.02× its starting rate",
	} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("verdict lacks %q:\n%s", s, b.String())
		}
	}
	if strings.Contains(b.String(), "l.x") {
		t.Errorf("verdict compares l.x, which has no rate:\n%s", b.String())
	}
	if err := WriteVerdict(&b, nil); err != nil {
		t.Fatal(err)
	}
}

// TestVerdictsInsertRepeats pairs a study's insert runs of each kind in
// order (plain, pgts, pgts, plain) and states the median of the pairs.
func TestVerdictsInsertRepeats(t *testing.T) {
	ins := func(kind string, ips float64) *bench.InsertResult {
		return &bench.InsertResult{Scenario: bench.InsertScenario{TableKind: kind}, Steps: []bench.InsertStep{{Name: "l.i0", IPS: ips}}}
	}
	srcs := []Source{{Label: "insert-plain-1", Insert: ins("plain", 1000)}, {Label: "insert-pgts-1", Insert: ins("pgts", 500)},
		{Label: "insert-pgts-2", Insert: ins("pgts", 630)}, {Label: "insert-plain-2", Insert: ins("plain", 900)}}
	vs := Verdicts(srcs)
	if len(vs) != 1 || vs[0].Source != "pgts table, 2 runs" ||
		vs[0].Sentence != "Step l.i0 on a pgts series table ran at 0.60× the inserts/s of a plain table (repeats 0.50–0.70)." {
		t.Fatalf("verdicts %+v", vs)
	}
}

// TestVerdictsEventsRepeats pairs the stores within each run of a study
// whose runs alternate the stores' order.
func TestVerdictsEventsRepeats(t *testing.T) {
	ev := func(plain, pgts float64, pgtsFirst bool) *bench.EventsResult {
		runs := []bench.EventsRun{{Store: "plain", IPS: plain, EndToStart: 1}, {Store: "pgts", IPS: pgts, EndToStart: 0.9}}
		if pgtsFirst {
			runs[0], runs[1] = runs[1], runs[0]
		}
		return &bench.EventsResult{Scenario: bench.EventsScenario{Sessions: 16}, Runs: runs}
	}
	var b bytes.Buffer
	if err := WriteVerdict(&b, []Source{{Label: "events-1", Events: ev(1000, 900, false)}, {Label: "events-2", Events: ev(800, 880, true)}}); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"events, 2 runs:\n",
		"inserted into a weekly pgts series table at 1.00× the rate of a plain table (repeats 0.90–1.10). [spread larger than the difference]",
		"Inserting into a weekly pgts series table ended at 0.90× its starting rate, last tenth of the run against the first (repeats 0.90–0.90)."} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("verdict lacks %q:\n%s", s, b.String())
		}
	}
}
