package tsstore

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/pgts/pgts/internal/ingest"
	"github.com/pgts/pgts/internal/rra"
)

// goldenPoints feed one series of testConfig's rule (step 10 s, heartbeat
// 20 s): the package doc's weighted mean, a gap longer than the heartbeat,
// an out-of-order and a duplicate point, and a half-unknown step.
func goldenPoints(name string) []ingest.Point {
	return []ingest.Point{
		pt(name, 0, 5),                                      // starts the clock
		pt(name, 2.5, 1), pt(name, 7.5, 3), pt(name, 10, 2), // 0.25*1 + 0.50*3 + 0.25*2 = 2.25
		pt(name, 20, 4),
		pt(name, 30, 6),
		pt(name, 75, 1), // 45 s since 30 s > heartbeat: (30, 75] unknown
		pt(name, 50, 9), // out of order
		pt(name, 75, 7), // duplicate
		pt(name, 80, 2), // (70, 80]: 5 s unknown, 5 s of 2
		pt(name, 90, 3),
	}
}

// The golden values of goldenPoints.
var (
	// 10s:1h, slots ending at 10 s ... 90 s.
	golden10s = []float64{2.25, 4, 6, nan, nan, nan, nan, 2, 3}
	// 30s:1d (wmean), slots ending at 30, 60 and 90 s:
	// (2.25+4+6)/3; all unknown; (5*2 + 10*3)/15 with 15 of 30 s unknown (xff 0.5).
	golden30s = []float64{12.25 / 3, nan, 40.0 / 15}
	// max:30s:1d.
	golden30sMax = []float64{6, nan, 3}
)

func TestGoldenArchives(t *testing.T) {
	ctx := context.Background()
	pool := newPool(t)
	var c clock
	s := open(t, pool, testConfig(t, &c))
	mustAdd(t, s, goldenPoints("a.x")...)
	mustAdd(t, s, pt("b.raw", 1, 1), pt("b.raw", 5, 3), pt("b.raw", 12, 5)) // no rule: raw only

	check := func(when string) {
		t.Helper()
		// Labelled by the start of each slot, over whisper's window.
		checkSeries(t, fetch1(t, s, "a.x", base-10, base+80), base, 10, golden10s)
		// Beyond the 1 h span of 10s:1h: the 30 s archive.
		got := fetch1(t, s, "a.x", base+100-7200, base+90)
		if got.Step != 30 || got.Start != base-7080 || len(got.Values) != 240 {
			t.Fatalf("%s: 2 h range: start %d step %d, %d values", when, got.Start-base, got.Step, len(got.Values))
		}
		checkSeries(t, Series{Name: got.Name, Start: got.Start + 236*30, Step: 30, Values: got.Values[236:239]}, base, 30, golden30s)
		for _, v := range append(got.Values[:236:236], got.Values[239]) {
			if !math.IsNaN(v) {
				t.Fatalf("%s: value %v before the first point", when, v)
			}
		}
		// Raw only: the mean of each 10 s step.
		checkSeries(t, fetch1(t, s, "b.raw", base-10, base+10), base, 10, []float64{2, 5})
	}
	check("from the cache")
	st := s.Stats()
	if st.OutOfOrder != 1 || st.Duplicate != 1 || st.Added != 14 || st.Series != 2 {
		t.Fatalf("stats: %+v", st)
	}
	mustFlush(t, s)
	check("from the database")
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	st = s.Stats()
	if st.RawStored != 14 || st.Buffered != 0 || st.Unflushed != 0 {
		t.Fatalf("stats after close: %+v", st)
	}
	// The slots as stored, through the series' position in its segment.
	var id int64
	if err := pool.QueryRow(ctx, `SELECT id FROM pgts.metric WHERE key = 'a.x'`).Scan(&id); err != nil {
		t.Fatal(err)
	}
	rows, err := pool.Query(ctx, `SELECT b.cf, pgts.rra_time(d.times, $2) - $3, pgts.rra_value(d.vals, $2)
		FROM pgts.rra_data d JOIN pgts.rra_bundle b ON b.id = d.bundle_id
		WHERE d.seg = $1 AND pgts.rra_time(d.times, $2) IS NOT NULL AND b.step_s = 30 ORDER BY 1, 2`, id/SegmentWidth, id%SegmentWidth+1, base)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]float64{}
	for rows.Next() {
		var cf string
		var at int64
		var v float64
		if err := rows.Scan(&cf, &at, &v); err != nil {
			t.Fatal(err)
		}
		got[cf] = append(got[cf], v)
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	if !sameValues(got["wmean"], golden30s) || !sameValues(got["max"], golden30sMax) {
		t.Fatalf("stored 30 s slots: %v", got)
	}
}

