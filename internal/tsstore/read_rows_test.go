package tsstore

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgts/pgts/internal/ingest"
	"github.com/pgts/pgts/internal/pgtest"
	"github.com/pgts/pgts/internal/rra"
)

// archiveReads counts the statements that read pgts.rra_data and the
// rows they returned, and keeps the last one's text and arguments.
type archiveReads struct {
	mu               sync.Mutex
	statements, rows int64
	sql              string
	args             []any
}

// archiveReadKey marks the context of an archive read.
type archiveReadKey struct{}

func (a *archiveReads) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if strings.HasPrefix(strings.TrimSpace(d.SQL), "SELECT") && strings.Contains(d.SQL, "pgts.rra_data") {
		a.mu.Lock()
		a.sql, a.args = d.SQL, d.Args
		a.mu.Unlock()
		return context.WithValue(ctx, archiveReadKey{}, true)
	}
	return ctx
}

func (a *archiveReads) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryEndData) {
	if ctx.Value(archiveReadKey{}) == nil || d.Err != nil {
		return
	}
	a.mu.Lock()
	a.statements++
	a.rows += d.CommandTag.RowsAffected()
	a.mu.Unlock()
}

// TraceBatchStart, TraceBatchQuery and TraceBatchEnd count the archive
// reads of a batch.
func (a *archiveReads) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}

func (a *archiveReads) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	if !strings.HasPrefix(strings.TrimSpace(d.SQL), "SELECT") || !strings.Contains(d.SQL, "pgts.rra_data") || d.Err != nil {
		return
	}
	a.mu.Lock()
	a.sql, a.args = d.SQL, d.Args
	a.statements++
	a.rows += d.CommandTag.RowsAffected()
	a.mu.Unlock()
}

func (a *archiveReads) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

func (a *archiveReads) take() (statements, rows int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	statements, rows = a.statements, a.rows
	a.statements, a.rows = 0, 0
	return statements, rows
}

// tracedPool is a pool on a fresh database whose archive reads are
// counted.
func tracedPool(t *testing.T) (*pgxpool.Pool, *archiveReads) {
	t.Helper()
	newPool(t) // the goroutine check, and a fresh database
	cfg, err := pgxpool.ParseConfig(pgtest.DB(t))
	if err != nil {
		t.Fatal(err)
	}
	tr := &archiveReads{}
	cfg.ConnConfig.Tracer = tr
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return pool, tr
}

// TestFetchScatteredRows: a Fetch of one series of a segment, or of a few
// scattered ones, returns one row per series (its slots aggregated by the
// server), not one per series and slot; of more series, or of a few
// neighbours, one row per slot cut to the positions from the first asked
// for to the last; the values are each series' own.
func TestFetchScatteredRows(t *testing.T) {
	ctx := context.Background()
	c := &clock{now: time.Unix(base+3600, 0)}
	cfg := testConfig(t, c)
	cfg.Raw = nil
	cfg.Rules = []rra.Rule{rule(t, `.`, "60s", "", "60s:30m")}
	pool, tr := tracedPool(t)
	s := open(t, pool, cfg)
	const n, slots = 200, 55 // the ring of 30 slots wraps
	var pts []ingest.Point
	for i := range n {
		for k := range slots {
			pts = append(pts, ingest.Point{Name: fmt.Sprintf("r.s%03d", i), Value: float64(i*1000 + k), Time: (base + int64(k)*60) * 1e6})
		}
	}
	c.now = time.Unix(base+int64(slots)*60, 0)
	mustAdd(t, s, pts...)
	mustFlush(t, s)
	for _, tc := range []struct {
		idx      []int
		from, to int64 // minutes after base
		rows     int64
	}{
		{[]int{7}, 40, 54, 1},
		{[]int{7}, 20, 54, 1},
		{[]int{3, 90, 170}, 40, 54, 3},
		{[]int{3, 90, 170}, 25, 54, 3},
		{[]int{21, 20, 22}, 40, 54, 14},
		{[]int{50, 60, 70, 80, 90, 100, 110, 120}, 40, 54, 14},
		{[]int{120, 50, 110, 70, 80, 90, 100, 60, 50}, 30, 54, 24},
	} {
		names := make([]string, len(tc.idx))
		for j, i := range tc.idx {
			names[j] = fmt.Sprintf("r.s%03d", i)
		}
		tr.take()
		got, err := s.Fetch(ctx, names, base+tc.from*60, base+tc.to*60, 0)
		if err != nil {
			t.Fatal(err)
		}
		statements, rows := tr.take()
		if statements != 1 || rows != tc.rows {
			t.Errorf("%v over minutes %d-%d: %d statements, %d rows; want 1 statement, %d rows", tc.idx, tc.from, tc.to, statements, rows, tc.rows)
		}
		if len(got) != len(tc.idx) {
			t.Fatalf("%d series, want %d", len(got), len(tc.idx))
		}
		for j, i := range tc.idx {
			sr := got[j]
			known := 0
			for v, val := range sr.Values {
				k := (sr.Start-base)/60 + int64(v)
				want := float64(i*1000) + float64(k)
				if k < slots-30 || k >= slots {
					want = nan
				} else {
					known++
				}
				if !sameValues([]float64{val}, []float64{want}) {
					t.Fatalf("%s at minute %d: %v, want %v", sr.Name, k, val, want)
				}
			}
			if known == 0 {
				t.Fatalf("%s: no value known over minutes %d-%d", sr.Name, tc.from, tc.to)
			}
		}
	}
}

