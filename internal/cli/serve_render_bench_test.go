package cli

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgts/pgts/internal/ingest"
	"github.com/pgts/pgts/internal/pg"
	"github.com/pgts/pgts/internal/pgtest"
	"github.com/pgts/pgts/internal/render"
	"github.com/pgts/pgts/internal/rra"
	"github.com/pgts/pgts/internal/serve"
	"github.com/pgts/pgts/internal/tsstore"
)

// BenchmarkRenderStore times the render handler over the store, in
// process, for the three requests of issue 27's render table, on the
// parity suite's archives (10s:6h,1m:7d,1h:1y, xff 0.5) holding one point
// a minute over the last 24 h: sumSeries over 1,000 series (24 h of
// one-minute slots), a glob over 100 series (6 h of ten-second slots) and
// one series (24 h), as Grafana asks (format=json, maxDataPoints=1000),
// and seriesByTag selecting 10 of 10,000 tagged series (24 h), each alone
// in its segment (fillTagged).
// The sub-benchmarks fetch and sql* split the sum: FetchWindow of the
// 1,000 series; the slot rows of their segments read one statement after
// another, drained and not decoded (sql: times and values as the store
// read them before a window within a lap of the ring left the times out,
// sqlvals: the values only, sqlnone: no array); the log shows
// the server's EXPLAIN ANALYZE of one segment's statement. The archive
// table is vacuumed after the fill, as autovacuum leaves it in service.
// Besides the time, each reports the CPU it took, which the load of a
// shared machine inflates far less: the test process' (client-ms/op)
// and the database's backends' (server-ms/op, at 10 ms resolution).
//
//	go test ./internal/cli -run '^$' -bench RenderStore -benchtime 20x -cpuprofile cpu.out
func BenchmarkRenderStore(b *testing.B) {
	ctx := context.Background()
	rule, err := rra.ParseRule(rra.RuleConfig{Regexp: ".", Step: "10s", RRAs: []string{"10s:6h:0.5", "1m:7d:0.5", "1h:1y:0.5"}})
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now().Truncate(time.Minute)
	clock := func() time.Time { return now }
	cfg := tsstore.DefaultConfig()
	cfg.Rules = []rra.Rule{rule}
	cfg.FlushInterval = time.Hour
	cfg.MaxMemory = 4 << 30
	cfg.Now = clock
	// the daemon's pool (runServe)
	pool, err := pg.NewPool(ctx, pgtest.DB(b), serve.DefaultConfig().PoolSize())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	store, err := tsstore.Open(ctx, pool, cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close(ctx) })

	var sumNames []string
	fill := func(prefix string, n int) {
		for i := range n {
			name := fmt.Sprintf("%s.s%d", prefix, i)
			if prefix == "bench.sum" {
				sumNames = append(sumNames, name)
			}
			if err := store.Add(ctx, appendBenchDay(make([]ingest.Point, 0, 1440), name, i, now)); err != nil {
				b.Fatal(err)
			}
		}
		if err := store.Flush(ctx); err != nil {
			b.Fatal(err)
		}
	}
	t0 := time.Now()
	fill("bench.sum", 1000)
	fill("bench.glob", 100)
	fillTagged(b, ctx, store, now, 10000)
	if _, err := pool.Exec(ctx, "VACUUM ANALYZE pgts.rra_data"); err != nil {
		b.Fatal(err)
	}
	b.Logf("filled 1,100 series x 1,440 points in %v", time.Since(t0).Round(time.Millisecond))

	opts := render.DefaultOptions()
	opts.Now = clock
	h, err := render.New(renderSource{store}, opts)
	if err != nil {
		b.Fatal(err)
	}
	get := func(b *testing.B, target, from string) int {
		q := url.Values{"target": {target}, "from": {from}, "until": {"now"}, "format": {"json"}, "maxDataPoints": {"1000"}}
		req := httptest.NewRequest(http.MethodGet, "/render?"+q.Encode(), nil)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK || !strings.HasPrefix(w.Body.String(), "[{") {
			b.Fatalf("%s: %d %.200s", target, w.Code, w.Body.String())
		}
		return w.Body.Len()
	}
	mix := []struct{ name, target, from string }{
		{"sum1000_24h", "sumSeries(bench.sum.*)", "-24h"},
		{"glob100_6h", "bench.glob.*", "-6h"},
		{"one_24h", "bench.glob.s7", "-24h"},
		{"glob100_24h", "bench.glob.*", "-24h"},
		{"avg100_24h", "averageSeries(bench.glob.*)", "-24h"},
		{"glob100_7d", "bench.glob.*", "-7d"},
		{"avg100_7d", "averageSeries(bench.glob.*)", "-7d"},
		{"sum1000_7d", "sumSeries(bench.sum.*)", "-7d"},
		{"tag10_24h", "seriesByTag('name=bench.tag','host=~h1[0-9]$')", "-24h"},
	}
	for _, c := range mix {
		b.Run(c.name, func(b *testing.B) {
			var n int
			m := startCPU(b, pool)
			for b.Loop() {
				n = get(b, c.target, c.from)
			}
			m.report(b)
			b.ReportMetric(float64(n), "bytes/op")
		})
	}

	// mix4: every request above from 4 clients at once, each asking
	// them in turn from its own first one (make bench-render's
	// requests/s): a round is each client asking each request once.
	b.Run("mix4", func(b *testing.B) {
		const clients = 4
		m := startCPU(b, pool)
		start := time.Now()
		for b.Loop() {
			var wg sync.WaitGroup
			for i := range clients {
				wg.Go(func() {
					for k := range mix {
						c := mix[(i+k)%len(mix)]
						get(b, c.target, c.from)
					}
				})
			}
			wg.Wait()
		}
		b.ReportMetric(float64(clients*len(mix)*b.N)/time.Since(start).Seconds(), "requests/s")
		m.report(b)
	})

	from, until := now.Add(-24*time.Hour).Unix(), now.Unix()
	b.Run("fetch", func(b *testing.B) {
		m := startCPU(b, pool)
		defer m.report(b)
		for b.Loop() {
			got, err := store.FetchWindow(ctx, sumNames, from, until, until, 1000, 0, 4000)
			if err != nil || len(got) != len(sumNames) {
				b.Fatalf("%d series, %v", len(got), err)
			}
		}
	})
	for _, q := range []struct{ name, cols string }{
		{"sql", "d.times, d.vals"},
		{"sqlvals", "d.vals"},
		{"sqlnone", "d.slot"},
	} {
		b.Run(q.name, func(b *testing.B) {
			segs := segmentsOf(b, pool, sumNames)
			m := startCPU(b, pool)
			defer m.report(b)
			for b.Loop() {
				for _, seg := range segs {
					rows, err := pool.Query(ctx, strings.Replace(benchSlotsSQL, "d.times, d.vals", q.cols, 1), seg, from, until)
					if err != nil {
						b.Fatal(err)
					}
					for rows.Next() {
						_ = rows.RawValues()
					}
					if rows.Err() != nil {
						b.Fatal(rows.Err())
					}
				}
			}
		})
	}
	segs := segmentsOf(b, pool, sumNames)
	var plan strings.Builder
	rows, err := pool.Query(ctx, "EXPLAIN (ANALYZE, BUFFERS) "+benchSlotsSQL, segs[0], from, until)
	if err != nil {
		b.Fatal(err)
	}
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			b.Fatal(err)
		}
		plan.WriteString(line + "\n")
	}
	b.Logf("one segment's slots, %d segments:\n%s", len(segs), plan.String())
}

