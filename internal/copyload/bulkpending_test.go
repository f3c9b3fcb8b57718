package copyload

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgts/pgts/internal/catalog"
	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pgtest"
	"github.com/pgts/pgts/internal/records"
)

// interruptSplit runs a bulk load of faultRows rows in time order over 6
// hourly partitions of 2020-01-01 (4,000 rows each) under loadID, split
// (1,500-row units, 500-row batches), and cancels it after stopAt
// batches: some partitions attached, one left unattached.
func interruptSplit(t *testing.T, pool *pgxpool.Pool, m *partition.Manager, target *Target, loadID string, stopAt int64) Summary {
	t.Helper()
	cctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sum, err := sortedLoad(t, cctx, pool, m, target, loadID, stopAt, cancel)
	if !errors.Is(err, context.Canceled) || sum.Loaded == 0 || sum.Loaded >= faultRows {
		t.Fatalf("interrupted run: %+v, %v", sum, err)
	}
	return sum
}

// splitLoad runs the whole load of interruptSplit under loadID.
func splitLoad(t *testing.T, pool *pgxpool.Pool, m *partition.Manager, target *Target, loadID string) (Summary, error) {
	t.Helper()
	return sortedLoad(t, context.Background(), pool, m, target, loadID, 0, nil)
}

// sortedLoad is the load of interruptSplit; with stop, it calls stop once
// stopAt batches committed.
func sortedLoad(t *testing.T, ctx context.Context, pool *pgxpool.Pool, m *partition.Manager, target *Target, loadID string,
	stopAt int64, stop func()) (Summary, error) {
	t.Helper()
	cfg := bulkConfig(2)
	cfg.BatchRows, cfg.LoadID, cfg.Fingerprint, cfg.BulkUnitRows = faultBatch, loadID, "fp", 1500
	var batches atomic.Int64
	cfg.OnBatch = func(BatchInfo) {
		if batches.Add(1) == stopAt && stop != nil {
			stop()
		}
	}
	l, err := New(pool, m, target, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return l.Run(ctx, csvSource(t, "sorted.csv", faultInput(0, false, 0)))
}

// csvSource reads the CSV input, all seven conditions columns.
func csvSource(t *testing.T, name, input string) *FileSource {
	t.Helper()
	rd, err := records.NewReader(strings.NewReader(input), records.DefaultOptions(records.CSV))
	if err != nil {
		t.Fatal(err)
	}
	return &FileSource{Inputs: []Input{{Name: name, Reader: rd}}, Columns: []int{0, 1, 2, 3, 4, 5, 6}}
}

func pendingOf(t *testing.T, pool *pgxpool.Pool) []string {
	t.Helper()
	return pgtest.Rows(t, pool, `SELECT partition_name || ' ' || load_id FROM pgts.bulk_partition ORDER BY 1`)
}

// TestBulkPendingBelongsToItsLoad: the partition an interrupted bulk load
// left unattached is that load's alone. Another load (another ID) meeting
// it is refused, naming the owner, and never fills nor attaches it; once
// the owner has finished, the other load completes too, and each row is
// stored once per completed load.
func TestBulkPendingBelongsToItsLoad(t *testing.T) {
	ctx := context.Background()
	pool, m, target := hourly(t, pgtest.DB(t))
	first := interruptSplit(t, pool, m, target, "X9", 20)
	if p := pendingOf(t, pool); len(p) != 1 || !strings.HasSuffix(p[0], " X9") {
		t.Fatalf("pending after the interrupt: %v", p)
	}
	if len(first.Pending) != 1 || first.Pending[0].Rows == 0 {
		t.Fatalf("the interrupted run's summary names no pending partition: %+v", first.Pending)
	}
	_, err := splitLoad(t, pool, m, target, "Y9")
	var pe *partition.BulkPendingError
	if !errors.As(err, &pe) || pe.LoadID != "X9" || !strings.Contains(err.Error(), "pgts loads abandon X9") {
		t.Fatalf("another load meeting X9's unattached partition: %v", err)
	}
	if p := pendingOf(t, pool); len(p) != 1 || !strings.HasSuffix(p[0], " X9") {
		t.Fatalf("pending after the refused load: %v", p)
	}
	for _, id := range []string{"X9", "Y9"} {
		if sum, err := splitLoad(t, pool, m, target, id); err != nil || sum.Loaded+sum.Skipped != faultRows {
			t.Fatalf("load %s: %+v, %v", id, sum, err)
		}
	}
	var rows, distinct int64
	if err := pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT (time, device)) FROM conditions`).Scan(&rows, &distinct); err != nil {
		t.Fatal(err)
	}
	if rows != 2*faultRows || distinct != faultRows {
		t.Fatalf("after X9 and Y9 completed: %d rows, %d distinct; want each row twice", rows, distinct)
	}
	if p := pendingOf(t, pool); len(p) != 0 {
		t.Fatalf("pending after both loads completed: %v", p)
	}
}

// TestTableDropDropsPendingBulk: dropping a series table drops the
// partitions its interrupted bulk loads left unattached, so a table made
// again under the same name and the same load ID loads every row once.
func TestTableDropDropsPendingBulk(t *testing.T) {
	ctx := context.Background()
	url := pgtest.DB(t)
	pool, m, target := hourly(t, url)
	interruptSplit(t, pool, m, target, "D1", 20)
	if err := m.Drop(ctx, target.Series); err != nil {
		t.Fatal(err)
	}
	var left int64
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_class WHERE relname LIKE 'conditions%' AND relkind = 'r'`).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 || len(pendingOf(t, pool)) != 0 {
		t.Fatalf("after table drop: %d tables named conditions*, pending %v", left, pendingOf(t, pool))
	}
	_, m, target = hourly(t, url)
	if sum, err := splitLoad(t, pool, m, target, "D1"); err != nil || sum.Loaded != faultRows || sum.Skipped != 0 {
		t.Fatalf("load into the new table: %+v, %v", sum, err)
	}
	if rows, distinct := countRows(t, pool); rows != faultRows || distinct != faultRows {
		t.Fatalf("the new table holds %d rows, %d distinct", rows, distinct)
	}
}

