package rollup

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgts/pgts/internal/copyload"
	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pg"
	"github.com/pgts/pgts/internal/records"
)

// The differential test: random interleavings of writes of every kind
// (INSERT and COPY into the table and straight into its partitions, like
// pgts load; backfills into old buckets; UPDATE moving rows across
// buckets and partitions; DELETE), retention drops, refreshes and
// refreshes killed with SIGKILL in a child process. After each refresh
// every rollup, and its real-time view, must equal GROUP BY over the raw
// rows for every bucket whose raw rows are still present, and must not
// have changed in the buckets frozen by retention.

const (
	childEnv    = "PGTS_ROLLUP_CHILD"    // database URL: refresh all rollups in this process
	childAtEnv  = "PGTS_ROLLUP_CHILD_AT" // block before the n-th commit (after printing "ready")
	childNowEnv = "PGTS_ROLLUP_CHILD_NOW"
	// database URL: run pgts' loader into raw in this process, printing
	// "loading" once a batch committed (its parent kills it then)
	childLoadEnv = "PGTS_ROLLUP_CHILD_LOAD"
)

func init() {
	if os.Getenv(childEnv) != "" {
		os.Exit(childRefresh())
	}
	if os.Getenv(childLoadEnv) != "" {
		os.Exit(childLoad())
	}
}

