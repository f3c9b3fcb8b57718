package copyload

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgts/pgts/internal/embedded"
	"github.com/pgts/pgts/internal/gen"
	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pg"
	"github.com/pgts/pgts/internal/pgtest"
	"github.com/pgts/pgts/internal/records"
)

func TestMain(m *testing.M) {
	if os.Getenv("PGTS_LOAD_CHILD") != "" {
		os.Exit(childLoad())
	}
	if os.Getenv(faultChildEnv) != "" {
		os.Exit(faultChild())
	}
	pgtest.Main(m)
}

var now0 = time.Date(2024, 3, 13, 15, 30, 0, 0, time.UTC)

// setupConditions makes a conditions series table (weekly, starting in
// 1970 like the generator) and returns pool, manager and target.
func setupConditions(t *testing.T, url string) (*pgxpool.Pool, *partition.Manager, *Target) {
	t.Helper()
	return seriesTable(t, url, partition.Interval{Days: 7})
}

// seriesTable makes the conditions series table with partitions of iv
// and the extra indexes given.
func seriesTable(t *testing.T, url string, iv partition.Interval, extraIndexes ...string) (*pgxpool.Pool, *partition.Manager, *Target) {
	t.Helper()
	ctx := context.Background()
	pool := pgtest.PoolFor(t, url)
	m := partition.NewManager(pool, nil, time.Now)
	spec := partition.CreateSpec{Name: "conditions", TimeColumn: "time", Interval: iv, Premake: 1,
		Columns:      "time timestamptz not null, device integer not null, data1 float8, data2 float8, data3 float8, data4 float8, data5 float8",
		ExtraIndexes: extraIndexes}
	if _, err := m.Create(ctx, spec); err != nil {
		t.Fatal(err)
	}
	target, err := LookupTarget(ctx, pool, m, "conditions")
	if err != nil {
		t.Fatal(err)
	}
	return pool, m, target
}

func conditions(t testing.TB, batches int64) gen.Generator {
	t.Helper()
	return conditionsRows(t, batches, 0)
}