func TestRestartResumes(t *testing.T) {
	ctx := context.Background()
	pool := newPool(t)
	var c clock
	cfg := testConfig(t, &c)
	pts := goldenPoints("a.x")
	s := open(t, pool, cfg)
	mustAdd(t, s, pts[:5]...) // up to 20 s: slot 30 s still open, 30s archive slot open
	mustFlush(t, s)
	mustAdd(t, s, pts[5:7]...) // 30 s and 75 s, never flushed explicitly
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}

	s2 := open(t, pool, cfg)
	if got := s2.Stats().Series; got != 1 {
		t.Fatalf("reopened with %d series", got)
	}
	want := append([]float64(nil), golden10s...)
	want[7], want[8] = nan, nan // 80 s and 90 s not sent yet
	checkSeries(t, fetch1(t, s2, "a.x", base-10, base+80), base, 10, want)
	mustAdd(t, s2, pts[7:]...) // the rest, after the restart
	checkSeries(t, fetch1(t, s2, "a.x", base-10, base+80), base, 10, golden10s)
	if st := s2.Stats(); st.OutOfOrder != 1 || st.Duplicate != 1 {
		t.Fatalf("after restart the state was not resumed: %+v", st)
	}
	if err := s2.Close(ctx); err != nil {
		t.Fatal(err)
	}
	s3 := open(t, pool, cfg)
	checkSeries(t, fetch1(t, s3, "a.x", base-10, base+80), base, 10, golden10s)
	got := fetch1(t, s3, "a.x", base+100-7200, base+90)
	checkSeries(t, Series{Name: got.Name, Start: got.Start + 236*30, Step: 30, Values: got.Values[236:239]}, base, 30, golden30s)
	var raw int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pgts.raw_points WHERE name = 'a.x'`).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if raw != len(pts) {
		t.Fatalf("%d raw points stored, want %d", raw, len(pts))
	}
}

// Defect 1 and 7: the window, archive and labels of whisper's
// file_fetch, for relative and absolute ranges; a long range reads the
// coarse archive.
func TestArchiveWindow(t *testing.T) {
	sch, err := func() (*rra.Schema, error) {
		r := rule(t, ".", "10s", "", "10s:6h", "1m:7d", "1h:1y")
		return r.Schema()
	}()
	if err != nil {
		t.Fatal(err)
	}
	const now = 1_000_000_005 // not aligned to any step
	h := int64(3600)
	for _, c := range []struct {
		name        string
		from, until int64
		archive     int
		start, n    int64
		ok          bool
	}{
		// from=-1h: fromInterval = from - from%10 + 10, untilInterval
		// = now - now%10 + 10.
		{"last hour", now - h, now, 0, 1_000_000_000 - h + 10, 360, true},
		{"6 h exactly", now - 6*h, now, 0, 1_000_000_000 - 6*h + 10, 6 * 360, true},
		{"6 h and a second: 1m", now - 6*h - 1, now, 1, 999_978_360 + 60, 360, true},
		{"aligned absolute range", 999_996_400, 999_996_460, 0, 999_996_410, 6, true},
		{"zero length: one value", 999_996_400, 999_996_400, 0, 999_996_410, 1, true},
		{"a day: 1m", now - 24*h, now, 1, 999_913_560 + 60, 1440, true},
		{"2 years: clamped to 1y of 1h", now - 2*365*24*h, now, 2, 968_464_800, 8760, true},
		{"until in the future: clamped", now - h, now + h, 0, 1_000_000_000 - h + 10, 360, true},
		{"from in the future: nothing", now + 10, now + h, 0, 0, 0, false},
		{"before every span: nothing", now - 3*365*24*h, now - 2*365*24*h, 0, 0, 0, false},
	} {
		w, ok := archiveWindow(sch, now, c.from, c.until)
		if ok != c.ok || (ok && (w.res.archive != c.archive || w.start != c.start || w.n != c.n)) {
			t.Errorf("%s: got %+v %v, want archive %d start %d n %d %v", c.name, w, ok, c.archive, c.start, c.n, c.ok)
		}
	}
	// Raw only: whisper's window at the raw step, widened past the limit.
	if w, ok := rawWindow(10, 0, now, now-24*h, now, 1000); !ok || w.res.step != 90 || w.n > 1000 {
		t.Errorf("raw day at most 1000 values: %+v %v", w, ok)
	}
	if w, ok := rawWindow(10, 0, now, now-h, now, maxFetchValues); !ok || w.res.step != 10 || w.n != 360 {
		t.Errorf("raw hour: %+v %v", w, ok)
	}
}

func TestFind(t *testing.T) {
	pool := newPool(t)
	var c clock
	s := open(t, pool, testConfig(t, &c))
	for _, n := range []string{"a.web1.cpu", "a.web1.mem", "a.web2.cpu", "a.db1.cpu", "a.web1", "a.web10.cpu.user"} {
		mustAdd(t, s, pt(n, 0, 1))
	}
	mustAdd(t, s, ingest.Point{Name: "a.tagged", Tags: []ingest.Tag{{Key: "dc", Value: "x"}}, Time: base * 1e6, Value: 1})
	// tagged series stand outside the tree, as in graphite-web: neither a
	// leaf nor a branch of any pattern
	mustAdd(t, s, ingest.Point{Name: "tg.cpu", Tags: []ingest.Tag{{Key: "dc", Value: "x"}}, Time: base * 1e6, Value: 1})
	ctx := context.Background()
	for _, c := range []struct {
		pattern string
		want    []Node
	}{
		{"a", []Node{{"a", false}}},
		{"a.*", []Node{{"a.db1", false}, {"a.web1", false}, {"a.web1", true}, {"a.web10", false}, {"a.web2", false}}},
		{"a.web?", []Node{{"a.web1", false}, {"a.web1", true}, {"a.web2", false}}},
		{"a.web[2-9].*", []Node{{"a.web2.cpu", true}}},
		{"a.web[!1].*", []Node{{"a.web2.cpu", true}}},
		{"a.{web1,db1}.cpu", []Node{{"a.db1.cpu", true}, {"a.web1.cpu", true}}},
		{"a.{web*,x}.c*", []Node{{"a.web1.cpu", true}, {"a.web10.cpu", false}, {"a.web2.cpu", true}}},
		{"a.*.*.*", []Node{{"a.web10.cpu.user", true}}},
		{"b.*", nil},
		{"tg", nil},
		{"tg.*", nil},
	} {
		got, err := s.Find(ctx, c.pattern)
		if err != nil {
			t.Fatalf("%s: %v", c.pattern, err)
		}
		if len(got) != len(c.want) {
			t.Errorf("%s: got %v, want %v", c.pattern, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%s: got %v, want %v", c.pattern, got, c.want)
				break
			}
		}
	}
	for _, bad := range []string{"", "a.{b", "a.[b", "a.{b.c}", "a.[z-a]"} {
		if _, err := s.Find(ctx, bad); !errors.Is(err, ErrPattern) {
			t.Errorf("%q: got %v, want ErrPattern", bad, err)
		}
	}
}

func TestConcurrentAdd(t *testing.T) {
	ctx := context.Background()
	pool := newPool(t)
	var c clock
	cfg := testConfig(t, &c)
	cfg.FlushInterval = 20 * time.Millisecond
	reg := prometheus.NewRegistry()
	cfg.Registerer = reg
	s := open(t, pool, cfg)
	const writers, perWriter, nSeries = 4, 50, 100
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				batch := make([]ingest.Point, 0, nSeries)
				for _, n := range names(nSeries, "a.s%d") {
					// Writers interleave in time: some points come out of order.
					batch = append(batch, pt(n, float64(i*writers+w), float64(w)))
				}
				if err := s.Add(ctx, batch); err != nil {
					t.Error(err)
					return
				}
				if i%10 == 0 {
					if _, err := s.Fetch(ctx, []string{"a.s1"}, base, base+300, 0); err != nil {
						t.Error(err)
					}
				}
			}
		}()
	}
	wg.Wait()
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	st := s.Stats()
	total := int64(writers * perWriter * nSeries)
	if st.Added != total || st.RawStored != total || st.Series != nSeries {
		t.Fatalf("stats: %+v, want %d points", st, total)
	}
	var raw int64
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM raw_points`).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if raw != total {
		t.Fatalf("%d raw rows, want %d", raw, total)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	if len(mfs) != 0 {
		t.Fatalf("%d metric families registered after Close", len(mfs))
	}
}