// childLoad loads rows of random times into raw with pgts' loader, small
// batches on 2 workers, until it is killed.
func childLoad() int {
	ctx := context.Background()
	pool, err := pg.NewPool(ctx, os.Getenv(childLoadEnv), 4)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	nowUs, _ := strconv.ParseInt(os.Getenv(childNowEnv), 10, 64)
	now := time.UnixMicro(nowUs).UTC()
	m := partition.NewManager(pool, nil, func() time.Time { return now })
	w := &world{rnd: rand.New(rand.NewPCG(uint64(nowUs), 7)), c: &clock{t: now}}
	var in strings.Builder
	for _, r := range w.randRows(20000, w.randTime) {
		fmt.Fprintf(&in, "%s,%d,%v,%v\n", r[0].(time.Time).Format(time.RFC3339Nano), r[1], r[2], r[3])
	}
	opts := records.DefaultOptions(records.CSV)
	rd, err := records.NewReader(strings.NewReader(strings.ReplaceAll(in.String(), "<nil>", "")), opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	target, err := copyload.LookupTarget(ctx, pool, m, "raw")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cfg := copyload.DefaultConfig()
	cfg.BatchRows, cfg.Workers, cfg.Now = 50, 2, func() time.Time { return now }
	var once sync.Once
	cfg.OnBatch = func(copyload.BatchInfo) { once.Do(func() { fmt.Println("loading") }) }
	l, err := copyload.New(pool, m, target, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if _, err := l.Run(ctx, &copyload.FileSource{Inputs: []copyload.Input{{Name: "in.csv", Reader: rd}}, Columns: []int{0, 1, 2, 3}}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("done")
	return 0
}

// childRefresh refreshes every rollup in small transactions and stops
// dead before the n-th commit, printing "ready" for its parent to kill it.
func childRefresh() int {
	ctx := context.Background()
	pool, err := pg.NewPool(ctx, os.Getenv(childEnv), 4)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	nowUs, _ := strconv.ParseInt(os.Getenv(childNowEnv), 10, 64)
	at, _ := strconv.Atoi(os.Getenv(childAtEnv))
	m := partition.NewManager(pool, nil, func() time.Time { return time.UnixMicro(nowUs).UTC() })
	cfg := DefaultConfig(pool, m, nil)
	cfg.PairsPerTx, cfg.BucketsPerTx = 2, 1
	n := 0
	cfg.BeforeCommit = func() {
		if n++; n == at {
			fmt.Println("ready")
			select {} // killed here, its transaction open
		}
	}
	rs, err := New(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	list, err := rs.List(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for _, r := range list {
		if _, err := rs.Refresh(ctx, r); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	fmt.Println("done")
	return 0
}

type world struct {
	t         *testing.T
	ctx       context.Context
	rnd       *rand.Rand
	c         *clock
	pool      *pgxpool.Pool
	m         *partition.Manager
	rs        *Rollups
	url       string
	raw       *partition.Table
	prev      map[string]result // per check: the last result seen
	kill      int               // refreshes killed
	loadKills int               // loads killed
	runs      int               // checks
}

func (w *world) ensureWindow() {
	var times []int64
	for d := -5; d <= 1; d++ {
		times = append(times, w.c.t.Add(time.Duration(d)*24*time.Hour).UnixMicro())
	}
	times[0] = w.c.t.Add(-5*24*time.Hour + time.Minute).UnixMicro()
	if _, err := w.m.Ensure(w.ctx, w.raw, times); err != nil {
		w.t.Fatal(err)
	}
}

// randTime is a time in the accepted window: mostly the last hours, often
// days back (a backfill).
func (w *world) randTime() time.Time {
	var back time.Duration
	if w.rnd.IntN(3) == 0 {
		back = time.Duration(w.rnd.Int64N(int64(5*24*time.Hour - time.Hour)))
	} else {
		back = time.Duration(w.rnd.Int64N(int64(6 * time.Hour)))
	}
	t := w.c.t.Add(-back).Add(30 * time.Minute).Truncate(time.Microsecond)
	return t.Add(time.Duration(w.rnd.IntN(1000)) * time.Microsecond)
}

func (w *world) randRows(n int, at func() time.Time) [][]any {
	rows := make([][]any, n)
	for i := range rows {
		var v, wv any
		if w.rnd.IntN(10) > 0 {
			v = w.rnd.NormFloat64() * 100
		}
		if w.rnd.IntN(8) > 0 {
			wv = int32(w.rnd.IntN(1000))
		}
		rows[i] = []any{at(), int32(w.rnd.IntN(6)), v, wv}
	}
	return rows
}

var rawCols = []string{"time", "device", "v", "w"}

// leaf picks an existing time partition, and a time in it.
func (w *world) leaf() (string, func() time.Time) {
	parts, err := w.m.Partitions(w.ctx, w.raw)
	if err != nil {
		w.t.Fatal(err)
	}
	p := parts[w.rnd.IntN(len(parts))]
	return p.Name, func() time.Time {
		return time.UnixMicro(p.Lo + w.rnd.Int64N(p.Hi-p.Lo)).UTC()
	}
}

func (w *world) step() string {
	switch op := w.rnd.IntN(14); op {
	case 0, 1:
		rows := w.randRows(1+w.rnd.IntN(40), w.randTime)
		for _, r := range rows {
			execSQL(w.t, w.pool, `INSERT INTO raw VALUES ($1, $2, $3, $4)`, r...)
			if w.rnd.IntN(4) == 0 {
				break
			}
		}
		return "insert"
	case 2:
		_, err := w.pool.CopyFrom(w.ctx, pgx.Identifier{"raw"}, rawCols, pgx.CopyFromRows(w.randRows(1+w.rnd.IntN(200), w.randTime)))
		if err != nil {
			w.t.Fatal(err)
		}
		return "copy"
	case 4:
		if w.rnd.IntN(3) == 0 {
			return w.killedLoad()
		}
		return w.load()
	case 3:
		// COPY straight into the partition by someone else (its
		// statement trigger records the partition's whole range)
		name, at := w.leaf()
		err := pgx.BeginFunc(w.ctx, w.pool, func(tx pgx.Tx) error {
			_, err := tx.CopyFrom(w.ctx, pgx.Identifier{"public", name}, rawCols, pgx.CopyFromRows(w.randRows(1+w.rnd.IntN(300), at)))
			return err
		})
		if err != nil {
			w.t.Fatal(err)
		}
		return "copy into " + name
	case 5:
		name, at := w.leaf()
		rows := w.randRows(1+w.rnd.IntN(20), at)
		for _, r := range rows {
			execSQL(w.t, w.pool, `INSERT INTO `+pg.QuoteIdent(name)+` VALUES ($1, $2, $3, $4)`, r...)
		}
		return "insert into " + name
	case 6, 7:
		from := w.randTime()
		shift := time.Duration(w.rnd.IntN(180)-90) * time.Minute
		lo := w.c.t.Add(-5*24*time.Hour + 2*time.Hour)
		execSQL(w.t, w.pool, `UPDATE raw SET v = v * 1.5 + 1, w = w + 1, time = greatest(least(time + $4 * interval '1 second', $5::timestamptz), $6::timestamptz)
			WHERE device = $1 AND time >= $2 AND time < $3`, int32(w.rnd.IntN(6)), from, from.Add(3*time.Hour), shift.Seconds(),
			w.c.t.Add(24*time.Hour), lo)
		return "update"
	case 8:
		from := w.randTime()
		execSQL(w.t, w.pool, `DELETE FROM raw WHERE device = $1 AND time >= $2 AND time < $3`, int32(w.rnd.IntN(6)), from, from.Add(2*time.Hour))
		return "delete"
	case 9:
		w.c.t = w.c.t.Add(time.Duration(w.rnd.IntN(7*60)) * time.Minute)
		w.ensureWindow()
		dropped, err := w.m.ApplyRetention(w.ctx, w.raw)
		if err != nil {
			w.t.Fatal(err)
		}
		return fmt.Sprintf("clock %s, dropped %d", w.c.t.Format(time.RFC3339), len(dropped))
	case 10:
		w.killedRefresh()
		w.refreshAndCheck()
		return "killed refresh, refresh, check"
	case 11:
		w.checkRealTime()
		return "check the real-time views"
	case 13:
		return w.currentBucket()
	default:
		w.refreshAndCheck()
		return "refresh, check"
	}
}

// currentBucket writes rows into the bucket holding now, which the last
// refresh may have materialized up to now (partial.go): some with times
// before the clock, some after, by psql INSERT (a pair of the bucket) and
// by pgts load (a range record starting before or after the row time
// materialized), then checks the real-time views.
func (w *world) currentBucket() string {
	b := w.c.t.Truncate(time.Hour)
	at := func() time.Time {
		return b.Add(time.Duration(w.rnd.Int64N(int64(time.Hour)))).Truncate(time.Microsecond)
	}
	rows := w.randRows(1+w.rnd.IntN(6), at)
	for _, r := range rows {
		execSQL(w.t, w.pool, `INSERT INTO raw VALUES ($1, $2, $3, $4)`, r...)
	}
	after := func() time.Time { return w.c.t.Add(time.Duration(w.rnd.Int64N(int64(b.Add(time.Hour).Sub(w.c.t))))) }
	if w.rnd.IntN(2) == 0 {
		after = at
	}
	w.loadRows(w.randRows(1+w.rnd.IntN(40), after))
	w.checkRealTime()
	return fmt.Sprintf("%d rows by psql and some by pgts load into the current bucket, check the real-time views", len(rows))
}

// load runs pgts' loader (live path: COPY into the partitions, one range
// record per batch and partition) on rows of random times, now and then
// in text COPY.
func (w *world) load() string {
	return w.loadRows(w.randRows(1+w.rnd.IntN(400), w.randTime))
}

// loadRows loads rows with pgts' loader.
func (w *world) loadRows(rows [][]any) string {
	var in strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&in, "%s,%d,", r[0].(time.Time).Format(time.RFC3339Nano), r[1])
		if r[2] != nil {
			fmt.Fprintf(&in, "%v", r[2])
		}
		in.WriteString(",")
		if r[3] != nil {
			fmt.Fprintf(&in, "%d", r[3])
		}
		in.WriteString("\n")
	}
	rd, err := records.NewReader(strings.NewReader(in.String()), records.DefaultOptions(records.CSV))
	if err != nil {
		w.t.Fatal(err)
	}
	target, err := copyload.LookupTarget(w.ctx, w.pool, w.m, "raw")
	if err != nil {
		w.t.Fatal(err)
	}
	cfg := copyload.DefaultConfig()
	cfg.BatchRows, cfg.Workers, cfg.Text = 1+w.rnd.IntN(120), 2, w.rnd.IntN(3) == 0
	cfg.Now = func() time.Time { return w.c.t }
	l, err := copyload.New(w.pool, w.m, target, cfg)
	if err != nil {
		w.t.Fatal(err)
	}
	sum, err := l.Run(w.ctx, &copyload.FileSource{Inputs: []copyload.Input{{Name: "in.csv", Reader: rd}}, Columns: []int{0, 1, 2, 3}})
	if err != nil {
		w.t.Fatal(err)
	}
	if sum.Loaded != int64(len(rows)) {
		w.t.Fatalf("pgts load: %+v, want %d rows loaded", sum, len(rows))
	}
	return fmt.Sprintf("pgts load of %d rows in %d batches (text %v)", sum.Loaded, sum.Batches, cfg.Text)
}

// killedLoad runs pgts' loader in a child process and kills it (SIGKILL)
// once a batch committed, other batches in flight.
func (w *world) killedLoad() string {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childLoadEnv+"="+w.url, childNowEnv+"="+strconv.FormatInt(w.c.t.UnixMicro()+int64(w.rnd.IntN(1000)), 10))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		w.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	if line != "loading\n" {
		_ = cmd.Wait()
		w.t.Fatalf("child load said %q", line)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		w.t.Fatal(err)
	}
	_ = cmd.Wait()
	w.loadKills++
	return "pgts load killed (SIGKILL) after its first batch"
}

// killedRefresh runs a refresh in a child process and kills it (SIGKILL)
// before one of its commits, its transaction open.
func (w *world) killedRefresh() {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+w.url, childAtEnv+"="+strconv.Itoa(1+w.rnd.IntN(6)),
		childNowEnv+"="+strconv.FormatInt(w.c.t.UnixMicro(), 10))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		w.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	switch line {
	case "ready\n":
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			w.t.Fatal(err)
		}
		w.kill++
		_ = cmd.Wait()
	case "done\n":
		if err := cmd.Wait(); err != nil {
			w.t.Fatal(err)
		}
	default:
		_ = cmd.Wait()
		w.t.Fatalf("child refresh said %q", line)
	}
}

func (w *world) refreshAndCheck() {
	list, err := w.rs.List(w.ctx)
	if err != nil {
		w.t.Fatal(err)
	}
	for _, r := range list {
		if _, err := w.rs.Refresh(w.ctx, r); err != nil {
			w.t.Fatal(err)
		}
	}
	w.check()
}

func (w *world) get(name string) *Rollup {
	r, err := w.rs.Get(w.ctx, name)
	if err != nil {
		w.t.Fatal(err)
	}
	return r
}

// compare checks got against want for buckets in [frozen, upto), and
// against the previous result of the same check below frozen.
func (w *world) compare(what string, got, want result, frozen, upto int64) {
	w.t.Helper()
	w.compare2(what, got, want, frozen, upto, frozen)
}

// compare2 is compare with a separate bound below which buckets must be
// unchanged.
func (w *world) compare2(what string, got, want result, frozen, upto, unchanged int64) {
	w.t.Helper()
	if d := diff(got, want, func(k string) bool { b := bucketOf(k); return b >= frozen && b < upto }); d != "" {
		w.t.Fatalf("check %d, %s differs from GROUP BY over the raw rows (frozen below %s):\n%s", w.runs, what, partition.FormatMicros(frozen), d)
	}
	if prev, ok := w.prev[what]; ok {
		if d := diff(got, prev, func(k string) bool { return bucketOf(k) < unchanged }); d != "" {
			w.t.Fatalf("check %d, %s changed in frozen buckets (before %s):\n%s", w.runs, what, partition.FormatMicros(unchanged), d)
		}
	}
	w.prev[what] = got
}

const maxBucket = int64(1) << 62

// checkRealTime checks, between refreshes, that the real-time views show
// every write already, for the buckets whose raw rows are all present.
func (w *world) checkRealTime() {
	cut := w.c.t.Add(-5 * 24 * time.Hour).UnixMicro()
	hourly := w.get("hourly")
	raw := fetch(w.t, w.pool, rawSelect("1 hour"))
	if d := diff(fetch(w.t, w.pool, viewSelect("hourly")), raw, func(k string) bool { return bucketOf(k) >= max(cut, *hourly.FrozenBelow) }); d != "" {
		w.t.Fatalf("real-time view hourly before a refresh differs from GROUP BY over the raw rows:\n%s", d)
	}
	total := w.get("total")
	if d := diff(fetch(w.t, w.pool, totalSelect), fetch(w.t, w.pool, totalRaw), func(k string) bool { return bucketOf(k) >= max(cut, *total.FrozenBelow) }); d != "" {
		w.t.Fatalf("real-time view total before a refresh differs from GROUP BY over the raw rows:\n%s", d)
	}
}

// the view total and GROUP BY over the raw rows, same columns
const (
	totalSelect = `SELECT (extract(epoch FROM bucket) * 1000000)::bigint, '', count, s::float8, lo, last_v FROM total`
	totalRaw    = `SELECT (extract(epoch FROM b) * 1000000)::bigint, '', c, s::float8, lo, l FROM (
			SELECT pgts.time_bucket('30 minutes', time) b, count(*) c, sum(v) s, min(w) lo, pgts.last(v, time) l FROM raw GROUP BY 1) x`
)

func (w *world) check() {
	w.runs++
	hourly, hourlyM, daily, total := w.get("hourly"), w.get("hourly_m"), w.get("daily"), w.get("total")
	raw := fetch(w.t, w.pool, rawSelect("1 hour"))
	w.compare("hourly (real-time view)", fetch(w.t, w.pool, viewSelect("hourly")), raw, *hourly.FrozenBelow, maxBucket)
	w.compare("hourly_m (materialized only)", fetch(w.t, w.pool, viewSelect("hourly_m")), raw, *hourlyM.FrozenBelow, hourlyM.Watermark)
	// daily from hourly: equal to the hourly rollup re-aggregated, and to
	// the raw rows where the day's raw rows are all present
	fromHourly := fetch(w.t, w.pool, `SELECT (extract(epoch FROM b) * 1000000)::bigint, jsonb_build_array(device)::text,
		(sum(avg_v_sum) / nullif(sum(avg_v_count), 0))::float8, min(min_v), max(max_v), sum(sum_v)::float8, sum(count)::bigint, sum(n_w)::bigint,
		pgts.first(first_w, first_w_time), pgts.last(last_w, last_w_time), sum(sum_w)::bigint
		FROM (SELECT pgts.time_bucket('1 day', bucket) b, * FROM hourly_data) x GROUP BY 1, 2`)
	gotDaily := fetch(w.t, w.pool, viewSelect("daily"))
	if d := diff(gotDaily, fromHourly, func(k string) bool { return bucketOf(k) < daily.Watermark }); d != "" {
		w.t.Fatalf("check %d: daily differs from the hourly rollup re-aggregated:\n%s", w.runs, d)
	}
	// a day partly frozen in the hourly rollup is compared with it only
	dayFrozen := (*hourly.FrozenBelow + dayMicros - 1) / dayMicros * dayMicros
	dayUnchanged := *hourly.FrozenBelow / dayMicros * dayMicros
	w.compare2("daily", gotDaily, fetch(w.t, w.pool, rawSelect("1 day")), max(dayFrozen, *daily.FrozenBelow), daily.Watermark, dayUnchanged)
	w.compare("total (no group-by)", fetch(w.t, w.pool, totalSelect), fetch(w.t, w.pool, totalRaw), *total.FrozenBelow, maxBucket)
}

func TestDifferential(t *testing.T) {
	ctx := context.Background()
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("PGTS_ROLLUP_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (PGTS_ROLLUP_SEED=%d reruns it)", seed, seed)
	c := &clock{t: time.Date(2024, 3, 13, 15, 30, 0, 0, time.UTC)}
	pool, m, rs := setup(t, c)
	w := &world{t: t, ctx: ctx, rnd: rand.New(rand.NewPCG(seed, 29)), c: c, pool: pool, m: m, rs: rs,
		url: pool.Config().ConnString(), prev: map[string]result{}}
	ret := partition.Interval{Days: 5}
	var err error
	w.raw, err = m.Create(ctx, partition.CreateSpec{Name: "raw", Columns: "time timestamptz not null, device int, v float8, w int",
		TimeColumn: "time", Interval: partition.Interval{Days: 1}, Premake: 1, Retention: &ret})
	if err != nil {
		t.Fatal(err)
	}
	w.ensureWindow()
	_, err = pool.CopyFrom(ctx, pgx.Identifier{"raw"}, rawCols, pgx.CopyFromRows(w.randRows(2000, w.randTime)))
	if err != nil {
		t.Fatal(err)
	}
	hour := partition.Interval{Micros: 3600e6}
	for _, s := range []Spec{
		{Name: "hourly", On: "raw", Bucket: hour, GroupBy: []string{"device"}, Aggs: mustAggs(t, testAggs), RealTime: true},
		{Name: "hourly_m", On: "raw", Bucket: hour, GroupBy: []string{"device"}, Aggs: mustAggs(t, testAggs)},
		{Name: "daily", On: "hourly", Bucket: partition.Interval{Days: 1}, GroupBy: []string{"device"}, Aggs: mustAggs(t, testAggs), RealTime: true},
		{Name: "total", On: "raw", Bucket: partition.Interval{Micros: 1800e6}, Aggs: mustAggs(t, "count(*), sum(v) AS s, min(w) AS lo, last(v, time)"), RealTime: true},
	} {
		if _, err := rs.Create(ctx, s); err != nil {
			t.Fatalf("%s: %v", s.Name, err)
		}
	}
	w.refreshAndCheck()
	steps := 120
	if testing.Short() {
		steps = 30
	}
	for i := 0; i < steps; i++ {
		what := w.step()
		t.Logf("step %d: %s", i, what)
	}
	w.killedRefresh()
	w.refreshAndCheck()
	t.Logf("%d checks, %d refreshes killed, %d loads killed", w.runs, w.kill, w.loadKills)
	if w.kill == 0 {
		t.Fatal("no refresh was killed mid-transaction")
	}
}
