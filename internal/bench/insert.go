package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgts/pgts/internal/gen"
	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pg"
)

// The insert benchmark's steps, in the order they run.
//
//	l.i0    load RowsLoad rows in primary-key order, no secondary index, 100 rows a commit
//	l.x     create the three secondary indexes
//	l.i1    insert RowsMore rows, 50 rows a commit
//	l.i2    insert RowsMore/5 rows, 5 rows a commit
//	qrN     one writer held at N inserts/s while one reader runs range queries
//	qpN     the same with point queries; N is each of QueryRates
const (
	StepLoad   = "l.i0"
	StepIndex  = "l.x"
	StepMore   = "l.i1"
	StepSmall  = "l.i2"
	insertRows = 10 // rows per commit of the rate-limited writer of the q steps
)

// TableKinds are the layouts of the purchases table.
var TableKinds = []string{"plain", "pgts"}

const purchases = "purchases"

// InsertScenario configures `pgts bench insert`.
type InsertScenario struct {
	TableKind  string        `json:"table_kind"` // plain | pgts
	RowsLoad   int64         `json:"rows_load"`  // N1, rows of l.i0
	RowsMore   int64         `json:"rows_more"`  // N2, rows of l.i1 (l.i2 inserts N2/5)
	QueryRates []int         `json:"query_rates"`
	QueryTime  time.Duration `json:"query_time_ns"`         // length of each q step
	Interval   time.Duration `json:"partition_interval_ns"` // pgts kind: partition length (100,000 rows a second)
	Seed       uint64        `json:"seed"`                  // of the iibench generator
	ConnString string        `json:"-"`
	Logger     *slog.Logger  `json:"-"`
}

// DefaultInsertScenario is a run of a few minutes on a small machine.
func DefaultInsertScenario() InsertScenario {
	return InsertScenario{TableKind: "plain", RowsLoad: 500_000, RowsMore: 100_000, QueryRates: []int{100, 500, 1000},
		QueryTime: 20 * time.Second, Interval: time.Second, Seed: 1}
}

// Validate checks the scenario.
func (s *InsertScenario) Validate() error {
	switch {
	case !contains(TableKinds, s.TableKind):
		return fmt.Errorf("table kind %q: choose %s", s.TableKind, strings.Join(TableKinds, " or "))
	case s.RowsLoad < 100 || s.RowsLoad > gen.MaxRows/4:
		return fmt.Errorf("rows-load %d: must be between 100 and %d", s.RowsLoad, gen.MaxRows/4)
	case s.RowsMore < 50 || s.RowsMore > gen.MaxRows/4:
		return fmt.Errorf("rows-more %d: must be between 50 and %d", s.RowsMore, gen.MaxRows/4)
	case s.QueryTime < 0 || s.QueryTime > 24*time.Hour:
		return fmt.Errorf("query time %s: must be between 0 and 24h", s.QueryTime)
	case s.Interval < time.Second || s.Interval%time.Second != 0:
		return fmt.Errorf("partition interval %s: must be whole seconds, at least 1s", s.Interval)
	}
	for _, r := range s.QueryRates {
		if r < 1 || r > 1_000_000 {
			return fmt.Errorf("query rate %d: must be between 1 and 1,000,000 inserts/s", r)
		}
	}
	return nil
}

// StepNames lists the steps the scenario runs, in order.
func (s *InsertScenario) StepNames() []string {
	out := []string{StepLoad, StepIndex, StepMore, StepSmall}
	if s.QueryTime > 0 {
		for _, r := range s.QueryRates {
			out = append(out, fmt.Sprintf("qr%d", r), fmt.Sprintf("qp%d", r))
		}
	}
	return out
}