// fillTagged registers n tagged series as make bench-render does,
// bench.tag;dc=dc<i%4>;host=h<i>, in one flush: the ten that
// seriesByTag('name=bench.tag','host=~h1[0-9]$') selects (h10 to h19)
// hold a point a minute over the 24 h before now, the others one point,
// so that, their ids in the order of their keys, each of the ten lies
// alone in its segment.
// appendBenchDay appends to pts a point a minute of series name, the
// i-th of its kind, over the day before now.
func appendBenchDay(pts []ingest.Point, name string, i int, now time.Time) []ingest.Point {
	for k := range 1440 {
		at := now.Add(-time.Duration(1440-k) * time.Minute).UnixMicro()
		pts = append(pts, ingest.Point{Name: name, Value: float64((i*7+k)%1000) / 8, Time: at})
	}
	return pts
}

func fillTagged(b *testing.B, ctx context.Context, store *tsstore.Store, now time.Time, n int) {
	var pts []ingest.Point
	for i := range n {
		name := fmt.Sprintf("bench.tag;dc=dc%d;host=h%d", i%4, i)
		if i < 10 || i > 19 {
			pts = append(pts, ingest.Point{Name: name, Value: 1, Time: now.Add(-time.Minute).UnixMicro()})
			continue
		}
		pts = appendBenchDay(pts, name, i, now)
	}
	if err := store.Add(ctx, pts); err != nil {
		b.Fatal(err)
	}
	if err := store.Flush(ctx); err != nil {
		b.Fatal(err)
	}
}

