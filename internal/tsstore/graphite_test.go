package tsstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgts/pgts/internal/rra"
)

// graphiteConfig has the whisper retentions in Graphite
// consolidation for "g.", and the clock at base+3600.
func graphiteConfig(t testing.TB, c *clock) Config {
	cfg := DefaultConfig()
	cfg.Rules = []rra.Rule{rule(t, `^g\.`, "10s", "", "10s:6h", "1m:7d", "1h:1y")}
	cfg.FlushInterval = time.Hour
	cfg.MaxMemory = 64 << 20
	if c.now.IsZero() {
		c.now = time.Unix(base+3600, 0)
	}
	cfg.Now = c.Now
	return cfg
}

// The defects of the comparison with carbon and whisper, through the
// store, from the cache and from the database.
func TestGraphiteStore(t *testing.T) {
	pool := newPool(t)
	var c clock
	s := open(t, pool, graphiteConfig(t, &c))
	// Defects 1 and 2: a single point, unaligned, is stored and labelled
	// with the start of its slot.
	mustAdd(t, s, pt("g.one", 17, 5))
	// Defect 3: a series sent every 60 s shows one value a minute.
	for i := range 5 {
		mustAdd(t, s, pt("g.sparse", float64(60*i), float64(i+1)))
	}
	// Defect 4: out of order and duplicates: stored, the last value wins.
	mustAdd(t, s, pt("g.ooo", 20, 2), pt("g.ooo", 0, 1), pt("g.ooo", 10, 7), pt("g.ooo", 10, 3), pt("g.ooo", 30, 4), pt("g.ooo", 50, 6), pt("g.ooo", 40, 5))
	// Defect 5: far-future points are refused and damage nothing.
	mustAdd(t, s, pt("g.ooo", 4_000_000_000, 1), pt("g.ooo", 3600+11*60, 1))
	mustAdd(t, s, pt("g.ooo", 60, 8))

	check := func(when string) {
		t.Helper()
		checkSeries(t, fetch1(t, s, "g.one", base, base+30), base+10, 10, []float64{5, nan, nan})
		sp := fetch1(t, s, "g.sparse", base-10, base+240)
		want := make([]float64, 25)
		for i := range want {
			want[i] = nan
		}
		for i := range 5 {
			want[6*i] = float64(i + 1)
		}
		checkSeries(t, sp, base, 10, want)
		checkSeries(t, fetch1(t, s, "g.ooo", base-10, base+60), base, 10, []float64{1, 3, 2, 4, 5, 6, 8})
		// The 1m archive (from beyond 6 h): the mean of the six 10 s
		// slots of the first minute, the 60 s value alone (1 of 6) not
		// enough for the second.
		c.now = time.Unix(base+7*3600, 0)
		m := fetch1(t, s, "g.ooo", base-60, base+60)
		c.now = time.Unix(base+3600, 0)
		if m.Step != 60 {
			t.Fatalf("%s: step %d, want the 1m archive", when, m.Step)
		}
		n := len(m.Values)
		checkSeries(t, Series{Name: m.Name, Start: m.Start + int64(n-2)*60, Step: 60, Values: m.Values[n-2:]}, base, 60, []float64{(1 + 3 + 2 + 4 + 5 + 6) / 6.0, nan})
	}
	check("from the cache")
	st := s.Stats()
	if st.Future != 2 || st.OutOfOrder != 0 || st.Duplicate != 0 {
		t.Fatalf("stats: %+v", st)
	}
	mustFlush(t, s)
	check("from the database")
}