// InsertStep is the measurement of one step. Rates are per second over
// the step's wall time; "ops" are inserts for the l.i steps and queries
// for the q steps.
type InsertStep struct {
	Name       string  `json:"name"`
	Seconds    float64 `json:"seconds"`
	Inserts    int64   `json:"inserts"`
	Queries    int64   `json:"queries"`
	IPS        float64 `json:"ips"`                  // inserts/s
	QPS        float64 `json:"qps"`                  // queries/s (q steps)
	TargetIPS  float64 `json:"target_ips,omitempty"` // the writer's rate limit (q steps)
	WriterSlow bool    `json:"writer_short"`         // achieved < 95% of TargetIPS
	CPUPerOp   float64 `json:"cpupq"`                // host CPU µs per op
	WKBPerIns  float64 `json:"wkbpi"`                // KB written per insert; 0 without inserts
	WriteFrom  string  `json:"write_source"`         // server-io (/proc/PID/io) or wal
	DBGB       float64 `json:"dbgb"`                 // database size after the step, GiB
	MaxOpMS    float64 `json:"maxop_ms"`             // worst response time of the step's ops
	RateP50    float64 `json:"rate_p50"`             // median of the per-second op counts
	RateP99    float64 `json:"rate_p99"`
	RateMin    float64 `json:"rate_min"`
	HostCPU    float64 `json:"host_cpu_seconds"`
	ServerCPU  float64 `json:"server_cpu_seconds"` // -1 when /proc of the server is not readable
	ClientCPU  float64 `json:"client_cpu_seconds"`
	WriteBytes int64   `json:"server_write_bytes"`
	WALBytes   int64   `json:"wal_bytes"`
	// PerSecond are the step's ops in each whole second.
	PerSecond     []float64 `json:"per_second,omitempty"`
	InsertLatency *Latency  `json:"insert_latency,omitempty"` // per commit
	QueryLatency  *Latency  `json:"query_latency,omitempty"`
	Complete      bool      `json:"complete"`
	Error         string    `json:"error,omitempty"`
}

// MainRate is the step's headline rate: qps for q steps, ips otherwise.
func (st InsertStep) MainRate() float64 {
	if IsQueryStep(st.Name) {
		return st.QPS
	}
	return st.IPS
}

// IsQueryStep reports whether a step name is a read+write step.
func IsQueryStep(name string) bool {
	return strings.HasPrefix(name, "qr") || strings.HasPrefix(name, "qp")
}

// InsertResult is a whole `bench insert` run.
type InsertResult struct {
	Scenario InsertScenario `json:"scenario"`
	Machine  Machine        `json:"machine"`
	Command  string         `json:"command"`
	Steps    []InsertStep   `json:"steps"`
	Rows     int64          `json:"rows"` // rows in the table at the end
	Verified bool           `json:"rows_verified"`
	Complete bool           `json:"complete"`
	Error    string         `json:"error,omitempty"`
}

// RunInsert runs the scenario's steps in order. It always returns the
// result measured so far: when a step fails or ctx is cancelled, that step
// is recorded incomplete, the remaining ones are not run, Complete is
// false and the error is returned too. onStep (may be nil) is called after
// every step.
func RunInsert(ctx context.Context, s InsertScenario, onStep func(InsertStep)) (InsertResult, error) {
	res := InsertResult{Scenario: s}
	if err := s.Validate(); err != nil {
		return res, err
	}
	if s.Logger == nil {
		s.Logger = slog.New(slog.DiscardHandler)
	}
	pool, err := pg.NewPool(ctx, s.ConnString, 4)
	if err != nil {
		return res, err
	}
	defer pool.Close()
	res.Machine = DescribeMachine(ctx, pool)
	r, err := newInsertRunner(ctx, pool, s)
	if err != nil {
		res.Error = err.Error()
		return res, err
	}
	for _, name := range s.StepNames() {
		st := r.step(ctx, name)
		res.Steps = append(res.Steps, st)
		if onStep != nil {
			onStep(st)
		}
		if !st.Complete {
			err := errors.New(st.Error)
			if ctx.Err() != nil {
				err = ctx.Err()
			}
			res.Error = fmt.Sprintf("step %s: %s", name, st.Error)
			res.Rows = r.inserted.Load()
			return res, fmt.Errorf("step %s: %w", name, err)
		}
	}
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM "+pg.QuoteIdent(purchases)).Scan(&res.Rows); err != nil {
		res.Error = fmt.Sprintf("counting rows: %v", err)
		return res, fmt.Errorf("counting rows: %w", err)
	}
	if want := r.inserted.Load(); res.Rows != want {
		res.Error = fmt.Sprintf("the table has %d rows; %d were inserted", res.Rows, want)
		return res, errors.New(res.Error)
	}
	res.Verified = true
	res.Complete = true
	return res, nil
}