// conditionsRows is the conditions generator with batches batches of
// batchRows rows (0: its default).
func conditionsRows(t testing.TB, batches int64, batchRows int) gen.Generator {
	t.Helper()
	opts, err := gen.DefaultOptions("conditions")
	if err != nil {
		t.Fatal(err)
	}
	opts.Batches = batches
	if batchRows > 0 {
		opts.BatchRows = batchRows
	}
	g, err := gen.New("conditions", opts)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func testConfig(workers int) Config {
	cfg := DefaultConfig()
	cfg.Workers = workers
	cfg.Retry = RetryPolicy{Attempts: 30, BaseDelay: 20 * time.Millisecond, MaxDelay: 500 * time.Millisecond}
	return cfg
}

func countRows(t *testing.T, pool *pgxpool.Pool) (rows, distinct int64) {
	t.Helper()
	err := pool.QueryRow(context.Background(), `SELECT count(*), count(DISTINCT (time, device)) FROM conditions`).Scan(&rows, &distinct)
	if err != nil {
		t.Fatal(err)
	}
	return rows, distinct
}

func TestMillionRowsOnce(t *testing.T) {
	ctx := context.Background()
	pool, m, target := setupConditions(t, pgtest.DB(t))
	for _, route := range []Route{RouteLeaf} {
		cfg := testConfig(3)
		cfg.Route = route
		l, err := New(pool, m, target, cfg)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := l.Run(ctx, &GenSource{Name: "conditions", Gen: conditions(t, 100)})
		if err != nil {
			t.Fatal(err)
		}
		if sum.Read != 1_000_000 || sum.Loaded != 1_000_000 || sum.Rejected != 0 || sum.NotLoaded != 0 || !sum.Complete || sum.Format != "binary" {
			t.Fatalf("summary = %+v", sum)
		}
	}
	rows, distinct := countRows(t, pool)
	if rows != 1_000_000 || distinct != 1_000_000 {
		t.Fatalf("table has %d rows, %d distinct", rows, distinct)
	}
	// Binary and text COPY store identical values: compare against a text
	// load of the same rows through the parent.
	if _, err := pool.Exec(ctx, `CREATE TABLE ctext (LIKE conditions)`); err != nil {
		t.Fatal(err)
	}
	text, err := LookupTarget(ctx, pool, m, "ctext")
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(2)
	cfg.Text = true
	l, err := New(pool, m, text, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Run(ctx, &GenSource{Name: "conditions", Gen: conditions(t, 5)}); err != nil {
		t.Fatal(err)
	}
	var diff int64
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM ctext c LEFT JOIN conditions d USING (time, device)
		WHERE d IS NULL OR (c.data1, c.data2, c.data3, c.data4, c.data5) IS DISTINCT FROM (d.data1, d.data2, d.data3, d.data4, d.data5)`).Scan(&diff); err != nil {
		t.Fatal(err)
	}
	if diff != 0 {
		t.Fatalf("%d rows differ between text and binary loads", diff)
	}
}

func TestParentRoute(t *testing.T) {
	ctx := context.Background()
	pool, m, target := setupConditions(t, pgtest.DB(t))
	cfg := testConfig(2)
	cfg.Route = RouteParent
	l, err := New(pool, m, target, cfg)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := l.Run(ctx, &GenSource{Name: "conditions", Gen: conditions(t, 20)})
	if err != nil || sum.Loaded != 200_000 || sum.Route != "parent" {
		t.Fatalf("summary %+v, %v", sum, err)
	}
	if rows, distinct := countRows(t, pool); rows != 200_000 || distinct != 200_000 {
		t.Fatalf("%d rows, %d distinct", rows, distinct)
	}
}

// TestRejectsExact loads a crafted bad file and checks the rejects file
// line by line, and that every good row loaded.
func TestRejectsExact(t *testing.T) {
	for _, text := range []bool{false, true} {
		t.Run(map[bool]string{false: "binary", true: "text"}[text], func(t *testing.T) { testRejectsExact(t, text) })
	}
}

func testRejectsExact(t *testing.T, text bool) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	m := partition.NewManager(pool, nil, func() time.Time { return now0 })
	spec := partition.CreateSpec{Name: "r", TimeColumn: "time", Interval: partition.Interval{Days: 1}, Premake: 1,
		AcceptPast: &partition.Interval{Days: 30},
		Columns:    "time timestamptz not null, device int not null, v float8, note text, CHECK (v <> 13)"}
	if _, err := m.Create(ctx, spec); err != nil {
		t.Fatal(err)
	}
	target, err := LookupTarget(ctx, pool, m, "r")
	if err != nil {
		t.Fatal(err)
	}
	input := strings.Join([]string{
		`time,device,v,note`,
		`2024-03-13 10:00:00+00,1,1.5,ok`,               // 2 good
		`2024-03-13 10:00:01+00,2,abc,bad float`,        // 3 bad float
		`2024-03-13 10:00:02+00,3`,                      // 4 short
		`2024-03-13 10:00:03+00,4,2.5,x,extra`,          // 5 long
		"2024-03-13 10:00:04+00,5,3.5,\xff\xfe",         // 6 invalid UTF-8
		`2024-03-13 10:00:05+00,6,4.5,"multi`,           // 7 quoted newline (good) ...
		`line note"`,                                    // 8 ... ends here
		`2999-01-01 00:00:00+00,7,5.5,future`,           // 9 outside window
		`1800-01-01 00:00:00+00,8,6.5,past`,             // 10 outside window
		`2024-03-13 10:00:06+00,9,13,check violation`,   // 11 refused by the server
		`2024-03-13 10:00:07+00,,7.5,null device`,       // 12 NULL in NOT NULL
		`2024-03-13 10:00:08+00,10,NaN,nan is fine`,     // 13 good
		`not a time,11,1,bad time`,                      // 14 bad time
		`2024-03-13 10:00:09+00,12,-Infinity,"q""uote"`, // 15 good
	}, "\n") + "\n"
	opts := records.DefaultOptions(records.CSV)
	opts.Header = true
	rd, err := records.NewReader(strings.NewReader(input), opts)
	if err != nil {
		t.Fatal(err)
	}
	var rejects bytes.Buffer
	cfg := testConfig(2)
	cfg.Now = func() time.Time { return now0 }
	cfg.Rejects = NewCSVRejects(&rejects)
	cfg.BatchRows = 4
	cfg.Text = text
	l, err := New(pool, m, target, cfg)
	if err != nil {
		t.Fatal(err)
	}
	src := &FileSource{Inputs: []Input{{Name: "bad.csv", Reader: rd}}, Columns: []int{0, 1, 2, 3}}
	sum, err := l.Run(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Read != 13 || sum.Loaded != 4 || sum.Rejected != 9 || sum.Read != sum.Loaded+sum.Rejected+sum.Skipped+sum.NotLoaded {
		t.Fatalf("summary = %+v", sum)
	}
	// Reader-side rejects come in input order; the server-side one (line
	// 11) is reported when its batch commits.
	got := strings.Split(strings.TrimSpace(rejects.String()), "\n")
	want := []string{
		`source,line,column,reason,record`,
		`bad.csv,3,v,"invalid input for type double precision: ""abc""`,
		`bad.csv,4,,"expected 4 fields, got 2",`,
		`bad.csv,5,,"expected 4 fields, got 5",`,
		`bad.csv,6,note,`,
		`bad.csv,9,time,"time 2999-01-01T00:00:00Z is at or after`,
		`bad.csv,10,time,"time 1800-01-01T00:00:00Z is before 2024-02-12T15:30:00Z`,
		`bad.csv,12,device,NULL in a NOT NULL column`,
		`bad.csv,14,time,`,
		`bad.csv,11,v,"new row for relation`,
	}
	if len(got) != len(want) {
		t.Fatalf("rejects file has %d lines, want %d:\n%s", len(got), len(want), rejects.String())
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("rejects line %d = %q, want prefix %q", i+1, got[i], want[i])
		}
	}
	// The server-side reject carries the row as sent, reloadable, marked
	// re-serialised: the input (a reader, not a file) cannot be read again.
	last := got[len(got)-1]
	if !strings.HasSuffix(last, `,"2024-03-13 10:00:06Z,9,13,check violation",csv`) && // binary, spelled by pgx
		!strings.HasSuffix(last, `,"2024-03-13 10:00:06+00,9,13,check violation",csv`) { // text, as sent
		t.Errorf("server reject record = %q, want the row as sent", last)
	}
	var notes []string
	rows, err := pool.Query(ctx, `SELECT note FROM r ORDER BY device`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		rows.Scan(&n)
		notes = append(notes, n)
	}
	if strings.Join(notes, "|") != "ok|multi\nline note|nan is fine|q\"uote" {
		t.Fatalf("loaded notes = %q", notes)
	}
}

