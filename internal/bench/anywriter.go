package bench

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"

	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pg"
)

// AnyWriterScenario measures what writing through any SQL client costs
// when the rows' partitions are not made yet (they wait in the table's
// DEFAULT partition, see partition.MoveWaiting) against the same rows into
// premade partitions: Sessions connections of single-row INSERTs
// (autocommit), and one session's multi-row INSERT backfill. The steps of
// a round run in turn on fresh tables, and rounds repeat so that a noisy
// machine shows in the spread.
type AnyWriterScenario struct {
	ConnString   string
	Sessions     int   // connections inserting one row per statement
	Rows         int64 // rows of the single-row step, over all sessions
	BackfillRows int64 // rows of the backfill step
	BatchRows    int   // rows per multi-row INSERT of the backfill
	Days         int   // the rows' times cover this many past days (one partition a day)
	Repeat       int   // rounds
	Logger       *slog.Logger
}

// DefaultAnyWriterScenario is the scenario of make bench-insert-any.
func DefaultAnyWriterScenario() AnyWriterScenario {
	return AnyWriterScenario{Sessions: 16, Rows: 40000, BackfillRows: 400000, BatchRows: 1000, Days: 30, Repeat: 3}
}

// Validate checks the scenario.
func (s *AnyWriterScenario) Validate() error {
	switch {
	case s.Sessions < 1 || s.Sessions > 256:
		return fmt.Errorf("--sessions %d: must be 1 to 256", s.Sessions)
	case s.Rows < int64(s.Sessions):
		return fmt.Errorf("--rows %d: at least one per session", s.Rows)
	case s.BackfillRows < 1 || s.BatchRows < 1 || s.BatchRows > 10000:
		return fmt.Errorf("--backfill-rows %d, --batch-rows %d: positive, batches at most 10,000 rows", s.BackfillRows, s.BatchRows)
	case s.Days < 1 || s.Days > 300:
		return fmt.Errorf("--days %d: must be 1 to 300", s.Days)
	case s.Repeat < 1:
		return fmt.Errorf("--repeat %d: at least 1", s.Repeat)
	}
	return nil
}

// AnyWriterStep is one measured step of one round.
type AnyWriterStep struct {
	Step       string  `json:"step"` // "1-row premade", "1-row missing", "backfill premade", "backfill missing"
	Round      int     `json:"round"`
	Rows       int64   `json:"rows"`
	Seconds    float64 `json:"seconds"`
	RowsPerSec float64 `json:"rows_per_second"`
	// MoveSeconds: for a "missing" step, the time MoveWaiting took to make
	// the partitions and move the rows afterwards.
	MoveSeconds float64 `json:"move_seconds,omitempty"`
	Partitions  int     `json:"partitions_made_by_move,omitempty"`
}

// AnyWriterResult is a whole run.
type AnyWriterResult struct {
	Scenario AnyWriterScenario `json:"scenario"`
	Steps    []AnyWriterStep   `json:"steps"`
}

