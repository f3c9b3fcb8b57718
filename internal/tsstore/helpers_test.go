package tsstore

import (
	"context"
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/goleak"

	"github.com/pgts/pgts/internal/ingest"
	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pgtest"
	"github.com/pgts/pgts/internal/rra"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// base is a time aligned to every step the tests use (a multiple of 3600 s).
const base = 1_700_002_800

// newPool returns a pool on a fresh database and checks, once the pool is
// closed at the end of the test, that the test leaked no goroutine. The
// check is made once per test, from the baseline taken before its first
// pool: cleanups run last-in first-out, so it runs after every pool of
// the test is closed. (A check per pool would see the goroutines an
// earlier pool, still open, started after the later pool's baseline.)
func newPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	if _, checked := leakChecked.LoadOrStore(t, true); !checked {
		pgtest.AdminURL(t) // start the cluster before taking the goroutine baseline
		ign := goleak.IgnoreCurrent()
		t.Cleanup(func() {
			leakChecked.Delete(t)
			goleak.VerifyNone(t, ign)
		})
	}
	return pgtest.Pool(t)
}

// leakChecked holds the tests whose goroutine check is registered.
var leakChecked sync.Map

// rule builds a rule from its config: RRD consolidation when hb is set,
// Graphite consolidation when it is empty.
func rule(t testing.TB, re, step, hb string, rras ...string) rra.Rule {
	t.Helper()
	rc := rra.RuleConfig{Regexp: re, Step: step, Heartbeat: hb, RRAs: rras}
	if hb != "" {
		rc.Consolidation = "rrd"
	}
	r, err := rra.ParseRule(rc)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// clock is a settable test clock.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

// testConfig has one rule for everything under "a.", raw points kept an
// hour in a daily table, and the clock at base+100 s.
func testConfig(t testing.TB, c *clock) Config {
	cfg := DefaultConfig()
	cfg.Rules = []rra.Rule{rule(t, `^a\.`, "10s", "20s", "10s:1h", "30s:1d", "max:30s:1d")}
	cfg.Raw = &RawConfig{Table: "raw_points", Interval: partition.Interval{Days: 1}, Retention: &partition.Interval{Micros: 3600e6}}
	cfg.FlushInterval = time.Hour // tests flush explicitly
	cfg.MaxMemory = 64 << 20
	if c.now.IsZero() {
		c.now = time.Unix(base+100, 0)
	}
	cfg.Now = c.Now
	return cfg
}

// open opens a store, closed at the end of the test if still open.
func open(t testing.TB, pool *pgxpool.Pool, cfg Config) *Store {
	t.Helper()
	s, err := Open(context.Background(), pool, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return s
}

// pt is a point at base + sec seconds.
func pt(name string, sec, v float64) ingest.Point {
	return ingest.Point{Name: name, Value: v, Time: base*1e6 + int64(math.Round(sec*1e6))}
}

func mustAdd(t testing.TB, s *Store, pts ...ingest.Point) {
	t.Helper()
	if err := s.Add(context.Background(), pts); err != nil {
		t.Fatal(err)
	}
}

func mustFlush(t testing.TB, s *Store) {
	t.Helper()
	if err := s.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// fetch1 fetches one series and fails unless it is there.
func fetch1(t testing.TB, s *Store, name string, from, until int64) Series {
	t.Helper()
	got, err := s.Fetch(context.Background(), []string{name}, from, until, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("fetch %q: %d series", name, len(got))
	}
	return got[0]
}

// sameValues compares values, NaN equal to NaN, within 1e-9.
func sameValues(got, want []float64) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		g, w := got[i], want[i]
		if math.IsNaN(g) != math.IsNaN(w) || (!math.IsNaN(g) && math.Abs(g-w) > 1e-9) {
			return false
		}
	}
	return true
}

func checkSeries(t testing.TB, got Series, start, step int64, want []float64) {
	t.Helper()
	if got.Start != start || got.Step != step || !sameValues(got.Values, want) {
		t.Fatalf("%s: got start %d step %d %v\nwant start %d step %d %v", got.Name, got.Start-base, got.Step, got.Values, start-base, step, want)
	}
}

var nan = math.NaN()

func names(n int, format string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf(format, i)
	}
	return out
}