func TestMaxRejects(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	m := partition.NewManager(pool, nil, time.Now)
	if _, err := pool.Exec(ctx, `CREATE TABLE plain (a int, b float8)`); err != nil {
		t.Fatal(err)
	}
	target, err := LookupTarget(ctx, pool, m, "plain")
	if err != nil {
		t.Fatal(err)
	}
	rd, _ := records.NewReader(strings.NewReader("1,1\nx,1\ny,2\nz,3\n4,4\n"), records.DefaultOptions(records.CSV))
	cfg := testConfig(1)
	cfg.MaxRejects = 2
	l, _ := New(pool, m, target, cfg)
	_, err = l.Run(ctx, &FileSource{Inputs: []Input{{Name: "in", Reader: rd}}, Columns: []int{0, 1}})
	if !errors.Is(err, ErrTooManyRejects) {
		t.Fatalf("err = %v", err)
	}
}

// TestInterruptThenResume cancels a load after some batches, then reruns
// it with the same load ID: every row exactly once.
func TestInterruptThenResume(t *testing.T) {
	ctx := context.Background()
	pool, m, target := setupConditions(t, pgtest.DB(t))
	cctx, cancel := context.WithCancel(ctx)
	cfg := testConfig(2)
	cfg.LoadID, cfg.Fingerprint = "resume-1", "fp"
	var batches atomic.Int64
	cfg.OnBatch = func(BatchInfo) {
		if batches.Add(1) == 7 {
			cancel()
		}
	}
	l, err := New(pool, m, target, cfg)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := l.Run(cctx, &GenSource{Name: "conditions", Gen: conditions(t, 40)})
	if !errors.Is(err, context.Canceled) || !sum.Interrupted {
		t.Fatalf("first run: %+v, %v", sum, err)
	}
	if sum.Read != sum.Loaded+sum.Rejected+sum.Skipped+sum.NotLoaded || sum.Loaded < 70_000 || sum.Loaded >= 400_000 {
		t.Fatalf("first run summary = %+v", sum)
	}
	rows, _ := countRows(t, pool)
	if rows != sum.Loaded {
		t.Fatalf("table has %d rows, summary says %d committed", rows, sum.Loaded)
	}
	cfg.OnBatch = nil
	l, _ = New(pool, m, target, cfg)
	sum2, err := l.Run(ctx, &GenSource{Name: "conditions", Gen: conditions(t, 40)})
	if err != nil {
		t.Fatal(err)
	}
	if sum2.Skipped != sum.Loaded || sum2.Loaded+sum2.Skipped != 400_000 {
		t.Fatalf("resume summary = %+v (first loaded %d)", sum2, sum.Loaded)
	}
	if rows, distinct := countRows(t, pool); rows != 400_000 || distinct != 400_000 {
		t.Fatalf("after resume: %d rows, %d distinct", rows, distinct)
	}
	// A different input under the same ID is refused.
	cfg.Fingerprint = "other"
	l, _ = New(pool, m, target, cfg)
	if _, err := l.Run(ctx, &GenSource{Name: "conditions", Gen: conditions(t, 40)}); err == nil || !strings.Contains(err.Error(), "other batch options") {
		t.Fatalf("fingerprint mismatch: %v", err)
	}
}

