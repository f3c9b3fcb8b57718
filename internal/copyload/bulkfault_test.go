package copyload

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgts/pgts/internal/catalog"
	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pg"
	"github.com/pgts/pgts/internal/pgtest"
	"github.com/pgts/pgts/internal/records"
)

// The bulk fault test's child: a bulk load of a CSV file into conditions,
// in a process of its own, to be killed with SIGKILL. Exit status 4 when
// another load's unattached partition refused it.
const (
	faultChildEnv = "PGTS_BULK_FAULT_CHILD" // the database URL
	faultRows     = 24_000                  // rows per load: 6 hourly partitions of 4,000
	faultBatch    = 500
)

func faultChild() int {
	ctx := context.Background()
	pool, err := pg.NewPool(ctx, os.Getenv(faultChildEnv), 8)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer pool.Close()
	m := partition.NewManager(pool, nil, time.Now)
	target, err := LookupTarget(ctx, pool, m, "conditions")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	f, err := os.Open(os.Getenv("PGTS_BULK_FAULT_FILE"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer f.Close()
	rd, err := records.NewReader(f, records.DefaultOptions(records.CSV))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cfg := DefaultConfig()
	cfg.Workers, cfg.BatchRows, cfg.Bulk, cfg.Fingerprint = 2, faultBatch, true, "fp"
	cfg.LoadID = os.Getenv("PGTS_BULK_FAULT_ID")
	cfg.BulkUnitRows, _ = strconv.Atoi(os.Getenv("PGTS_BULK_FAULT_UNIT"))
	l, err := New(pool, m, target, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	_, err = l.Run(ctx, &FileSource{Inputs: []Input{{Name: "in.csv", Reader: rd}}, Columns: []int{0, 1, 2, 3, 4, 5, 6}})
	var pe *partition.BulkPendingError
	switch {
	case errors.As(err, &pe):
		fmt.Fprintln(os.Stderr, err)
		return 4
	case err != nil:
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// faultLoad is one of the fault test's loads: its input and what the
// test knows of it.
type faultLoad struct {
	id, file string
	state    string // new, interrupted, blocked (refused by another's unattached partition), done
	// leftover: rows of an abandoned run still stored (it had attached
	// them); they stay, on top of the rows of the completed run.
	leftover int64
}

// TestBulkFaults kills bulk loads at random moments, again and again: two
// load IDs over the same hourly partitions (one in time order, one
// shuffled, other devices), units and split partitions chosen at random
// per run, a rerun or the other load after each kill, and once a table
// drop. After every step the only unattached partitions are those of
// interrupted loads; at the end, with every load completed (or, where the
// two held partitions the other needed, one abandoned and rerun), the
// table holds each load's rows exactly once, and nothing is unattached.
func TestBulkFaults(t *testing.T) {
	ctx := context.Background()
	url := pgtest.DB(t)
	pool, m, target := hourly(t, url)
	dir := t.TempDir()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 2))
	files := []string{filepath.Join(dir, "sorted.csv"), filepath.Join(dir, "shuffled.csv")}
	for i, in := range []string{faultInput(0, false, 0), faultInput(1000, true, seed)} {
		if err := os.WriteFile(files[i], []byte(in), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var loads []*faultLoad
	more := func() { // two more loads: the sorted file, the shuffled one
		n := len(loads) / 2
		loads = append(loads, &faultLoad{id: fmt.Sprintf("A%d", n), file: files[0], state: "new"},
			&faultLoad{id: fmt.Sprintf("B%d", n), file: files[1], state: "new"})
	}
	more()
	// unblock: a load finished or was given up, so the partitions it held
	// are attached or gone; those it blocked may go on.
	unblock := func() {
		for _, l := range loads {
			if l.state == "blocked" {
				l.state = "interrupted"
			}
		}
	}
	// next picks a load to run: at random among those not done, a blocked
	// one only when all are (then one is abandoned). nil when all are done.
	next := func(rng *rand.Rand) *faultLoad {
		var active, free []*faultLoad
		for _, l := range loads {
			if l.state != "done" {
				active = append(active, l)
				if l.state != "blocked" {
					free = append(free, l)
				}
			}
		}
		switch {
		case len(active) == 0:
			return nil
		case len(free) == 0:
			// Each holds a partition another needs: give one up.
			l := active[rng.IntN(len(active))]
			faultAbandon(t, pool, l)
			unblock()
			return l
		}
		return free[rng.IntN(len(free))]
	}
	kills, dropped := 0, false
	for step := 0; kills < 20; step++ {
		if step > 200 {
			t.Fatalf("only %d kills in %d steps", kills, step)
		}
		if !dropped && kills == 10 {
			// The table is dropped and made again: ledgers and unattached
			// partitions go with it; the loads start afresh.
			if err := m.Drop(ctx, target.Series); err != nil {
				t.Fatal(err)
			}
			pool, m, target = hourly(t, url)
			loads, dropped = nil, true
			more()
			t.Logf("after %d kills: table dropped and made again", kills)
			faultCheck(t, pool, loads)
		}
		l := next(rng)
		if l == nil {
			more()
			continue
		}
		unit := []int{0, 1500}[rng.IntN(2)]
		code, stderr, killed := faultRun(t, pool, url, l, unit, rng)
		switch {
		case killed:
			kills++
			l.state = "interrupted"
		case code == 0:
			l.state = "done"
			unblock()
		case code == 4:
			l.state = "blocked"
		default:
			t.Fatalf("load %s: exit %d: %s", l.id, code, stderr)
		}
		t.Logf("step %d: load %s, unit rows %d: killed %v, exit %d: %s", step, l.id, unit, killed, code, l.state)
		faultCheck(t, pool, loads)
	}
	// Finish every load, without kills.
	for round := 0; ; round++ {
		if round > 40 {
			t.Fatal("the loads did not complete")
		}
		l := next(rng)
		if l == nil {
			break
		}
		switch code, stderr, _ := faultRun(t, pool, url, l, 0, nil); code {
		case 0:
			l.state = "done"
			unblock()
		case 4:
			l.state = "blocked"
		default:
			t.Fatalf("load %s: exit %d: %s", l.id, code, stderr)
		}
		faultCheck(t, pool, loads)
	}
	if left := pgtest.Rows(t, pool, `SELECT partition_name FROM pgts.bulk_partition`); len(left) > 0 {
		t.Fatalf("unattached partitions left once every load completed: %v", left)
	}
	var rows, distinct int64
	if err := pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT (time, device)) FROM conditions`).Scan(&rows, &distinct); err != nil {
		t.Fatal(err)
	}
	want, leftover := int64(0), int64(0)
	for _, l := range loads {
		want += faultRows + l.leftover
		leftover += l.leftover
	}
	if rows != want || distinct != 2*faultRows {
		t.Fatalf("after %d kills and %d loads: %d rows, %d distinct; want %d rows (%d of them left by abandoned runs), %d distinct",
			kills, len(loads), rows, distinct, want, leftover, 2*faultRows)
	}
	t.Logf("%d kills, %d loads completed, %d rows left by abandoned runs", kills, len(loads), leftover)
}

// faultInput is faultRows conditions rows over 6 hours of 2020-01-01,
// devices from dev0, in time order or shuffled with seed.
func faultInput(dev0 int, shuffle bool, seed uint64) string {
	start := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	lines := make([]string, faultRows)
	for i := range lines {
		ts := start.Add(time.Duration(i) * 6 * time.Hour / faultRows)
		lines[i] = fmt.Sprintf("%s,%d,%d.25,%d,1,2,3", ts.Format("2006-01-02 15:04:05.000000+00"), dev0+i%50, i, i%9)
	}
	if shuffle {
		r := rand.New(rand.NewPCG(seed, 3))
		r.Shuffle(len(lines), func(i, j int) { lines[i], lines[j] = lines[j], lines[i] })
	}
	return strings.Join(lines, "\n") + "\n"
}

// faultRun runs load l in a child process. With rng, the child is killed
// (SIGKILL) once a random number of its batches committed, unless it ends
// first; killed says whether it was.
func faultRun(t *testing.T, pool *pgxpool.Pool, url string, l *faultLoad, unit int, rng *rand.Rand) (code int, stderr string, killed bool) {
	t.Helper()
	before := ledgerBatches(t, pool, l.id)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), faultChildEnv+"="+url, "PGTS_BULK_FAULT_FILE="+l.file, "PGTS_BULK_FAULT_ID="+l.id,
		"PGTS_BULK_FAULT_UNIT="+strconv.Itoa(unit))
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }() //nolint:errcheck // the exit status is read below
	if rng != nil {
		at := before + 1 + rng.Int64N(faultRows/faultBatch)
		deadline := time.Now().Add(2 * time.Minute)
	wait:
		for ledgerBatches(t, pool, l.id) < at {
			select {
			case <-done:
				break wait
			default:
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill() //nolint:errcheck // failing anyway
				t.Fatal("no progress")
			}
			time.Sleep(2 * time.Millisecond) // polling another process's progress
		}
		select {
		case <-done:
		default:
			killed = cmd.Process.Signal(syscall.SIGKILL) == nil
		}
	}
	<-done
	if killed {
		waitUnlocked(t, pool, l.id)
		return -1, errb.String(), true
	}
	return cmd.ProcessState.ExitCode(), errb.String(), false
}

// waitUnlocked waits until no session holds load id's lock: the server
// ends the killed child's sessions once it sees their sockets closed.
func waitUnlocked(t *testing.T, pool *pgxpool.Pool, id string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		var held bool
		if err := pool.QueryRow(context.Background(), `SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory'
			AND classid::bigint = $1 AND objid::bigint = (hashtext($2)::bigint & 4294967295) AND objsubid = 2)`,
			catalog.LoadLockKey, id).Scan(&held); err != nil {
			t.Fatal(err)
		}
		if !held {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("load %s still locked a minute after its process was killed", id)
		}
		time.Sleep(5 * time.Millisecond) // polling the server's view of another process
	}
}

// faultAbandon gives up load l, remembering the rows it had attached,
// which stay.
func faultAbandon(t *testing.T, pool *pgxpool.Pool, l *faultLoad) {
	t.Helper()
	var committed int64
	if err := pool.QueryRow(context.Background(), `SELECT coalesce(sum(rows), 0) FROM pgts.load_batch WHERE load_id = $1`, l.id).Scan(&committed); err != nil {
		t.Fatal(err)
	}
	got, err := Abandon(context.Background(), pool, l.id)
	if err != nil {
		t.Fatal(err)
	}
	l.leftover += committed - got.Rows
	l.state = "new"
	t.Logf("abandoned %s: %d rows attached stay, %d unattached dropped", l.id, committed-got.Rows, got.Rows)
}

// faultCheck: unattached partitions belong to interrupted (or blocked)
// loads only, and every unattached table is a recorded pending one.
func faultCheck(t *testing.T, pool *pgxpool.Pool, loads []*faultLoad) {
	t.Helper()
	for _, p := range pgtest.Rows(t, pool, `SELECT load_id FROM pgts.bulk_partition`) {
		for _, l := range loads {
			if l.id == p && (l.state == "done" || l.state == "new") {
				t.Fatalf("load %s (%s) holds an unattached partition", l.id, l.state)
			}
		}
	}
	if stray := pgtest.Rows(t, pool, `SELECT c.relname FROM pg_class c WHERE c.relname LIKE 'conditions_p%' AND c.relkind = 'r'
		AND NOT c.relispartition AND NOT EXISTS (SELECT 1 FROM pgts.bulk_partition b WHERE b.partition_name = c.relname)`); len(stray) > 0 {
		t.Fatalf("unattached tables no load holds: %v", stray)
	}
}
