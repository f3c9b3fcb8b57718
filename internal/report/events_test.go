package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/plotter"

	"github.com/pgts/pgts/internal/bench"
)

// eventsFixture writes an events.json: plain's rate falls from 2,000 to
// 1,000 inserts/s over 40 s, pgts' stays at 1,800; both checkpoint in
// seconds 10 to 19.
func eventsFixture(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "events")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sc := bench.DefaultEventsScenario()
	res := bench.EventsResult{Scenario: sc, Command: "pgts bench events --rows 200000", Complete: true,
		Machine: bench.Machine{Cores: 2, PostgreSQL: "PostgreSQL 15.8 on x86_64"}}
	for i, store := range []string{"plain", "pgts"} {
		r := bench.EventsRun{Store: store, PrimaryKey: "PRIMARY KEY (id)", Verified: true, Complete: true, TableBytes: 300 << 20,
			Latency: &bench.Latency{Count: 1, P50US: 7500, P99US: 41000, MaxUS: 250000}}
		if i == 1 {
			r.PrimaryKey, r.Partitions = "PRIMARY KEY (id, created_at)", 4
			r.Advice = `unique constraint without the time column: ... must include the time column "created_at"`
		}
		for s := 0; s < 40; s++ {
			ips := 2000 - 25*float64(s)
			if i == 1 {
				ips = 1800
			}
			sm := bench.EventsSample{T: float64(s + 1), Seconds: 1, Inserts: int64(ips), IPS: ips, P50US: 7000, P99US: 40000, MaxUS: 90000,
				WriteBytes: int64(ips) * 6000, WriteCalls: int64(ips) * 3, WALBytes: int64(ips) * 4000, DeviceWriteBytes: 5_000_000, DeviceWrites: 300, Checkpoint: s >= 10 && s < 20}
			if s >= 20 {
				sm.Checkpoints = 1
			}
			r.Samples = append(r.Samples, sm)
			r.Rows += sm.Inserts
			r.WriteBytes += sm.WriteBytes
			r.WriteCalls += sm.WriteCalls
			r.WALBytes += sm.WALBytes
			r.DeviceWriteBytes += sm.DeviceWriteBytes
			r.DeviceWrites += sm.DeviceWrites
		}
		r.Seconds, r.Checkpoints = 40, 1
		r.IPS = float64(r.Rows) / r.Seconds
		r.StartIPS, r.EndIPS = r.Samples[0].IPS+r.Samples[1].IPS, r.Samples[38].IPS+r.Samples[39].IPS
		r.StartIPS, r.EndIPS = r.StartIPS/2, r.EndIPS/2
		r.EndToStart = r.EndIPS / r.StartIPS
		for k, n := range []string{"events_pkey", "events_event_id", "events_categories_ids", "events_created_at", "events_event_type"} {
			def := "CREATE INDEX " + n + " ON public.events USING btree (x)"
			r.Indexes = append(r.Indexes, bench.EventIndex{Name: n, Definition: def, Bytes: int64(k+1) << 20 * int64(2-i)})
		}
		res.Runs = append(res.Runs, r)
	}
	writeJSONFile(t, filepath.Join(dir, "events.json"), res)
	return dir
}

func TestEventsReport(t *testing.T) {
	dir := eventsFixture(t)
	out, text, err := Render(Options{Dirs: []string{dir}, Out: t.TempDir(), Command: "pgts report events"})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "events.golden", text)
	checkCharts(t, out.Charts, []string{"events-rate.png", "events-write.png"})
	page, err := os.ReadFile(out.HTML)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"pgts bench events --rows 200000", "PostgreSQL 15.8", "events-rate.png", "end/start", "created_at"} {
		if !strings.Contains(string(page), s) {
			t.Errorf("page lacks %q", s)
		}
	}
	checkInBrowser(t, out.HTML, 2)
}

func TestMovingMean(t *testing.T) {
	in := plotter.XYs{{X: 1, Y: 2}, {X: 2, Y: 4}, {X: 3, Y: 6}, {X: 4, Y: 8}}
	got := movingMean(in, 2)
	want := []float64{2, 3, 5, 7}
	for i, w := range want {
		if got[i].Y != w || got[i].X != in[i].X {
			t.Fatalf("movingMean = %v, want y %v", got, want)
		}
	}
}