// TestReadPositionsGenericPlan: the plan a prepared sqlReadPositions
// runs after its fifth execution (generic) reads the segment's rows by
// the index, one scan per range of slots, and never copies them into a
// Materialize node, as the generic plan of a join with the positions did
// (4.6 MB of temporary file for one series over a day).
func TestReadPositionsGenericPlan(t *testing.T) {
	ctx := context.Background()
	c := &clock{now: time.Unix(base+1440*60, 0)}
	cfg := testConfig(t, c)
	cfg.Raw = nil
	cfg.Rules = []rra.Rule{rule(t, `.`, "60s", "", "60s:1d")}
	pool := newPool(t)
	s := open(t, pool, cfg)
	var pts []ingest.Point
	for i := range 3 {
		for k := range 1440 {
			pts = append(pts, ingest.Point{Name: fmt.Sprintf("g.s%d", i), Value: float64(k), Time: (base + int64(k)*60) * 1e6})
		}
	}
	mustAdd(t, s, pts...)
	mustFlush(t, s)
	if _, err := pool.Exec(ctx, "ANALYZE pgts.rra_data"); err != nil {
		t.Fatal(err)
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	for _, q := range []string{"SET plan_cache_mode = force_generic_plan", "PREPARE rp AS " + sqlReadPositions} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	plan := pgtestRows(t, conn.Conn(), "EXPLAIN EXECUTE rp(1, 0, '{2}', 0, 1439, -1, -1)")
	if _, err := conn.Exec(ctx, "DEALLOCATE rp; RESET plan_cache_mode"); err != nil {
		t.Fatal(err)
	}
	text := strings.Join(plan, "\n")
	if strings.Contains(text, "Materialize") || strings.Count(text, "Index Scan using rra_data_pkey on rra_data") != 2 {
		t.Fatalf("generic plan:\n%s", text)
	}
}

// TestFetchOnePositionNarrowRows: the statement a Fetch of one series
// sends (one of a full segment, over a day of one-minute slots), or of a
// few scattered ones (seriesByTag's), takes the 16 bytes of each position
// out of each 3.2 KB row in the scan: no node of its plan, custom or
// generic, handles rows wider than 64 bytes (the former statement
// expanded each row with the positions asked for, 3,212 bytes a row, and
// aggregated by position, which cost the server 1.4–2 times as much,
// BenchmarkFetchOne). The values are the series'.
func TestFetchOnePositionNarrowRows(t *testing.T) {
	ctx := context.Background()
	c := &clock{now: time.Unix(base+1440*60, 0)}
	cfg := testConfig(t, c)
	cfg.Raw = nil
	cfg.Rules = []rra.Rule{rule(t, `.`, "60s", "", "60s:7d")}
	pool, tr := tracedPool(t)
	s := open(t, pool, cfg)
	var pts []ingest.Point
	for i := range 200 {
		for k := range 1440 {
			pts = append(pts, ingest.Point{Name: fmt.Sprintf("w.s%03d", i), Value: float64(i*10000 + k), Time: (base + int64(k)*60) * 1e6})
		}
	}
	mustAdd(t, s, pts...)
	mustFlush(t, s)
	if _, err := pool.Exec(ctx, "VACUUM ANALYZE pgts.rra_data"); err != nil {
		t.Fatal(err)
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	for _, idx := range [][]int{{107}, {3, 90, 170}} {
		names := make([]string, len(idx))
		for j, i := range idx {
			names[j] = fmt.Sprintf("w.s%03d", i)
		}
		tr.take()
		got, err := s.Fetch(ctx, names, base, base+1440*60, 0)
		if err != nil {
			t.Fatal(err)
		}
		// two statements, each half the day (TestFetchOneSeriesHalves)
		if statements, rows := tr.take(); statements != 2 || rows != 2*int64(len(idx)) {
			t.Errorf("%v: %d statements, %d rows; want 2 statements, %d rows", idx, statements, rows, 2*len(idx))
		}
		if len(got) != len(idx) {
			t.Fatalf("%v: got %d series", idx, len(got))
		}
		for j, i := range idx {
			if len(got[j].Values) != 1440 {
				t.Fatalf("%s: %d values", got[j].Name, len(got[j].Values))
			}
			for k, v := range got[j].Values {
				// the window's first value is labelled a step after from
				want := float64(i*10000 + k + 1)
				if k == 1439 {
					want = nan
				}
				if !sameValues([]float64{v}, []float64{want}) {
					t.Fatalf("%s value %d: %v, want %v", got[j].Name, k, v, want)
				}
			}
		}
		tr.mu.Lock()
		sql, args := tr.sql, tr.args
		tr.mu.Unlock()
		lits := make([]string, len(args))
		for i, a := range args {
			switch a := a.(type) {
			case []int32:
				lits[i] = "'{" + strings.ReplaceAll(strings.Trim(fmt.Sprint(a), "[]"), " ", ",") + "}'"
			default:
				lits[i] = fmt.Sprint(a)
			}
		}
		execute := "EXECUTE one(" + strings.Join(lits, ", ") + ")"
		if _, err := conn.Exec(ctx, "PREPARE one AS "+sql); err != nil {
			t.Fatal(err)
		}
		for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
			if _, err := conn.Exec(ctx, "SET plan_cache_mode = "+mode); err != nil {
				t.Fatal(err)
			}
			var plan []map[string]any
			if err := conn.QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+execute).Scan(&plan); err != nil {
				t.Fatal(err)
			}
			if w := widestNode(plan[0]["Plan"].(map[string]any)); w > 64 {
				text := pgtestRows(t, conn.Conn(), "EXPLAIN "+execute)
				t.Errorf("%v, %s: a node of the plan handles rows of %v bytes:\n%s", idx, mode, w, strings.Join(text, "\n"))
			}
		}
		if _, err := conn.Exec(ctx, "DEALLOCATE one; RESET plan_cache_mode"); err != nil {
			t.Fatal(err)
		}
	}
}