// TestLiveLoadRefusesPendingRange: a load without --bulk into the range
// of an unattached bulk partition is refused with the owner's name and
// the fix, not the server's "relation already exists"; so is the owner's
// own resume without --bulk (its batches were cut the bulk way).
func TestLiveLoadRefusesPendingRange(t *testing.T) {
	pool, m, target := hourly(t, pgtest.DB(t))
	interruptSplit(t, pool, m, target, "L1", 20)
	var extra int64 // rows the refused loads stored before they met the pending partition
	for _, id := range []string{"", "other"} {
		cfg := bulkConfig(2)
		cfg.Bulk, cfg.LoadID, cfg.Fingerprint = false, id, "fp"
		l, err := New(pool, m, target, cfg)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := l.Run(context.Background(), csvSource(t, "sorted.csv", faultInput(0, false, 0)))
		extra += sum.Loaded
		var pe *partition.BulkPendingError
		if !errors.As(err, &pe) || pe.LoadID != "L1" || strings.Contains(err.Error(), "42P07") {
			t.Fatalf("live load (id %q) into the pending range: %v", id, err)
		}
	}
	cfg := bulkConfig(2)
	cfg.Bulk, cfg.BatchRows, cfg.LoadID, cfg.Fingerprint = false, faultBatch, "L1", "fp"
	l, err := New(pool, m, target, cfg)
	if err != nil {
		t.Fatal(err)
	}
	_, err = l.Run(context.Background(), csvSource(t, "sorted.csv", faultInput(0, false, 0)))
	if err == nil || !strings.Contains(err.Error(), "bulk=on") {
		t.Fatalf("the owner's resume without --bulk: %v", err)
	}
	if sum, err := splitLoad(t, pool, m, target, "L1"); err != nil || sum.Loaded+sum.Skipped != faultRows {
		t.Fatalf("the owner's resume: %+v, %v", sum, err)
	}
	if rows, distinct := countRows(t, pool); rows != faultRows+extra || distinct != faultRows || len(pendingOf(t, pool)) != 0 {
		t.Fatalf("%d rows, %d distinct, pending %v; want %d rows", rows, distinct, pendingOf(t, pool), faultRows+extra)
	}
}