// Defect 5: a state saved after a far-future point (RRD consolidation
// accepted one before) no longer blackholes the series after a restart.
func TestFutureStateReset(t *testing.T) {
	pool := newPool(t)
	var c clock
	cfg := testConfig(t, &c)
	cfg.Raw = nil
	cfg.FutureTolerance = 200 * 365 * 24 * time.Hour
	s := open(t, pool, cfg)
	mustAdd(t, s, pt("a.x", 0, 1), pt("a.x", 10, 1), pt("a.x", 4_000_000_000, 1))
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	cfg.FutureTolerance = DefaultFutureTolerance
	s2 := open(t, pool, cfg)
	mustAdd(t, s2, pt("a.x", 20, 2), pt("a.x", 30, 3), pt("a.x", 40, 4))
	if st := s2.Stats(); st.OutOfOrder != 0 {
		t.Fatalf("after a restart the series still refuses points: %+v", st)
	}
	checkSeries(t, fetch1(t, s2, "a.x", base+20, base+40), base+30, 10, []float64{4, nan})
}

// Defect 8: flush failures are logged at most once per flush interval
// with their count, reported by Health, and the recovery is logged.
func TestFlushFailureLogging(t *testing.T) {
	var logs bytes.Buffer
	s := &Store{cfg: Config{FlushInterval: time.Hour}, log: slog.New(slog.NewTextHandler(&logs, nil))}
	for range 3 {
		s.noteFlush(errors.New("connection refused"))
	}
	if err := s.Health(); err == nil || err.Error() != "connection refused" {
		t.Errorf("Health while failing: %v", err)
	}
	if n := strings.Count(logs.String(), "flushing the metrics cache"); n != 1 {
		t.Errorf("%d failure logs within one interval, want 1:\n%s", n, logs.String())
	}
	s.noteFlush(nil)
	if err := s.Health(); err != nil {
		t.Errorf("Health after recovery: %v", err)
	}
	if !strings.Contains(logs.String(), "recovered") || !strings.Contains(logs.String(), "failures=3") {
		t.Errorf("recovery not logged with the failure count:\n%s", logs.String())
	}
}

// Defect 6: a burst of StatsD counts (4 flushes of 10, dated a little
// after each 10 s boundary) renders as its counts, one per slot, instead
// of being spread over the slots by time weighting.
func TestStatsDBurst(t *testing.T) {
	pool := newPool(t)
	var c clock
	s := open(t, pool, graphiteConfig(t, &c))
	for i := range 4 {
		mustAdd(t, s, pt("g.stats.counters.x.count", float64(10*i)+0.003*float64(i+1), 10))
	}
	checkSeries(t, fetch1(t, s, "g.stats.counters.x.count", base-10, base+40), base, 10, []float64{10, 10, 10, 10, nan})
}

// Defect 4, through the database: a point later than the latest minute
// the series keeps in memory is stored in its 10 s slot, and its minute
// and hour are recomputed from the stored slots, as whisper propagates.
func TestGraphiteLateRecompute(t *testing.T) {
	pool := newPool(t)
	var c clock
	s := open(t, pool, graphiteConfig(t, &c))
	for i := range 6 {
		mustAdd(t, s, pt("g.late", float64(10*i), 1))
	}
	mustAdd(t, s, pt("g.late", 60, 1), pt("g.late", 120, 1))
	mustFlush(t, s)
	mustAdd(t, s, pt("g.late", 20, 13)) // two minutes late
	if st := s.Stats(); st.LateKept != 1 {
		t.Fatalf("stats: %+v", st)
	}
	mustFlush(t, s) // writes the 10 s slot, reads the minute's six, writes the minute
	checkSeries(t, fetch1(t, s, "g.late", base-10, base+50), base, 10, []float64{1, 1, 13, 1, 1, 1})
	c.now = time.Unix(base+7*3600, 0)
	m := fetch1(t, s, "g.late", base-60, base+60)
	c.now = time.Unix(base+3600, 0)
	n := len(m.Values)
	checkSeries(t, Series{Name: m.Name, Start: m.Start + int64(n-2)*60, Step: 60, Values: m.Values[n-2:]}, base, 60, []float64{3, nan})
}