// childLoad runs a resumable load in a child process, to be killed.
func childLoad() int {
	ctx := context.Background()
	url := os.Getenv("PGTS_LOAD_CHILD")
	pool, err := pg.NewPool(ctx, url, 8)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	m := partition.NewManager(pool, nil, time.Now)
	target, err := LookupTarget(ctx, pool, m, "conditions")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cfg := DefaultConfig()
	cfg.Workers, cfg.LoadID, cfg.Fingerprint = 2, "crash", "fp"
	cfg.Bulk = os.Getenv("PGTS_LOAD_CHILD_BULK") != ""
	l, err := New(pool, m, target, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	g, _ := gen.New("conditions", func() gen.Options { o, _ := gen.DefaultOptions("conditions"); o.Batches = 200; return o }())
	if _, err := l.Run(ctx, &GenSource{Name: "conditions", Gen: g}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func ledgerBatches(t *testing.T, pool *pgxpool.Pool, id string) int64 {
	var n int64
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM pgts.load_batch WHERE load_id = $1`, id).Scan(&n); err != nil && pg.SQLState(err) != "42P01" {
		t.Fatal(err)
	}
	return n
}

// waitBatches polls the ledger until at least n batches committed.
func waitBatches(t *testing.T, pool *pgxpool.Pool, id string, n int64, done <-chan struct{}) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for ledgerBatches(t, pool, id) < n {
		select {
		case <-done:
			t.Fatal("the load ended before it could be interrupted")
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("no progress")
		}
		time.Sleep(5 * time.Millisecond) // polling another process's progress
	}
}

func resumeAndCheck(t *testing.T, pool *pgxpool.Pool, m *partition.Manager, target *Target, id string, batches int64) {
	t.Helper()
	cfg := testConfig(2)
	cfg.LoadID, cfg.Fingerprint = id, "fp"
	l, err := New(pool, m, target, cfg)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := l.Run(context.Background(), &GenSource{Name: "conditions", Gen: conditions(t, batches)})
	if err != nil {
		t.Fatal(err)
	}
	want := batches * 10000
	if sum.Loaded+sum.Skipped != want || sum.Skipped == 0 {
		t.Fatalf("resume summary = %+v", sum)
	}
	if rows, distinct := countRows(t, pool); rows != want || distinct != want {
		t.Fatalf("after resume: %d rows, %d distinct; want %d", rows, distinct, want)
	}
}

// TestKillLoaderThenResume kills a loading process with SIGKILL and reruns
// the load.
func TestKillLoaderThenResume(t *testing.T) {
	url := pgtest.DB(t)
	pool, m, target := setupConditions(t, url)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PGTS_LOAD_CHILD="+url)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	waitBatches(t, pool, "crash", 20, done)
	cmd.Process.Signal(syscall.SIGKILL)
	<-done
	resumeAndCheck(t, pool, m, target, "crash", 200)
}

// TestServerCrashes kills a backend with SIGKILL (the server restarts all
// sessions) during a load, which retries and finishes; then stops the
// server in immediate mode during another load, which fails, and resumes
// once the server is back.
func TestServerCrashes(t *testing.T) {
	c := pgtest.Cluster(t)
	if c == nil {
		t.Skip("needs the private cluster: it kills server processes") // external server configured
	}
	ctx := context.Background()
	pool, m, target := setupConditions(t, pgtest.DB(t))

	cfg := testConfig(2)
	cfg.LoadID, cfg.Fingerprint = "backend-kill", "fp"
	var once sync.Once
	cfg.OnBatch = func(b BatchInfo) {
		if b.Seq >= 5 {
			once.Do(func() {
				var pid int
				if err := pool.QueryRow(ctx, `SELECT pid FROM pg_stat_activity WHERE application_name = 'pgts' AND pid <> pg_backend_pid() AND backend_type = 'client backend' LIMIT 1`).Scan(&pid); err == nil {
					syscall.Kill(pid, syscall.SIGKILL)
				}
			})
		}
	}
	l, err := New(pool, m, target, cfg)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := l.Run(ctx, &GenSource{Name: "conditions", Gen: conditions(t, 60)})
	if err != nil {
		t.Fatalf("load across a backend crash: %v", err)
	}
	if sum.Retries == 0 {
		t.Errorf("no retry after a backend was killed: %+v", sum)
	}
	if rows, distinct := countRows(t, pool); rows != 600_000 || distinct != 600_000 {
		t.Fatalf("after backend crash: %d rows, %d distinct", rows, distinct)
	}

	// Immediate shutdown mid-load.
	if _, err := pool.Exec(ctx, `TRUNCATE conditions`); err != nil {
		t.Fatal(err)
	}
	cfg = testConfig(2)
	cfg.Retry = RetryPolicy{Attempts: 2, BaseDelay: 10 * time.Millisecond, MaxDelay: 10 * time.Millisecond}
	cfg.LoadID, cfg.Fingerprint = "immediate", "fp"
	var stopOnce sync.Once
	cfg.OnBatch = func(b BatchInfo) {
		if b.Seq >= 5 {
			stopOnce.Do(func() { c.Stop(context.Background(), embedded.Immediate) })
		}
	}
	l, _ = New(pool, m, target, cfg)
	if _, err := l.Run(ctx, &GenSource{Name: "conditions", Gen: conditions(t, 60)}); err == nil {
		t.Fatal("load survived an immediate shutdown without a server")
	}
	if _, err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	pool.Reset()
	resumeAndCheck(t, pool, m, target, "immediate", 60)
}

// TestLocalTimestampRouting loads a `timestamp` (without time zone) time
// column from text that carries zones: PostgreSQL ignores the zone for
// that type, so the row's partition must be chosen from the wall-clock
// time as written, not from the instant the zone would make of it.
func TestLocalTimestampRouting(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	m := partition.NewManager(pool, nil, func() time.Time { return now0 })
	if _, err := m.Create(ctx, partition.CreateSpec{Name: "lt", TimeColumn: "time", Interval: partition.Interval{Days: 1}, Premake: 2,
		Columns: "time timestamp not null, v int"}); err != nil {
		t.Fatal(err)
	}
	target, err := LookupTarget(ctx, pool, m, "lt")
	if err != nil {
		t.Fatal(err)
	}
	// 23:30 on the 13th as written; as an instant, -02 would be the 14th.
	input := "2024-03-13 23:30:00-02,1\n2024-03-14 00:30:00+05,2\n"
	for _, text := range []bool{false, true} {
		if _, err := pool.Exec(ctx, `TRUNCATE lt`); err != nil {
			t.Fatal(err)
		}
		rd, err := records.NewReader(strings.NewReader(input), records.DefaultOptions(records.CSV))
		if err != nil {
			t.Fatal(err)
		}
		cfg := testConfig(1)
		cfg.Now, cfg.Text = func() time.Time { return now0 }, text
		l, err := New(pool, m, target, cfg)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := l.Run(ctx, &FileSource{Inputs: []Input{{Name: "lt.csv", Reader: rd}}, Columns: []int{0, 1}})
		if err != nil || sum.Loaded != 2 || sum.Rejected != 0 {
			t.Fatalf("text=%v: summary %+v, %v", text, sum, err)
		}
		var got string
		if err := pool.QueryRow(ctx, `SELECT string_agg(tableoid::regclass::text || ' ' || time::text, ', ' ORDER BY v) FROM lt`).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if want := "lt_p20240313 2024-03-13 23:30:00, lt_p20240314 2024-03-14 00:30:00"; got != want {
			t.Fatalf("text=%v: stored %q, want %q", text, got, want)
		}
	}
}