// shuffledConditions is n conditions rows over hours hourly partitions
// of 2020-01-01, in an order shuffled with seed: CSV, all seven columns.
func shuffledConditions(n, hours int, seed uint64) string {
	start := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	lines := make([]string, n)
	for i := range lines {
		ts := start.Add(time.Duration(i) * time.Duration(hours) * time.Hour / time.Duration(n))
		lines[i] = fmt.Sprintf("%s,%d,%d.5,%d,1,2,3", ts.Format("2006-01-02 15:04:05.000000+00"), i%100, i, i%7)
	}
	r := rand.New(rand.NewPCG(seed, 1))
	r.Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
	return strings.Join(lines, "\n") + "\n"
}

// TestBulkShuffledResume: a bulk load of rows in no time order resumes
// exactly, after it completed and after an interrupt, into partitions
// that the first run made (units, split) or left unattached: its batches
// are cut as in the first run although the partitions now exist.
func TestBulkShuffledResume(t *testing.T) {
	input := shuffledConditions(30_000, 6, 7)
	for _, tc := range []struct {
		name     string
		unitRows int
		stopAt   int64 // 0: the first run completes
	}{
		{"completed, units", 0, 0},
		{"completed, split", 2000, 0},
		{"interrupted, units", 0, 40},
		{"interrupted, split", 2000, 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pool, m, target := hourly(t, pgtest.DB(t))
			run := func(stopAt int64) (Summary, error) {
				cctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				cfg := bulkConfig(2)
				cfg.BatchRows, cfg.LoadID, cfg.Fingerprint, cfg.BulkUnitRows = 500, "sh2", "fp", tc.unitRows
				var n atomic.Int64
				cfg.OnBatch = func(BatchInfo) {
					if stopAt > 0 && n.Add(1) == stopAt {
						cancel()
					}
				}
				l, err := New(pool, m, target, cfg)
				if err != nil {
					t.Fatal(err)
				}
				return l.Run(cctx, csvSource(t, "shuf.csv", input))
			}
			first, err := run(tc.stopAt)
			if (tc.stopAt == 0) != (err == nil) {
				t.Fatalf("first run: %+v, %v", first, err)
			}
			second, err := run(0)
			if err != nil {
				t.Fatalf("rerun: %v", err)
			}
			if second.Skipped != first.Loaded || second.Loaded+second.Skipped != 30_000 {
				t.Fatalf("rerun: %+v after a first run that loaded %d", second, first.Loaded)
			}
			checkAllAttached(t, pool, 30_000)
			if rows, distinct := countRows(t, pool); rows != 30_000 || distinct != 30_000 {
				t.Fatalf("%d rows, %d distinct", rows, distinct)
			}
		})
	}
}

// TestBulkWithoutLoadID: a bulk load given no load ID gets one (a split
// partition may take several transactions, and only a ledger tells a
// rerun which committed); its summary names it, and the ledger of a
// completed load is forgotten.
func TestBulkWithoutLoadID(t *testing.T) {
	pool, m, target := hourly(t, pgtest.DB(t))
	first := interruptSplit(t, pool, m, target, "", 20)
	if !strings.HasPrefix(first.LoadID, "bulk-public.conditions-") {
		t.Fatalf("interrupted bulk load without an ID: summary load ID %q", first.LoadID)
	}
	if p := pendingOf(t, pool); len(p) != 1 || !strings.HasSuffix(p[0], " "+first.LoadID) {
		t.Fatalf("pending: %v", p)
	}
	if sum, err := splitLoad(t, pool, m, target, first.LoadID); err != nil || sum.Skipped != first.Loaded {
		t.Fatalf("resume under the made ID: %+v, %v", sum, err)
	}
	sum, err := splitLoad(t, pool, m, target, "")
	if err != nil || sum.LoadID == "" || sum.Loaded != faultRows {
		t.Fatalf("a complete bulk load without an ID: %+v, %v", sum, err)
	}
	if n := pgtest.Rows(t, pool, `SELECT load_id FROM pgts.load WHERE load_id = $1`, sum.LoadID); len(n) != 0 {
		t.Fatalf("the made ID's ledger was kept: %v", n)
	}
}