// benchSlotsSQL reads the one-minute slots of a segment over ($2, $3]
// as the store's whole-slot reads do: $1 segment.
const benchSlotsSQL = `WITH r AS (SELECT b.id, $2::int8 / 60 * 60 AS t0, (($2::int8 / 60) % b.size)::int4 AS lo, (($3::int8 / 60) % b.size)::int4 AS hi, b.size
	FROM pgts.rra_bundle b WHERE b.step_s = 60)
SELECT d.times, d.vals FROM pgts.rra_data d, r
WHERE d.bundle_id = r.id AND d.seg = $1
	AND (d.slot BETWEEN r.lo AND r.hi OR (r.lo > r.hi AND (d.slot BETWEEN r.lo AND r.size - 1 OR d.slot BETWEEN 0 AND r.hi)))`

// segmentsOf returns the segments that hold names.
func segmentsOf(b *testing.B, pool *pgxpool.Pool, names []string) []int64 {
	var segs []int64
	err := pool.QueryRow(context.Background(), `SELECT array_agg(DISTINCT id / 200) FROM pgts.metric WHERE name = ANY($1)`, names).Scan(&segs)
	if err != nil {
		b.Fatal(err)
	}
	return segs
}

// cpuMeter measures the CPU time of this process and of the backends of
// pool's database over a benchmark's loop.
type cpuMeter struct {
	pool         *pgxpool.Pool
	server       map[int32]time.Duration
	clientBefore time.Duration
}

func startCPU(b *testing.B, pool *pgxpool.Pool) *cpuMeter {
	m := &cpuMeter{pool: pool, server: backendsCPU(b, pool)}
	m.clientBefore = selfCPU()
	return m
}

// report adds client-ms/op and server-ms/op to b's figures.
func (m *cpuMeter) report(b *testing.B) {
	client := selfCPU() - m.clientBefore
	var server time.Duration
	for pid, t := range backendsCPU(b, m.pool) {
		server += t - m.server[pid] // a backend started meanwhile counts whole
	}
	b.ReportMetric(float64(client.Microseconds())/1e3/float64(b.N), "client-ms/op")
	b.ReportMetric(float64(server.Microseconds())/1e3/float64(b.N), "server-ms/op")
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// backendsCPU returns the CPU time (user and system) of each backend of
// pool's database, from /proc/PID/stat (clock ticks of 10 ms).
func backendsCPU(b *testing.B, pool *pgxpool.Pool) map[int32]time.Duration {
	var pids []int32
	err := pool.QueryRow(context.Background(), `SELECT coalesce(array_agg(pid), '{}') FROM pg_stat_activity WHERE datname = current_database()`).Scan(&pids)
	if err != nil {
		b.Fatal(err)
	}
	out := make(map[int32]time.Duration, len(pids))
	for _, pid := range pids {
		st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		s := string(st)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) < 13 {
			continue
		}
		ut, _ := strconv.ParseInt(f[11], 10, 64)
		stime, _ := strconv.ParseInt(f[12], 10, 64)
		out[pid] = time.Duration(ut+stime) * 10 * time.Millisecond
	}
	return out
}