// Median returns the median rows/s and move seconds of a step over the
// rounds.
func (r AnyWriterResult) Median(step string) (rowsPerSec, moveSeconds float64) {
	var rates, moves []float64
	for _, s := range r.Steps {
		if s.Step == step {
			rates, moves = append(rates, s.RowsPerSec), append(moves, s.MoveSeconds)
		}
	}
	return median(rates), median(moves)
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

// AnyWriterSteps are the steps in the order each round runs them.
var AnyWriterSteps = []string{"1-row premade", "1-row missing", "backfill premade", "backfill missing"}

// RunAnyWriter runs the scenario's rounds; each step makes its table
// afresh (anywriter_bench, dropped at the end).
func RunAnyWriter(ctx context.Context, s AnyWriterScenario) (AnyWriterResult, error) {
	res := AnyWriterResult{Scenario: s}
	res.Scenario.ConnString = ""
	if s.Logger == nil {
		s.Logger = slog.New(slog.DiscardHandler)
	}
	pool, err := pg.NewPool(ctx, s.ConnString, int32(s.Sessions+2))
	if err != nil {
		return res, err
	}
	defer pool.Close()
	for round := 1; round <= s.Repeat; round++ {
		for _, step := range AnyWriterSteps {
			st, err := runAnyWriterStep(ctx, pool, s, step)
			if err != nil {
				return res, fmt.Errorf("round %d, %s: %w", round, step, err)
			}
			st.Round = round
			s.Logger.Info("step done", "round", round, "step", step, "rows_per_second", int64(st.RowsPerSec), "move_seconds", fmt.Sprintf("%.2f", st.MoveSeconds))
			res.Steps = append(res.Steps, st)
		}
	}
	return res, nil
}

const anyWriterTable = "anywriter_bench"

// anyWriterTime is row i's time: Days past days, whole seconds, the same
// for every step.
func anyWriterTime(now time.Time, s AnyWriterScenario, i int64) time.Time {
	span := int64(s.Days)*86400 - 3600
	return now.Add(-time.Duration((i*7919)%span+1800) * time.Second).Truncate(time.Second)
}

func runAnyWriterStep(ctx context.Context, pool *pgxpool.Pool, s AnyWriterScenario, step string) (AnyWriterStep, error) {
	st := AnyWriterStep{Step: step}
	m := partition.NewManager(pool, s.Logger, time.Now)
	if _, err := pool.Exec(ctx, "DROP TABLE IF EXISTS "+anyWriterTable); err != nil {
		return st, err
	}
	if _, err := pool.Exec(ctx, `DELETE FROM pgts.series_table WHERE table_name = $1`, anyWriterTable); err != nil && pg.SQLState(err) != "42P01" {
		return st, err
	}
	past, future := partition.Interval{Days: int32(s.Days) + 2}, partition.Interval{Days: 7}
	tb, err := m.Create(ctx, partition.CreateSpec{Name: anyWriterTable, TimeColumn: "time", Interval: partition.Interval{Days: 1}, Premake: 1,
		Columns: "time timestamptz not null, device int not null, value float8", AcceptPast: &past, AcceptFuture: &future})
	if err != nil {
		return st, err
	}
	defer pool.Exec(context.WithoutCancel(ctx), "DROP TABLE IF EXISTS "+anyWriterTable)                                //nolint:errcheck // best effort
	defer pool.Exec(context.WithoutCancel(ctx), `DELETE FROM pgts.series_table WHERE table_name = $1`, anyWriterTable) //nolint:errcheck // best effort
	now := time.Now()
	rows := s.Rows
	if strings.HasPrefix(step, "backfill") {
		rows = s.BackfillRows
	}
	if strings.HasSuffix(step, "premade") {
		times := make([]int64, 0, s.Days+1)
		for d := 0; d <= s.Days; d++ {
			times = append(times, now.AddDate(0, 0, -d).UnixMicro())
		}
		if _, err := m.Ensure(ctx, tb, times); err != nil {
			return st, err
		}
	}
	start := time.Now()
	if strings.HasPrefix(step, "backfill") {
		err = anyWriterBackfill(ctx, pool, s, now, rows)
	} else {
		err = anyWriterSingles(ctx, pool, s, now, rows)
	}
	if err != nil {
		return st, err
	}
	st.Seconds = time.Since(start).Seconds()
	st.Rows, st.RowsPerSec = rows, float64(rows)/st.Seconds
	if strings.HasSuffix(step, "missing") {
		t0 := time.Now()
		made, moved, err := m.MoveWaiting(ctx, tb)
		if err != nil {
			return st, err
		}
		if w, err := m.Waiting(ctx, tb); err != nil || w != 0 {
			return st, fmt.Errorf("after moving %d rows, %d wait (%v)", moved, w, err)
		}
		st.MoveSeconds, st.Partitions = time.Since(t0).Seconds(), made
	}
	var n int64
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM "+anyWriterTable).Scan(&n); err != nil || n != rows {
		return st, fmt.Errorf("the table holds %d rows (%v), want %d", n, err, rows)
	}
	return st, nil
}

// anyWriterSingles inserts rows one per statement over s.Sessions
// connections (extended protocol, autocommit).
func anyWriterSingles(ctx context.Context, pool *pgxpool.Pool, s AnyWriterScenario, now time.Time, rows int64) error {
	g, gctx := errgroup.WithContext(ctx)
	var mu sync.Mutex
	next := int64(0)
	take := func() (int64, bool) {
		mu.Lock()
		defer mu.Unlock()
		if next >= rows {
			return 0, false
		}
		next++
		return next - 1, true
	}
	q := "INSERT INTO " + anyWriterTable + " (time, device, value) VALUES ($1, $2, $3)"
	for w := 0; w < s.Sessions; w++ {
		g.Go(func() error {
			conn, err := pool.Acquire(gctx)
			if err != nil {
				return err
			}
			defer conn.Release()
			for {
				i, ok := take()
				if !ok {
					return nil
				}
				if _, err := conn.Exec(gctx, q, anyWriterTime(now, s, i), int32(i%1000), float64(i)); err != nil {
					return fmt.Errorf("row %d: %w", i, err)
				}
			}
		})
	}
	return g.Wait()
}

// anyWriterBackfill inserts rows in multi-row INSERT statements of
// s.BatchRows rows from one connection, as a backfill script does.
func anyWriterBackfill(ctx context.Context, pool *pgxpool.Pool, s AnyWriterScenario, now time.Time, rows int64) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	for lo := int64(0); lo < rows; lo += int64(s.BatchRows) {
		n := min(int64(s.BatchRows), rows-lo)
		var b strings.Builder
		b.WriteString("INSERT INTO " + anyWriterTable + " (time, device, value) VALUES ")
		for i := lo; i < lo+n; i++ {
			if i > lo {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "('%s',%d,%d)", anyWriterTime(now, s, i).UTC().Format("2006-01-02 15:04:05+00"), i%1000, i)
		}
		if _, err := conn.Exec(ctx, b.String(), pgx.QueryExecModeSimpleProtocol); err != nil {
			return fmt.Errorf("rows %d-%d: %w", lo, lo+n-1, err)
		}
	}
	return nil
}
