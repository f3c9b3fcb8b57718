package copyload

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgts/pgts/internal/gen"
	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pgtest"
)

// hourly makes "conditions" an hourly series table (time index and a
// (device, time) index) in the database at url.
func hourly(t *testing.T, url string) (*pgxpool.Pool, *partition.Manager, *Target) {
	t.Helper()
	return seriesTable(t, url, partition.Interval{Micros: 3600e6}, "device, time")
}

// hourlyRows is conditions with 1,000-row batches: 60 of them an hour.
func hourlyRows(t testing.TB, batches int64) gen.Generator {
	t.Helper()
	return conditionsRows(t, batches, 1000)
}

func bulkConfig(workers int) Config {
	cfg := testConfig(workers)
	cfg.BatchRows, cfg.Bulk, cfg.Analyze = 5000, true, true
	return cfg
}

// tableState describes what a load left: per partition its bounds, rows,
// a digest of its rows, its indexes and constraints, and whether
// anything is left unattached or marked.
func tableState(t *testing.T, pool *pgxpool.Pool, like string) string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT c.relname, pg_get_expr(c.relpartbound, c.oid),
			(SELECT string_agg(indexdef, '; ' ORDER BY indexdef) FROM pg_indexes WHERE schemaname = 'public' AND tablename = c.relname),
			(SELECT string_agg(ip.relname::text, ', ' ORDER BY ip.relname) FROM pg_index x JOIN pg_inherits h ON h.inhrelid = x.indexrelid
				JOIN pg_class ip ON ip.oid = h.inhparent WHERE x.indrelid = c.oid),
			(SELECT coalesce(string_agg(conname || ' ' || pg_get_constraintdef(oid), '; ' ORDER BY conname), '') FROM pg_constraint WHERE conrelid = c.oid),
			coalesce(obj_description(c.oid, 'pg_class'), '')
		FROM pg_class c WHERE c.relname LIKE $1 AND c.relkind = 'r' ORDER BY c.relname`, like)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var name, comment, cons string
		var bound, idx, parents *string
		if err := rows.Scan(&name, &bound, &idx, &parents, &cons, &comment); err != nil {
			t.Fatal(err)
		}
		var n int64
		var digest string
		if err := pool.QueryRow(context.Background(), fmt.Sprintf(`SELECT count(*), coalesce(md5(string_agg(r::text, ',' ORDER BY r::text)), '')
			FROM %s r`, name)).Scan(&n, &digest); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s bound=%v rows=%d digest=%s\n  indexes: %v\n  index parents: %v\n  constraints: %q comment: %q\n",
			name, deref(bound), n, digest, deref(idx), deref(parents), cons, comment)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// TestBulkEqualsLive loads the same rows live and on the bulk path, into
// hourly series tables of two databases: the partitions are the same
// (bounds, rows, indexes attached to the parent's, constraints), and
// nothing is left unattached.
func TestBulkEqualsLive(t *testing.T) {
	ctx := context.Background()
	const batches = 300 // 300,000 rows over 5 hours
	var states [3]string
	for i, unitRows := range []int{0, DefaultBulkUnitRows, 20000} { // live, one transaction per partition, split
		bulk := unitRows > 0
		pool, m, target := hourly(t, pgtest.DB(t))
		cfg := bulkConfig(2)
		cfg.Bulk, cfg.BulkUnitRows, cfg.LoadID, cfg.Fingerprint = bulk, unitRows, "same", "fp"
		l, err := New(pool, m, target, cfg)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := l.Run(ctx, &GenSource{Name: "conditions", Gen: hourlyRows(t, batches)})
		if err != nil {
			t.Fatal(err)
		}
		if sum.Loaded != batches*1000 || sum.Rejected != 0 || sum.Created != 5 {
			t.Fatalf("bulk=%v: summary %+v", bulk, sum)
		}
		if bt := l.BulkTimes(); bulk != (bt.Partitions == 5) {
			t.Fatalf("bulk=%v: bulk times %+v", bulk, bt)
		}
		var visible int64
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM conditions`).Scan(&visible); err != nil || visible != batches*1000 {
			t.Fatalf("bulk=%v: the table shows %d rows (%v)", bulk, visible, err)
		}
		states[i] = tableState(t, pool, "conditions_p1970%")
		// One transaction per partition writes its rows frozen (COPY
		// FREEZE): every page all-frozen in the visibility map; the live
		// and split paths leave that to VACUUM.
		var pages, frozen int64
		if _, err := pool.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pg_visibility`); err != nil {
			t.Fatal(err)
		}
		if err := pool.QueryRow(ctx, `SELECT sum(c.relpages), sum((SELECT all_frozen FROM pg_visibility_map_summary(c.oid)))
			FROM pg_class c WHERE c.relname LIKE 'conditions_p1970%' AND c.relkind = 'r'`).Scan(&pages, &frozen); err != nil {
			t.Fatal(err)
		}
		if wantFrozen := unitRows == DefaultBulkUnitRows; pages == 0 || (frozen == pages) != wantFrozen || (frozen == 0) == wantFrozen {
			t.Fatalf("unit rows %d: %d of %d pages all-frozen", unitRows, frozen, pages)
		}
	}
	for i, how := range []string{"", "one transaction per partition", "split"} {
		if i > 0 && states[0] != states[i] {
			t.Fatalf("live and bulk (%s) loads differ:\nlive:\n%s\nbulk:\n%s", how, states[0], states[i])
		}
	}
	if !strings.Contains(states[1], "conditions_p19700101_04") || strings.Contains(states[1], "bulk load") {
		t.Fatalf("unexpected state:\n%s", states[1])
	}
}

// TestBulkInterruptThenResume interrupts a bulk load across several
// partitions (split: some attached, one unattached, some not made yet;
// units: whole partitions attached, the others missing) and resumes it:
// every row once, every partition attached.
func TestBulkInterruptThenResume(t *testing.T) {
	// Hourly partitions of 12 batches: at the 37th, partitions 0 and 1
	// are full, 2 is being filled.
	t.Run("split", func(t *testing.T) { testBulkInterruptThenResume(t, 20000, partition.Interval{Micros: 3600e6}, 37) })
	// 10-minute partitions of 2 batches, 30 of them: the router waits for
	// the workers long before the end.
	t.Run("units", func(t *testing.T) { testBulkInterruptThenResume(t, 0, partition.Interval{Micros: 600e6}, 5) })
}

func testBulkInterruptThenResume(t *testing.T, unitRows int, iv partition.Interval, stopAt int64) {
	ctx := context.Background()
	url := pgtest.DB(t)
	pool, m, target := seriesTable(t, url, iv, "device, time")
	cctx, cancel := context.WithCancel(ctx)
	cfg := bulkConfig(2)
	cfg.LoadID, cfg.Fingerprint, cfg.BulkUnitRows = "bulk-resume", "fp", unitRows
	var batches atomic.Int64
	cfg.OnBatch = func(BatchInfo) {
		if batches.Add(1) == stopAt {
			cancel()
		}
	}
	l, err := New(pool, m, target, cfg)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := l.Run(cctx, &GenSource{Name: "conditions", Gen: hourlyRows(t, 300)})
	if !errors.Is(err, context.Canceled) || sum.Loaded < stopAt*5000 || sum.Loaded >= 300_000 {
		t.Fatalf("first run: %+v, %v", sum, err)
	}
	var visible, unattached int64
	if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM conditions),
		(SELECT count(*) FROM pgts.bulk_partition)`).Scan(&visible, &unattached); err != nil {
		t.Fatal(err)
	}
	switch {
	case unitRows > 0 && (visible >= sum.Loaded || unattached == 0):
		t.Fatalf("after the interrupt: %d rows visible of %d committed, %d unattached tables; want the rows of the open partition hidden", visible, sum.Loaded, unattached)
	case unitRows == 0 && (visible != sum.Loaded || unattached != 0):
		t.Fatalf("after the interrupt: %d rows visible of %d committed, %d unattached tables; want whole partitions attached", visible, sum.Loaded, unattached)
	}
	cfg.OnBatch = nil
	l, _ = New(pool, m, target, cfg)
	sum2, err := l.Run(ctx, &GenSource{Name: "conditions", Gen: hourlyRows(t, 300)})
	if err != nil {
		t.Fatal(err)
	}
	if sum2.Skipped != sum.Loaded || sum2.Loaded+sum2.Skipped != 300_000 {
		t.Fatalf("resume summary = %+v (first loaded %d)", sum2, sum.Loaded)
	}
	checkAllAttached(t, pool, 300_000)
}