// widestNode is the widest "Plan Width" of a plan node of EXPLAIN
// (FORMAT JSON) and of the nodes below it.
func widestNode(n map[string]any) float64 {
	w, _ := n["Plan Width"].(float64)
	subs, _ := n["Plans"].([]any)
	for _, sub := range subs {
		if m, ok := sub.(map[string]any); ok {
			w = max(w, widestNode(m))
		}
	}
	return w
}

func pgtestRows(t *testing.T, conn *pgx.Conn, q string) []string {
	t.Helper()
	rows, err := conn.Query(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		out = append(out, line)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestFetchOneSeriesHalves: a Fetch whose archive reads are one group of
// few positions over a long range of slots (one series over a day of
// one-minute slots, the render API's single-series request) reads it
// with two statements, each half the slots, which run at once on two
// connections; over a short range, with one statement. The values are
// the series' own, when the window wraps the ring (60s:1d) and when it
// does not (60s:7d).
func TestFetchOneSeriesHalves(t *testing.T) {
	ctx := context.Background()
	for _, archive := range []string{"60s:1d", "60s:7d"} {
		t.Run(archive, func(t *testing.T) {
			c := &clock{now: time.Unix(base+1440*60, 0)}
			cfg := testConfig(t, c)
			cfg.Raw = nil
			cfg.Rules = []rra.Rule{rule(t, `.`, "60s", "", archive)}
			pool, tr := tracedPool(t)
			s := open(t, pool, cfg)
			var pts []ingest.Point
			for i := range 200 { // a segment; series 3 and 150 hold the day
				for k := range 1440 {
					if i == 3 || i == 150 || k == 1439 {
						pts = append(pts, ingest.Point{Name: fmt.Sprintf("h.s%03d", i), Value: float64(i*10000 + k), Time: (base + int64(k)*60) * 1e6})
					}
				}
			}
			mustAdd(t, s, pts...)
			mustFlush(t, s)
			for _, tc := range []struct {
				idx              []int
				from, to         int64 // minutes after base
				statements, rows int64
			}{
				{[]int{3}, 0, 1440, 2, 2},
				{[]int{3, 150}, 0, 1440, 2, 4},
				{[]int{3}, 1430, 1440, 1, 1},
			} {
				names := make([]string, len(tc.idx))
				for j, i := range tc.idx {
					names[j] = fmt.Sprintf("h.s%03d", i)
				}
				tr.take()
				got, err := s.Fetch(ctx, names, base+tc.from*60, base+tc.to*60, 0)
				if err != nil {
					t.Fatal(err)
				}
				if statements, rows := tr.take(); statements != tc.statements || rows != tc.rows {
					t.Errorf("%v over minutes %d-%d: %d statements, %d rows; want %d, %d", tc.idx, tc.from, tc.to, statements, rows, tc.statements, tc.rows)
				}
				if len(got) != len(tc.idx) {
					t.Fatalf("%d series, want %d", len(got), len(tc.idx))
				}
				for j, i := range tc.idx {
					sr := got[j]
					if want := tc.to - tc.from; int64(len(sr.Values)) != want {
						t.Fatalf("%s: %d values, want %d", sr.Name, len(sr.Values), want)
					}
					for v, val := range sr.Values {
						k := (sr.Start-base)/60 + int64(v)
						want := float64(i*10000) + float64(k)
						if k >= 1440 {
							want = nan
						}
						if !sameValues([]float64{val}, []float64{want}) {
							t.Fatalf("%s at minute %d: %v, want %v", sr.Name, k, val, want)
						}
					}
				}
			}
		})
	}
}

// TestReadPositionsNoCustomPlans: the reads of one series run the
// generic plan of sqlReadPositions from their first execution on each
// connection, where PostgreSQL would plan the first five for their
// parameters (0.2–0.4 ms each, most of the executions of a pool of
// several connections): no connection of the pool has made a custom
// plan of it.
func TestReadPositionsNoCustomPlans(t *testing.T) {
	ctx := context.Background()
	c := &clock{now: time.Unix(base+1440*60, 0)}
	cfg := testConfig(t, c)
	cfg.Raw = nil
	cfg.Rules = []rra.Rule{rule(t, `.`, "60s", "", "60s:1d")}
	pool, tr := tracedPool(t)
	s := open(t, pool, cfg)
	var pts []ingest.Point
	for k := range 1440 {
		pts = append(pts, ingest.Point{Name: "g.one", Value: float64(k), Time: (base + int64(k)*60) * 1e6})
	}
	mustAdd(t, s, pts...)
	mustFlush(t, s)
	tr.take()
	for range 4 {
		for _, from := range []int64{0, 1380} { // a day (two halves) and an hour
			got, err := s.Fetch(ctx, []string{"g.one"}, base+from*60, base+1440*60, 0)
			if err != nil || len(got) != 1 {
				t.Fatalf("%d series, %v", len(got), err)
			}
		}
	}
	if statements, _ := tr.take(); statements != 12 {
		t.Fatalf("%d archive reads, want 12", statements)
	}
	conns := pool.AcquireAllIdle(ctx)
	defer func() {
		for _, c := range conns {
			c.Release()
		}
	}()
	var custom, generic int64
	for _, c := range conns {
		var cu, ge int64
		if err := c.QueryRow(ctx, `SELECT coalesce(sum(custom_plans), 0)::int8, coalesce(sum(generic_plans), 0)::int8 FROM pg_prepared_statements WHERE statement = $1`, sqlReadPositions).Scan(&cu, &ge); err != nil {
			t.Fatal(err)
		}
		custom, generic = custom+cu, generic+ge
	}
	if custom != 0 || generic != 12 {
		t.Fatalf("%d custom and %d generic plans of the position reads over %d connections, want 0 and 12", custom, generic, len(conns))
	}
}