// TestAbandon gives up an interrupted bulk load: its unattached partition
// is dropped and its ledger deleted; the rows it attached stay, and the
// load ID starts afresh.
func TestAbandon(t *testing.T) {
	ctx := context.Background()
	pool, m, target := hourly(t, pgtest.DB(t))
	interruptSplit(t, pool, m, target, "A1", 20)
	visible, _ := countRows(t, pool)
	var hidden int64
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM `+strings.Fields(pendingOf(t, pool)[0])[0]).Scan(&hidden); err != nil {
		t.Fatal(err)
	}
	got, err := Abandon(ctx, pool, "A1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Target != "public.conditions" || len(got.Partitions) != 1 || got.Rows != hidden || got.Batches == 0 {
		t.Fatalf("abandon: %+v (the unattached partition held %d rows)", got, hidden)
	}
	if after, _ := countRows(t, pool); after != visible || len(pendingOf(t, pool)) != 0 {
		t.Fatalf("after abandon: %d rows visible (was %d), pending %v", after, visible, pendingOf(t, pool))
	}
	if _, err := Abandon(ctx, pool, "A1"); !errors.Is(err, ErrNoSuchLoad) {
		t.Fatalf("abandoning it again: %v", err)
	}
	// A1 loads everything again: the rows it had attached are there twice.
	if sum, err := splitLoad(t, pool, m, target, "A1"); err != nil || sum.Skipped != 0 || sum.Loaded != faultRows {
		t.Fatalf("A1 afresh: %+v, %v", sum, err)
	}
	if rows, _ := countRows(t, pool); rows != faultRows+visible {
		t.Fatalf("%d rows; want %d", rows, faultRows+visible)
	}
}

// TestAbandonRunning refuses to abandon a load whose run holds its lock.
func TestAbandonRunning(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock($1, hashtext('R1'))`, catalog.LoadLockKey); err != nil {
		t.Fatal(err)
	}
	if _, err := Abandon(ctx, pool, "R1"); !errors.Is(err, ErrLoadRunning) {
		t.Fatalf("abandoning a running load: %v", err)
	}
}

// TestServerDiesAfterLastBatch: the server going away once every batch
// has committed (during ANALYZE and the ledger's end) leaves a complete
// load: its rows are committed, so the run succeeds with a warning.
func TestServerDiesAfterLastBatch(t *testing.T) {
	ctx := context.Background()
	url := pgtest.Servers(t, 1)[0]
	cluster := pgtest.ServerCluster(t, 0)
	info, err := cluster.Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pool, m, target := hourly(t, url)
	cfg := testConfig(1)
	cfg.BatchRows, cfg.LoadID, cfg.Fingerprint, cfg.Analyze = 1000, "last", "fp", true
	cfg.Retry = RetryPolicy{Attempts: 2, BaseDelay: 10 * time.Millisecond, MaxDelay: 20 * time.Millisecond}
	var n atomic.Int64
	cfg.OnBatch = func(BatchInfo) {
		if n.Add(1) == 20 {
			if err := syscall.Kill(info.PID, syscall.SIGKILL); err != nil {
				t.Errorf("kill -9: %v", err)
			}
		}
	}
	l, err := New(pool, m, target, cfg)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := l.Run(ctx, &GenSource{Name: "conditions", Gen: hourlyRows(t, 20)})
	if err != nil || !sum.Complete || sum.Loaded != 20_000 {
		t.Fatalf("a load whose last batch committed before the server died: %+v, %v", sum, err)
	}
	pool.Reset()
	if _, err := cluster.Start(ctx); err != nil {
		t.Fatalf("restarting the server: %v", err)
	}
	if rows, _ := countRows(t, pool); rows != 20_000 {
		t.Fatalf("%d rows stored after the restart", rows)
	}
}