func TestTryAddFull(t *testing.T) {
	pool := newPool(t)
	var c clock
	cfg := testConfig(t, &c)
	cfg.MaxMemory = minMemory
	s := open(t, pool, cfg)
	pts := make([]ingest.Point, 5000)
	for i, n := range names(len(pts), "a.full%d") {
		pts[i] = pt(n, 0, 1)
	}
	n, err := s.TryAdd(pts)
	if !errors.Is(err, ErrFull) || n == 0 || n == len(pts) {
		t.Fatalf("TryAdd took %d of %d: %v", n, len(pts), err)
	}
	st := s.Stats()
	if st.PeakBytes > st.MaxMemory || st.Full != int64(len(pts)-n) {
		t.Fatalf("stats: %+v", st)
	}
	// A flush frees the buffers; the series themselves stay.
	mustFlush(t, s)
	if after := s.Stats().Bytes; after >= st.Bytes {
		t.Fatalf("flush freed nothing: %d bytes before, %d after", st.Bytes, after)
	}
}

func TestSetRules(t *testing.T) {
	pool := newPool(t)
	var c clock
	cfg := testConfig(t, &c)
	cfg.Raw = nil
	s := open(t, pool, cfg)
	mustAdd(t, s, pt("b.x", 0, 1))
	if st := s.Stats(); st.Unmatched != 1 || st.Series != 0 {
		t.Fatalf("stats: %+v", st)
	}
	if err := s.SetRules([]rra.Rule{rule(t, `^b\.`, "1m", "", "1m:1d")}); err != nil {
		t.Fatal(err)
	}
	mustAdd(t, s, pt("b.x", 0, 1), pt("a.y", 0, 1))
	if st := s.Stats(); st.Unmatched != 2 || st.Series != 1 {
		t.Fatalf("stats: %+v", st)
	}
	if err := s.SetRules([]rra.Rule{{}}); err == nil {
		t.Fatal("a rule without a pattern was accepted")
	}
}