// checkAllAttached checks the table shows want distinct rows and no
// partition is left unattached.
func checkAllAttached(t *testing.T, pool *pgxpool.Pool, want int64) {
	t.Helper()
	if rows, distinct := countRows(t, pool); rows != want || distinct != want {
		t.Fatalf("%d rows, %d distinct; want %d", rows, distinct, want)
	}
	var left []string
	err := pool.QueryRow(context.Background(), `SELECT coalesce(array_agg(relname::text), '{}') FROM pg_class
		WHERE relname LIKE 'conditions_p%' AND relkind = 'r' AND (NOT relispartition OR obj_description(oid, 'pg_class') IS NOT NULL)`).Scan(&left)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) > 0 {
		t.Fatalf("partitions left unattached or marked: %v", left)
	}
}

// TestBulkKillThenResume kills a process loading on the bulk path with
// SIGKILL, checks that its committed rows stay invisible in an unattached
// partition, and resumes: every row once.
func TestBulkKillThenResume(t *testing.T) {
	url := pgtest.DB(t)
	pool, m, target := setupConditions(t, url)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PGTS_LOAD_CHILD="+url, "PGTS_LOAD_CHILD_BULK=1")
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
	leaf, err := target.Series.LeafName(0)
	if err != nil {
		t.Fatal(err)
	}
	var visible, hidden int64
	if err := pool.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM conditions), (SELECT count(*) FROM `+leaf+`)`).
		Scan(&visible, &hidden); err != nil {
		t.Fatal(err)
	}
	if visible != 0 || hidden < 200_000 || hidden != ledgerBatches(t, pool, "crash")*10000 {
		t.Fatalf("after the kill: %d rows visible, %d in the unattached partition, ledger %d batches (%s)", visible, hidden, ledgerBatches(t, pool, "crash"), stderr.String())
	}
	cfg := testConfig(2)
	cfg.LoadID, cfg.Fingerprint, cfg.Bulk = "crash", "fp", true
	l, err := New(pool, m, target, cfg)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := l.Run(context.Background(), &GenSource{Name: "conditions", Gen: conditions(t, 200)})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Loaded+sum.Skipped != 2_000_000 || sum.Skipped != hidden {
		t.Fatalf("resume summary = %+v", sum)
	}
	checkAllAttached(t, pool, 2_000_000)
}

// TestBulkRejects loads rows some of which the server refuses (a CHECK,
// NOT NULL) on the bulk path and live, in two databases: the same rows
// are stored and the same lines rejected with the same reasons. A table
// with a unique key is loaded live, with a warning.
func TestBulkRejects(t *testing.T) {
	ctx := context.Background()
	var in strings.Builder
	for i := 0; i < 3000; i++ {
		v := fmt.Sprint(i % 50)
		dev := "1"
		switch {
		case i%97 == 5:
			v = "13" // refused by the CHECK
		case i%89 == 7:
			dev = "" // NULL device: refused client-side
		}
		fmt.Fprintf(&in, "2020-01-01 %02d:%02d:%02d+00,%s,%s\n", i/1200, i/20%60, i%60, dev, v)
	}
	type result struct {
		sum     Summary
		rejects []Reject
		state   string
	}
	var res [2]result
	for k, bulk := range []bool{false, true} {
		pool := pgtest.Pool(t)
		m := partition.NewManager(pool, nil, time.Now)
		spec := partition.CreateSpec{Name: "conditions", TimeColumn: "time", Interval: partition.Interval{Micros: 3600e6},
			Columns: "time timestamptz not null, device int not null, v float8 CHECK (v <> 13)"}
		if _, err := m.Create(ctx, spec); err != nil {
			t.Fatal(err)
		}
		cfg := testConfig(2)
		cfg.BatchRows, cfg.Bulk = 128, bulk
		sum, rj, err := loadCSV(t, pool, m, "conditions", in.String(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		res[k] = result{sum, rj, tableState(t, pool, "conditions_p2020%")}
	}
	live, bulk := res[0], res[1]
	if live.sum.Loaded != bulk.sum.Loaded || live.sum.Rejected != bulk.sum.Rejected || bulk.sum.Rejected == 0 || bulk.sum.Splits == 0 {
		t.Fatalf("live %+v\nbulk %+v", live.sum, bulk.sum)
	}
	slices.SortFunc(bulk.rejects, func(a, b Reject) int { return int(a.Line - b.Line) })
	slices.SortFunc(live.rejects, func(a, b Reject) int { return int(a.Line - b.Line) })
	if fmt.Sprint(live.rejects) != fmt.Sprint(bulk.rejects) {
		t.Fatalf("rejects differ:\nlive %v\nbulk %v", live.rejects, bulk.rejects)
	}
	if !strings.Contains(fmt.Sprint(bulk.rejects), `violates check constraint "conditions_v_check"`) {
		t.Fatalf("rejects: %v", bulk.rejects)
	}
	if live.state != bulk.state {
		t.Fatalf("tables differ:\nlive:\n%s\nbulk:\n%s", live.state, bulk.state)
	}

	// A unique key: the bulk path steps aside.
	pool := pgtest.Pool(t)
	m := partition.NewManager(pool, nil, time.Now)
	spec := partition.CreateSpec{Name: "conditions", TimeColumn: "time", Interval: partition.Interval{Micros: 3600e6},
		Columns: "time timestamptz not null, device int not null, v float8 CHECK (v <> 13), PRIMARY KEY (device, time)"}
	if _, err := m.Create(ctx, spec); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(2)
	cfg.BatchRows, cfg.Bulk = 128, true
	dup := in.String() + strings.SplitAfter(in.String(), "\n")[0]
	sum, rj, err := loadCSV(t, pool, m, "conditions", dup, cfg)
	if err != nil {
		t.Fatal(err)
	}
	dupRejected := false
	for _, r := range rj {
		dupRejected = dupRejected || r.Line == 3001 && strings.Contains(r.Reason, "duplicate key value")
	}
	if sum.Rejected != live.sum.Rejected+1 || !dupRejected {
		t.Fatalf("with a primary key: %+v, rejects %v", sum, rj)
	}
}

// TestBulkConcurrentWriter keeps a transaction open that has written into
// the current partition of the table (holding ROW EXCLUSIVE on the
// parent) while a bulk load of history runs to its end: no statement of
// the load waits for a lock held by that writer, and the writer goes on
// writing and commits.
func TestBulkConcurrentWriter(t *testing.T) {
	t.Run("units", func(t *testing.T) { testBulkConcurrentWriter(t, 0) })
	t.Run("split", func(t *testing.T) { testBulkConcurrentWriter(t, 20000) })
}

func testBulkConcurrentWriter(t *testing.T, unitRows int) {
	ctx := context.Background()
	url := pgtest.DB(t)
	pool, m, target := hourly(t, url)
	writer := pgtest.PoolFor(t, url)
	tx, err := writer.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	var writerPID int32
	if err := tx.QueryRow(ctx, `INSERT INTO conditions (time, device) VALUES (now(), 1) RETURNING pg_backend_pid()`).Scan(&writerPID); err != nil {
		t.Fatal(err)
	}
	cfg := bulkConfig(2)
	cfg.BulkUnitRows = unitRows
	l, err := New(pool, m, target, cfg)
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		sum Summary
		err error
	}
	done := make(chan result, 1)
	go func() {
		sum, err := l.Run(ctx, &GenSource{Name: "conditions", Gen: hourlyRows(t, 180)})
		done <- result{sum, err}
	}()
	watcher := pgtest.PoolFor(t, url)
	var res result
	for {
		select {
		case res = <-done:
		default:
			var blocked []int32
			err := watcher.QueryRow(ctx, `SELECT coalesce(array_agg(pid), '{}') FROM pg_stat_activity
				WHERE datname = current_database() AND $1 = ANY (pg_blocking_pids(pid))`, writerPID).Scan(&blocked)
			if err != nil {
				t.Fatal(err)
			}
			if len(blocked) > 0 {
				t.Fatalf("backends %v of the bulk load wait for a lock the writer holds", blocked)
			}
			time.Sleep(2 * time.Millisecond) // the poll's pace, not a synchronisation
			continue
		}
		break
	}
	if res.err != nil || res.sum.Loaded != 180_000 || l.BulkTimes().Partitions != 3 {
		t.Fatalf("bulk load: %+v, %v, %+v", res.sum, res.err, l.BulkTimes())
	}
	if _, err := tx.Exec(ctx, `INSERT INTO conditions (time, device) VALUES (now(), 2)`); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	checkAllAttached(t, pool, 180_002)
}

// TestBulkWorkerFailsWhileRouterWaits: the router waits for the attach of
// a split partition it closed before it sends that partition more rows
// live; when a worker fails on a batch of that partition (here: more
// rejects than allowed), the attach never comes, and the load must end
// with the worker's error instead of waiting forever.
func TestBulkWorkerFailsWhileRouterWaits(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	m := partition.NewManager(pool, nil, time.Now)
	spec := partition.CreateSpec{Name: "conditions", TimeColumn: "time", Interval: partition.Interval{Micros: 3600e6},
		Columns: "time timestamptz not null, device int not null, v float8 CHECK (v <> 13)"}
	if _, err := m.Create(ctx, spec); err != nil {
		t.Fatal(err)
	}
	var in strings.Builder
	row := func(hour, i int, v int) { fmt.Fprintf(&in, "2020-01-01 %02d:%02d:%02d+00,1,%d\n", hour, i/60, i%60, v) }
	for i := 0; i < 300; i++ { // hour 0: split (more than 100 rows); its last batch has a refused row
		v := 1
		if i == 290 {
			v = 13
		}
		row(0, i, v)
	}
	for i := 0; i < 10; i++ { // hours 1 and 2: opening hour 2 closes hour 0
		row(1, i, 1)
		row(2, i, 1)
	}
	for i := 300; i < 310; i++ { // hour 0 again: the router waits for its attach
		row(0, i, 1)
	}
	cfg := testConfig(1)
	cfg.BatchRows, cfg.Bulk, cfg.BulkUnitRows, cfg.MaxRejects = 50, true, 100, 0
	done := make(chan error, 1)
	go func() {
		_, _, err := loadCSV(t, pool, m, "conditions", in.String(), cfg)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrTooManyRejects) {
			t.Fatalf("err = %v, want too many rejects", err)
		}
	case <-time.After(time.Minute): // liveness, not speed: the load ends at once when it does not hang
		t.Fatal("the load hangs: the router waits for an attach that cannot come")
	}
}

// TestBulkLateRows loads rows that come back to hours the bulk path has
// already closed (input out of order across partition boundaries): every
// row is stored once, as the live path stores them. The first late row
// goes the live way into its attached partition and keeps more
// partitions open from then on, so that the next late row (for the hour
// before the one being read) still goes with its partition's unit.
func TestBulkLateRows(t *testing.T) {
	var in strings.Builder
	dev := 0
	rows := func(hour, n int) {
		for range n {
			dev++
			fmt.Fprintf(&in, "1970-01-01 %02d:%02d:%02d+00,%d,1,2,3,4,5\n", hour, dev%60, dev/60%60, dev)
		}
	}
	rows(0, 2500)
	rows(1, 2500)
	rows(0, 5) // hour 0 was closed when hour 1 opened
	rows(2, 2500)
	rows(1, 5) // hour 1 is still open: more are held since the late rows of hour 0
	rows(0, 3)
	rows(3, 2500)
	var states [2]string
	for i, bulk := range []bool{false, true} {
		pool, m, _ := hourly(t, pgtest.DB(t))
		cfg := bulkConfig(2)
		cfg.BatchRows, cfg.Bulk = 1000, bulk
		sum, rejects, err := loadCSV(t, pool, m, "conditions", in.String(), cfg)
		if err != nil || len(rejects) != 0 || sum.Loaded != int64(dev) {
			t.Fatalf("bulk=%v: %v; summary %+v; rejects %v", bulk, err, sum, rejects)
		}
		states[i] = tableState(t, pool, "conditions_p1970%")
	}
	if states[0] != states[1] {
		t.Fatalf("live and bulk loads differ:\nlive:\n%s\nbulk:\n%s", states[0], states[1])
	}
	if !strings.Contains(states[1], "conditions_p19700101_03") || strings.Contains(states[1], "bulk load") {
		t.Fatalf("unexpected state:\n%s", states[1])
	}
}