// insertRunner holds the state steps share: the table, the generator
// (rows are consumed in order across steps) and the count of committed
// rows, which bounds the point queries' keys.
type insertRunner struct {
	pool       *pgxpool.Pool
	s          InsertScenario
	g          gen.Generator
	series     *partition.Table
	mgr        *partition.Manager
	postmaster int          // 0 when the server's /proc is not readable
	inserted   atomic.Int64 // committed rows; transactionid runs 1..inserted
	stmts      map[int]string
}

func newInsertRunner(ctx context.Context, pool *pgxpool.Pool, s InsertScenario) (*insertRunner, error) {
	total := s.RowsLoad + s.RowsMore + s.RowsMore/5
	for _, rate := range s.QueryRates {
		total += 2 * (int64(rate)*int64(s.QueryTime/time.Second+1) + insertRows)
	}
	opts, err := gen.DefaultOptions("iibench")
	if err != nil {
		return nil, err
	}
	opts.Rows, opts.Seed = total, s.Seed
	g, err := gen.New("iibench", opts)
	if err != nil {
		return nil, fmt.Errorf("iibench generator: %w", err)
	}
	r := &insertRunner{pool: pool, s: s, g: g, stmts: map[int]string{}}
	var backend int
	if err := pool.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		return nil, err
	}
	r.postmaster = PostmasterOf(backend)
	if err := r.createTable(ctx, opts.Start); err != nil {
		return nil, fmt.Errorf("creating %s: %w", purchases, err)
	}
	return r, nil
}

func (r *insertRunner) createTable(ctx context.Context, start time.Time) error {
	q := pg.QuoteIdent(purchases)
	if _, err := r.pool.Exec(ctx, "DROP TABLE IF EXISTS "+q); err != nil {
		return err
	}
	if _, err := r.pool.Exec(ctx, `DELETE FROM pgts.series_table WHERE table_name = $1`, purchases); err != nil && pg.SQLState(err) != "42P01" {
		return err
	}
	cols := `transactionid bigserial not null, dateandtime timestamptz not null, cashregisterid integer not null,
		customerid integer not null, productid integer not null, price double precision not null, data varchar(4000)`
	if r.s.TableKind == "plain" {
		_, err := r.pool.Exec(ctx, "CREATE TABLE "+q+" ("+cols+", PRIMARY KEY (transactionid))")
		return err
	}
	// A partitioned table's primary key must hold the partition key.
	r.mgr = partition.NewManager(r.pool, r.s.Logger, func() time.Time { return start })
	t, err := r.mgr.Create(ctx, partition.CreateSpec{Name: purchases, Columns: cols + ", PRIMARY KEY (transactionid, dateandtime)",
		TimeColumn: "dateandtime", Interval: partition.Interval{Micros: r.s.Interval.Microseconds()}, Index: partition.IndexNone,
		AcceptFuture: &partition.Interval{Days: 36500}})
	if err != nil {
		return err
	}
	r.series = t
	return nil
}

// secondaryIndexes are the insert benchmark's three indexes.
var secondaryIndexes = [][2]string{
	{"marketsegment", "productid, customerid, price"},
	{"registersegment", "cashregisterid, customerid, price"},
	{"pdc", "price, dateandtime, customerid"},
}