// FetchAt picks the archive as of the request's now, not the store's
// clock, as graphite-web's whisper reads do with a now parameter: an hour
// before a now ten minutes ago is inside the 10 s archive's hour, while
// the same from read as of the clock is older than that and falls to 30 s.
func TestFetchAtRequestNow(t *testing.T) {
	pool := newPool(t)
	var c clock
	s := open(t, pool, testConfig(t, &c))
	mustAdd(t, s, pt("a.now", -1200, 1), pt("a.now", -1190, 2))
	ctx := context.Background()
	now := c.now.Unix() - 600
	from, until := now-3600, now
	at, err := s.FetchAt(ctx, []string{"a.now"}, from, until, now, 0)
	if err != nil {
		t.Fatal(err)
	}
	clk, err := s.Fetch(ctx, []string{"a.now"}, from, until, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(at) != 1 || at[0].Step != 10 {
		t.Fatalf("FetchAt as of now-600: %+v, want one series of step 10", at)
	}
	known := 0
	for _, v := range at[0].Values {
		if !math.IsNaN(v) {
			known++
		}
	}
	if known == 0 {
		t.Errorf("FetchAt as of now-600 read no value of the points 20 minutes before the clock")
	}
	if len(clk) != 1 || clk[0].Step != 30 {
		t.Fatalf("Fetch as of the clock: %+v, want one series of step 30", clk)
	}
}

// TestSchemaOfRuleIsRemembered: a new series finds its rule's shared
// schema without building the schema's identity text again (at a
// million new series that formatting was 12% of the daemon's CPU while
// they arrived), and a rule set replaced by SetRules is looked up anew.
func TestSchemaOfRuleIsRemembered(t *testing.T) {
	pool := newPool(t)
	c := &clock{now: time.Unix(1_700_000_000, 0)}
	s := open(t, pool, testConfig(t, c))
	rules := *s.rules.Load()
	r := &rules[0]
	si := s.schemaOf(r)
	if n := testing.AllocsPerRun(100, func() {
		if s.schemaOf(r) != si {
			t.Fatal("another schemaInfo for the same rule")
		}
	}); n != 0 {
		t.Errorf("finding a rule's schema allocates %v times; want 0", n)
	}
	if err := s.SetRules([]rra.Rule{rule(t, `^b\.`, "1m", "", "1m:1d")}); err != nil {
		t.Fatal(err)
	}
	nr := *s.rules.Load()
	if got := s.schemaOf(&nr[0]); got == si || got.rule != `^b\.` {
		t.Errorf("after SetRules: schema of rule %q", got.rule)
	}
}
