package bench

import (
	"context"
	"testing"
	"time"

	"github.com/pgts/pgts/internal/pg"
	"github.com/pgts/pgts/internal/pgtest"
)

func TestTenthRates(t *testing.T) {
	if s, e := TenthRates(make([]BatchTiming, 9)); s != 0 || e != 0 {
		t.Errorf("9 batches: %v, %v; want 0, 0", s, e)
	}
	// 20 batches of 1,000 rows from two workers, out of order: the first
	// two (by start) take 100 ms each, side by side; the last two 400 ms.
	var b []BatchTiming
	for i := 19; i >= 0; i-- {
		d := 100.0
		if i >= 18 {
			d = 400
		}
		b = append(b, BatchTiming{StartMS: float64(i/2) * 500, DurationMS: d, Rows: 1000})
	}
	s, e := TenthRates(b)
	if s != 20000 || e != 5000 {
		t.Errorf("start %v, end %v; want 20,000 and 5,000 rows/s", s, e)
	}
}

func TestLoadScenarioDevicesInterval(t *testing.T) {
	ok := LoadScenario{Stores: []string{"pgts"}, Loaders: []string{"pgts-binary"}, Workers: []int{1}, Width: 1, Batches: 1,
		Index: "device,time", Repeat: 1}
	for _, c := range []struct {
		devices  int
		interval time.Duration
		valid    bool
	}{{0, 0, true}, {100000, time.Hour, true}, {-1, 0, false}, {1, 90 * time.Second, false}, {1, 30 * time.Second, false}, {1, 48 * time.Hour, true}} {
		s := ok
		s.Devices, s.Interval = c.devices, c.interval
		if err := s.Validate(); (err == nil) != c.valid {
			t.Errorf("devices %d, interval %s: %v", c.devices, c.interval, err)
		}
	}
}

// TestRunLoadDevicesHourly loads 30 batches (30 minutes of data) with
// 50,000 devices into a pgts store of 10-minute partitions: the rows
// carry 50,000 devices (the study's generator alone would give 10,000),
// partitions of 10 minutes hold them, and the run has its start and end
// rates.
func TestRunLoadDevicesHourly(t *testing.T) {
	cs := pgtest.DB(t)
	s := LoadScenario{Stores: []string{"pgts"}, Loaders: []string{"pgts-binary"}, Workers: []int{2}, Width: 1, Batches: 30,
		Index: "device,time", Repeat: 1, ConnString: cs, Devices: 50000, Interval: 10 * time.Minute}
	runs, err := RunLoad(context.Background(), s, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 1 || runs[0].Error != "" || !runs[0].Verified {
		t.Fatalf("runs: %+v", runs)
	}
	if r := runs[0]; r.StartRate <= 0 || r.EndRate <= 0 {
		t.Errorf("start %v, end %v rows/s", r.StartRate, r.EndRate)
	}
	conn, err := pg.Connect(context.Background(), cs)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var devices, parts int
	var span time.Duration
	if err := conn.QueryRow(context.Background(), `SELECT (SELECT count(DISTINCT device) FROM conditions),
		(SELECT count(*) FROM pg_partition_tree('conditions') WHERE isleaf AND relid <> 'conditions_default'::regclass),
		(SELECT max(hi - lo) FROM (SELECT min(time) lo, max(time) hi FROM conditions GROUP BY tableoid) p)`).Scan(&devices, &parts, &span); err != nil {
		t.Fatal(err)
	}
	if devices != 50000 || parts < 3 || parts > 4 || span >= 10*time.Minute {
		t.Errorf("%d devices in %d partitions, the widest spanning %s; want 50,000 in 3 or 4 (unaligned), each under 10 minutes", devices, parts, span)
	}
}