// Fetch reads many series, over segments and archives, one statement per
// segment: each gets its own values, a name asked twice too.
func TestFetchManySeries(t *testing.T) {
	pool := newPool(t)
	var c clock
	s := open(t, pool, graphiteConfig(t, &c))
	ns := names(450, "g.many.s%03d")
	for i, n := range ns {
		mustAdd(t, s, pt(n, 0, float64(i)), pt(n, 10, float64(2*i)))
	}
	mustFlush(t, s)
	got, err := s.Fetch(context.Background(), append(ns, ns[7]), base-10, base+10, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(ns)+1 {
		t.Fatalf("%d series, want %d", len(got), len(ns)+1)
	}
	for i, g := range got {
		j := i
		if i == len(ns) {
			j = 7
		}
		checkSeries(t, g, base, 10, []float64{float64(j), float64(2 * j)})
	}
}

// Defect 7: with raw points kept, long ranges never fail and never return
// more than Graphite would: a series with archives reads its archives (the
// range clamped to their longest span), a raw-only series is averaged in
// SQL to at most maxDataPoints values.
func TestLongRanges(t *testing.T) {
	pool := newPool(t)
	var c clock
	cfg := testConfig(t, &c)
	cfg.Raw.Retention = nil // raw points kept forever
	s := open(t, pool, cfg)
	mustAdd(t, s, goldenPoints("a.x")...)
	mustAdd(t, s, pt("b.raw", 1, 1), pt("b.raw", 5, 3), pt("b.raw", 12, 5))
	mustFlush(t, s)
	now := c.now.Unix()
	for _, c := range []struct {
		from      int64
		maxPoints int
	}{{now - 365*86400, 0}, {now - 2*365*86400, 1000}, {now - 200*86400, 0}} {
		got, err := s.Fetch(context.Background(), []string{"a.x", "b.raw"}, c.from, now, c.maxPoints)
		if err != nil {
			t.Fatalf("from %d s ago: %v", now-c.from, err)
		}
		if len(got) != 2 {
			t.Fatalf("from %d s ago: %d series", now-c.from, len(got))
		}
		if a := got[0]; a.Step != 30 || len(a.Values) > 2881 {
			t.Errorf("from %d s ago: a.x at step %d, %d values; want its 30s:1d archive", now-c.from, a.Step, len(a.Values))
		}
		limit := maxFetchValues
		if c.maxPoints > 0 {
			limit = c.maxPoints
		}
		if r := got[1]; len(r.Values) > limit+1 {
			t.Errorf("from %d s ago: b.raw %d values at step %d, want at most %d", now-c.from, len(r.Values), r.Step, limit)
		}
	}
}

// A restarted store resumes Graphite consolidation: the finer values of
// the latest minute come back with the state.
func TestGraphiteRestart(t *testing.T) {
	pool := newPool(t)
	var c clock
	cfg := graphiteConfig(t, &c)
	s := open(t, pool, cfg)
	mustAdd(t, s, pt("g.r", 0, 1), pt("g.r", 10, 2))
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	s2 := open(t, pool, cfg)
	mustAdd(t, s2, pt("g.r", 20, 6))
	checkSeries(t, fetch1(t, s2, "g.r", base-10, base+20), base, 10, []float64{1, 2, 6})
	c.now = time.Unix(base+7*3600, 0)
	m := fetch1(t, s2, "g.r", base-60, base+60)
	n := len(m.Values)
	checkSeries(t, Series{Name: m.Name, Start: m.Start + int64(n-2)*60, Step: 60, Values: m.Values[n-2:]}, base, 60, []float64{3, nan})
}

// A Graphite state is saved with a series' first point only (it holds no
// values): a store restarted after later flushes reads the finer values
// of the latest minute and hour from the archives, and keeps those of
// points sent after the restart.
func TestGraphiteRestartAfterFlushes(t *testing.T) {
	pool := newPool(t)
	var c clock
	cfg := graphiteConfig(t, &c)
	s := open(t, pool, cfg)
	for i, v := range []float64{1, 2, 3} {
		mustAdd(t, s, pt("g.r", float64(10*i), v))
		mustFlush(t, s)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	s2 := open(t, pool, cfg)
	mustAdd(t, s2, pt("g.r", 30, 6), pt("g.r", 10, 4))
	checkSeries(t, fetch1(t, s2, "g.r", base-10, base+30), base, 10, []float64{1, 4, 3, 6})
	mustAdd(t, s2, pt("g.r", 40, 11))
	mustFlush(t, s2)
	if got := storedSlot(t, pool, "g.r", 2, 0); got != 5 {
		t.Errorf("stored minute %v, want 5 (the mean of 1, 4, 3, 6, 11)", got)
	}
	c.now = time.Unix(base+7*3600, 0)
	m := fetch1(t, s2, "g.r", base-60, base+60)
	n := len(m.Values)
	checkSeries(t, Series{Name: m.Name, Start: m.Start + int64(n-2)*60, Step: 60, Values: m.Values[n-2:]}, base, 60, []float64{5, nan})
}

// storedSlot reads from the database the value archive n (1: the finest)
// of a series holds for the slot starting at sec seconds after base, NaN
// when none: what a reader of the tables sees once a flush returned.
func storedSlot(t testing.TB, pool *pgxpool.Pool, name string, n int, sec int64) float64 {
	t.Helper()
	var v *float64
	err := pool.QueryRow(context.Background(), `SELECT pgts.rra_value(d.vals, (m.id % 200 + 1)::int4)
FROM pgts.metric m CROSS JOIN LATERAL unnest(m.bundles) WITH ORDINALITY AS a(bundle_id, n)
JOIN pgts.rra_data d ON d.bundle_id = a.bundle_id AND d.seg = m.id / 200
WHERE m.name = $1 AND a.n = $2 AND pgts.rra_time(d.times, (m.id % 200 + 1)::int4) = $3`, name, n, base+sec).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && v == nil) {
		return nan
	}
	if err != nil {
		t.Fatal(err)
	}
	return *v
}

// Points later than the minute a series keeps in memory (a late minute
// sent after newer ones, a 10 s slot overwritten) reach the database's
// minute and hour slots in the flush that writes their 10 s slots, as
// whisper has them once carbon wrote the points: one flush, not two.
func TestGraphiteLateOneFlush(t *testing.T) {
	pool := newPool(t)
	var c clock
	s := open(t, pool, graphiteConfig(t, &c))
	// g.late: minutes 0, 2 and 3, then minute 1 late; g.over: 3 in every
	// 10 s slot, then each minute's first slot overwritten with 6.
	for i := range 24 {
		if i/6 != 1 {
			mustAdd(t, s, pt("g.late", float64(10*i), float64(i)))
		}
		mustAdd(t, s, pt("g.over", float64(10*i), 3))
	}
	// g.hour: an hour of ones but its minute 1, and the next hour's first
	// point; then minute 1, all 61, late: its minute and hour change.
	for i := range 361 {
		if i/6 != 1 {
			mustAdd(t, s, pt("g.hour", float64(10*i), 1))
		}
	}
	mustFlush(t, s)
	for i := 6; i < 12; i++ {
		mustAdd(t, s, pt("g.late", float64(10*i), float64(i)))
	}
	for m := range 3 {
		mustAdd(t, s, pt("g.over", float64(60*m), 6))
	}
	for i := 6; i < 12; i++ {
		mustAdd(t, s, pt("g.hour", float64(10*i), 61))
	}
	mustFlush(t, s)
	if got := storedSlot(t, pool, "g.hour", 2, 60); got != 61 {
		t.Errorf("g.hour minute 1 stored %v, want 61", got)
	}
	if got := storedSlot(t, pool, "g.hour", 3, 0); got != 2 {
		t.Errorf("g.hour hour 0 stored %v, want 2 (59 minutes of 1, one of 61)", got)
	}
	want := []float64{2.5, 8.5, 14.5, 20.5}
	for m, w := range want {
		if got := storedSlot(t, pool, "g.late", 2, int64(60*m)); got != w {
			t.Errorf("g.late minute %d stored %v, want %v", m, got, w)
		}
	}
	for m := range 4 {
		w := 3.5
		if m == 3 {
			w = 3
		}
		if got := storedSlot(t, pool, "g.over", 2, int64(60*m)); got != w {
			t.Errorf("g.over minute %d stored %v, want %v", m, got, w)
		}
	}
	// Four minutes of sixty are too few for the hour (xff 0.5): whisper
	// leaves it unset, and so must the recompute.
	for _, name := range []string{"g.late", "g.over"} {
		if got := storedSlot(t, pool, name, 3, 0); !math.IsNaN(got) {
			t.Errorf("%s hour stored %v, want none", name, got)
		}
	}
}

// A read right after late points were added, before any flush of the
// store's own, shows their minutes as whisper has them once carbon wrote
// the points, whether the earlier points were flushed or still cached.
func TestGraphiteLateRead(t *testing.T) {
	for _, flushed := range []bool{false, true} {
		t.Run(fmt.Sprintf("flushed=%v", flushed), func(t *testing.T) {
			pool := newPool(t)
			var c clock
			s := open(t, pool, graphiteConfig(t, &c))
			for i := range 24 {
				if i/6 != 1 {
					mustAdd(t, s, pt("g.late", float64(10*i), float64(i)))
				}
				mustAdd(t, s, pt("g.over", float64(10*i), 3))
			}
			if flushed {
				mustFlush(t, s)
			}
			for i := 6; i < 12; i++ {
				mustAdd(t, s, pt("g.late", float64(10*i), float64(i)))
			}
			for m := range 3 {
				mustAdd(t, s, pt("g.over", float64(60*m), 6))
			}
			c.now = time.Unix(base+7*3600, 0) // the 1m archive
			for _, want := range []struct {
				name string
				vals []float64
			}{{"g.late", []float64{2.5, 8.5, 14.5, 20.5, nan}}, {"g.over", []float64{3.5, 3.5, 3.5, 3, nan}}} {
				m := fetch1(t, s, want.name, base-60, base+240)
				if m.Step != 60 {
					t.Fatalf("%s: step %d, want the 1m archive", want.name, m.Step)
				}
				n := len(m.Values)
				checkSeries(t, Series{Name: m.Name, Start: m.Start + int64(n-5)*60, Step: 60, Values: m.Values[n-5:]}, base, 60, want.vals)
			}
		})
	}
}

// TestGraphiteRestartPassedMinute (issue 27): a store restarted after a
// series passed a minute, sent a point back into that minute and then
// one into the latest minute, has the latest minute as whisper has it:
// the mean of every 10 s value stored for it, those written before the
// restart included, not of the points sent since.
func TestGraphiteRestartPassedMinute(t *testing.T) {
	pool := newPool(t)
	var c clock
	cfg := graphiteConfig(t, &c)
	s := open(t, pool, cfg)
	mustAdd(t, s, pt("g.p", 0, 1), pt("g.p", 10, 2))
	mustFlush(t, s)
	mustAdd(t, s, pt("g.p", 60, 3), pt("g.p", 70, 5))
	mustFlush(t, s)
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	s2 := open(t, pool, cfg)
	mustAdd(t, s2, pt("g.p", 20, 4))
	mustFlush(t, s2)
	if got, want := storedSlot(t, pool, "g.p", 2, 0), (1+2+4)/3.0; got != want {
		t.Errorf("stored first minute %v, want %v (the mean of 1, 2, 4)", got, want)
	}
	mustAdd(t, s2, pt("g.p", 80, 9))
	mustFlush(t, s2)
	if got, want := storedSlot(t, pool, "g.p", 2, 60), (3+5+9)/3.0; got != want {
		t.Errorf("stored second minute %v, want %v (the mean of 3, 5, 9)", got, want)
	}
	checkSeries(t, fetch1(t, s2, "g.p", base-10, base+80), base, 10, []float64{1, 2, 4, nan, nan, nan, 3, 5, 9})
}
