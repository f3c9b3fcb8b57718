package bench

import (
	"bufio"
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgts/pgts/internal/copyenc"
	"github.com/pgts/pgts/internal/copyload"
	"github.com/pgts/pgts/internal/gen"
	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pg"
)

// Stores and loaders of the loading benchmark.
var (
	Stores  = []string{"plain", "monthly", "weekly", "pgts", "timescaledb"}
	Loaders = []string{"psql-copy", "psql-pipe", "pgts-text", "pgts-binary", "pgts-parent", "pgts-bulk", "pgts-file", "insert", "server-copy"}
)

// LoadScenario is the loading study, generalised: every store × loader ×
// workers combination, each run on a fresh table.
type LoadScenario struct {
	Stores     []string     `json:"stores"`
	Loaders    []string     `json:"loaders"`
	Workers    []int        `json:"workers"`
	Width      int          `json:"width"`   // data columns of conditions
	Batches    int64        `json:"batches"` // batches of 10,000 rows
	Index      string       `json:"index"`   // time | device,time | both
	Repeat     int          `json:"repeat"`
	ConnString string       `json:"-"` // the database (a fresh table is made per run); may hold a password
	Psql       string       `json:"-"` // path of psql, for the psql loaders
	Logger     *slog.Logger `json:"-"`
	// BeforeRun runs before each run (after the table is made), e.g. to
	// restart the server; nil for none.
	BeforeRun func(ctx context.Context) error `json:"-"`

	// Devices is the number of devices in the data: row n (from 0) of the
	// run gets device 1 + n % Devices (see spreadDevices); 0 means the
	// study's generator as it is, 1,000 devices numbered within each batch.
	// With a (device, time) index it decides how many index pages each
	// batch touches: one insertion point per device.
	Devices int `json:"devices,omitempty"`
	// Interval is the partition length of the pgts store; zero means a
	// week. The conditions data covers one minute per batch, so a run of
	// 1,000 batches spans about 17 hours.
	Interval time.Duration `json:"pgts_interval,omitempty"`
	// MemoryLimit is the server's memory cgroup limit in bytes, when the
	// caller set one (recorded, not enforced here).
	MemoryLimit int64 `json:"memory_limit_bytes,omitempty"`
	// TimescaleChunks are the chunk intervals the timescaledb store runs
	// with, each a store of its own (see TimescaleStores); 0 is
	// TimescaleDB's default (7 days). None is the default alone.
	TimescaleChunks []time.Duration `json:"timescaledb_chunks,omitempty"`
}

// Validate checks the scenario.
func (s *LoadScenario) Validate() error {
	for _, st := range s.Stores {
		if !contains(Stores, st) {
			return fmt.Errorf("unknown store %q (choose from %s)", st, strings.Join(Stores, ", "))
		}
	}
	for _, l := range s.Loaders {
		if !contains(Loaders, l) {
			return fmt.Errorf("unknown loader %q (choose from %s)", l, strings.Join(Loaders, ", "))
		}
	}
	for _, w := range s.Workers {
		if w < 1 || w > 64 {
			return fmt.Errorf("workers %d: must be between 1 and 64", w)
		}
	}
	switch {
	case len(s.Stores) == 0 || len(s.Loaders) == 0 || len(s.Workers) == 0:
		return fmt.Errorf("need at least one store, loader and worker count")
	case s.Width < 1 || s.Width > 100:
		return fmt.Errorf("width %d: must be between 1 and 100", s.Width)
	case s.Batches < 1:
		return fmt.Errorf("batches %d: must be at least 1", s.Batches)
	case s.Repeat < 1:
		return fmt.Errorf("repeat %d: must be at least 1", s.Repeat)
	case s.Index != "time" && s.Index != "device,time" && s.Index != "both":
		return fmt.Errorf("index %q: choose time, device,time or both", s.Index)
	case s.Devices < 0 || s.Devices > gen.MaxDevices:
		return fmt.Errorf("devices %d: must be between 1 and %d", s.Devices, gen.MaxDevices)
	case s.Interval < 0 || (s.Interval > 0 && (s.Interval < time.Minute || s.Interval%time.Minute != 0)):
		return fmt.Errorf("pgts interval %s: must be a whole number of minutes, at least one", s.Interval)
	}
	return validateTimescaleChunks(s.Stores, s.TimescaleChunks)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// BatchTiming is one batch of a run.
type BatchTiming struct {
	StartMS    float64 `json:"start_ms"` // since the run started
	DurationMS float64 `json:"duration_ms"`
	Rows       int64   `json:"rows"`
}

// LoadRun is the measurement of one run.
type LoadRun struct {
	Store       string        `json:"store"`
	Loader      string        `json:"loader"`
	Workers     int           `json:"workers"`
	Repeat      int           `json:"repeat"`
	Rows        int64         `json:"rows"`
	Seconds     float64       `json:"seconds"`
	RowsPerSec  float64       `json:"rows_per_second"`
	ClientCPU   float64       `json:"client_cpu_seconds"`
	ServerCPU   float64       `json:"server_cpu_seconds"`
	ServerWrite int64         `json:"server_write_bytes"`
	WALBytes    int64         `json:"wal_bytes"`
	TableBytes  int64         `json:"table_bytes"`
	IndexBytes  int64         `json:"index_bytes"`
	DBBytes     int64         `json:"database_bytes"`
	Verified    bool          `json:"rows_verified"`
	Error       string        `json:"error,omitempty"`
	Batches     []BatchTiming `json:"batches,omitempty"`

	// StartRate and EndRate are the rows/s of the first and of the last
	// tenth of the batches (by start time), wall-clock over the span
	// those batches took with all workers; 0 without per-batch timings
	// (fewer than 10 batches).
	StartRate float64 `json:"start_rows_per_second,omitempty"`
	EndRate   float64 `json:"end_rows_per_second,omitempty"`
	// Phases are seconds spent in steps of the loader besides its COPYs
	// (pgts-bulk: index builds and attaches, summed over partitions).
	Phases map[string]float64 `json:"phases,omitempty"`
}

// RunLoad runs the scenario; results come back in run order. A run that
// fails (or loses rows) is recorded with its error and the next one runs.
// onRun is called after each run (for progress); it may be nil.
func RunLoad(ctx context.Context, s LoadScenario, onRun func(LoadRun)) ([]LoadRun, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if s.Logger == nil {
		s.Logger = slog.New(slog.DiscardHandler)
	}
	pool, err := pg.NewPool(ctx, s.ConnString, 70)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	if s.Stores, err = availableStores(ctx, pool, TimescaleStores(s.Stores, s.TimescaleChunks), s.Logger); err != nil {
		return nil, err
	}
	var out []LoadRun
	for rep := 1; rep <= s.Repeat; rep++ {
		for _, store := range s.Stores {
			for _, loader := range s.Loaders {
				workers := s.Workers
				if loader == "psql-copy" || loader == "psql-pipe" {
					workers = []int{1} // one stream, as the study ran it
				}
				for _, w := range workers {
					if ctx.Err() != nil {
						return out, ctx.Err()
					}
					r := LoadRun{Store: store, Loader: loader, Workers: w, Repeat: rep}
					if err := runOne(ctx, pool, s, &r); err != nil {
						r.Error = err.Error()
						s.Logger.Error("run failed", "store", store, "loader", loader, "workers", w, "err", err)
					}
					out = append(out, r)
					if onRun != nil {
						onRun(r)
					}
				}
			}
		}
	}
	return out, nil
}

const benchTable = "conditions"

func conditionsGen(s LoadScenario) (gen.Generator, error) {
	opts, err := gen.DefaultOptions("conditions")
	if err != nil {
		return nil, err
	}
	opts.Width, opts.Batches = s.Width, s.Batches
	if s.Devices > 0 {
		opts.Devices = s.Devices
	}
	g, err := gen.New("conditions", opts)
	if err != nil {
		return nil, err
	}
	return withDevices(g, s.Devices), nil
}

// setupStore makes a fresh table for the store and returns the series
// table when the store is pgts.
func setupStore(ctx context.Context, pool *pgxpool.Pool, s LoadScenario, store string, g gen.Generator) (*partition.Table, error) {
	if _, err := pool.Exec(ctx, `DROP TABLE IF EXISTS `+benchTable); err != nil {
		return nil, err
	}
	if _, err := pool.Exec(ctx, `DELETE FROM pgts.series_table WHERE table_name = $1`, benchTable); err != nil && pg.SQLState(err) != "42P01" {
		return nil, err
	}
	cols := []string{"time timestamptz not null", "device integer not null"}
	for i := 1; i <= s.Width; i++ {
		cols = append(cols, fmt.Sprintf("data%d double precision", i))
	}
	first, last := timeSpan(g)
	var series *partition.Table
	chunk, isTimescale := TimescaleChunkOf(store)
	if isTimescale {
		store = "timescaledb"
	}
	switch store {
	case "plain":
		if _, err := pool.Exec(ctx, fmt.Sprintf("CREATE TABLE %s (%s)", benchTable, strings.Join(cols, ", "))); err != nil {
			return nil, err
		}
	case "monthly", "weekly":
		if _, err := pool.Exec(ctx, fmt.Sprintf("CREATE TABLE %s (%s) PARTITION BY RANGE (time)", benchTable, strings.Join(cols, ", "))); err != nil {
			return nil, err
		}
		iv := partition.Interval{Days: 7}
		if store == "monthly" {
			iv = partition.Interval{Months: 1}
		}
		lo, _, err := partition.Bounds(iv, first)
		if err != nil {
			return nil, err
		}
		for ; lo <= last; lo = partition.Next(iv, lo) {
			name, err := partition.Name(benchTable, iv, lo)
			if err != nil {
				return nil, err
			}
			_, err = pool.Exec(ctx, fmt.Sprintf("CREATE TABLE %s PARTITION OF %s FOR VALUES FROM (%s) TO (%s)", pg.QuoteIdent(name), benchTable,
				partition.BoundLiteral(partition.Timestamptz, lo), partition.BoundLiteral(partition.Timestamptz, partition.Next(iv, lo))))
			if err != nil {
				return nil, err
			}
		}
	case "timescaledb":
		if err := setupHypertable(ctx, pool, cols, chunk); err != nil {
			return nil, err
		}
	case "pgts":
		m := partition.NewManager(pool, s.Logger, time.Now)
		spec := partition.CreateSpec{Name: benchTable, Columns: strings.Join(cols, ", "), TimeColumn: "time",
			Interval: pgtsInterval(s.Interval), Premake: 0, Index: partition.IndexNone}
		t, err := m.Create(ctx, spec)
		if err != nil {
			return nil, err
		}
		series = t
	}
	idx := map[string][]string{"time": {"time"}, "device,time": {"device, time"}, "both": {"time", "device, time"}}[s.Index]
	for _, cols := range idx {
		if _, err := pool.Exec(ctx, fmt.Sprintf("CREATE INDEX ON %s (%s)", benchTable, cols)); err != nil {
			return nil, err
		}
	}
	return series, nil
}

// pgtsInterval is the pgts store's partition length: whole days as days
// (aligned on days), else microseconds; a week when d is zero.
func pgtsInterval(d time.Duration) partition.Interval {
	switch {
	case d == 0:
		return partition.Interval{Days: 7}
	case d%(24*time.Hour) == 0:
		return partition.Interval{Days: int32(d / (24 * time.Hour))}
	}
	return partition.Interval{Micros: d.Microseconds()}
}

// timeSpan returns the first and last time of a generator's rows without
// generating them all: conditions is increasing, so the first row and a
// walk to the end suffice; the walk is cheap (no encoding).
func timeSpan(g gen.Generator) (first, last int64) {
	n := 0
	for g.Next() {
		t := g.Time()
		if n == 0 {
			first = t
		}
		last = t
		n++
	}
	return first, last
}

func runOne(ctx context.Context, pool *pgxpool.Pool, s LoadScenario, r *LoadRun) error {
	g, err := conditionsGen(s)
	if err != nil {
		return err
	}
	series, err := setupStore(ctx, pool, s, r.Store, g)
	if err != nil {
		return fmt.Errorf("setting up store %s: %w", r.Store, err)
	}
	if series != nil && !strings.HasPrefix(r.Loader, "pgts-") {
		// psql and INSERT cannot create partitions: make them first.
		g2, _ := conditionsGen(s)
		first, last := timeSpan(g2)
		m := partition.NewManager(pool, s.Logger, time.Now)
		var times []int64
		for lo := first; ; {
			times = append(times, lo)
			_, hi, err := partition.Bounds(series.Interval, lo)
			if err != nil || hi > last {
				break
			}
			lo = hi
		}
		if _, err := m.Ensure(ctx, series, append(times, last)); err != nil {
			return err
		}
	}
	if _, err := pool.Exec(ctx, "CHECKPOINT"); err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	if s.BeforeRun != nil {
		if err := s.BeforeRun(ctx); err != nil {
			return err
		}
	}
	var backend int
	if err := pool.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&backend); err != nil {
		return err
	}
	postmaster := PostmasterOf(backend)
	var walStart string
	if err := pool.QueryRow(ctx, "SELECT pg_current_wal_lsn()::text").Scan(&walStart); err != nil {
		return err
	}
	g, _ = conditionsGen(s)
	var serverFiles [][]serverCopyFile
	var csvPath string
	if r.Loader == "pgts-file" {
		// Written before the clock starts: the file is the input, as
		// the generator is for the other loaders.
		var dir string
		csvPath, dir, err = writeCSV(g)
		defer os.RemoveAll(dir)
		if err != nil {
			return err
		}
	}
	if r.Loader == "server-copy" {
		// Written before the clock starts: the server alone is measured.
		var dir string
		serverFiles, dir, err = serverCopyFiles(ctx, pool, r.Store, s.Interval, g, r.Workers)
		defer os.RemoveAll(dir)
		if err != nil {
			return err
		}
	}
	srv0, cli0 := ServerTimes(postmaster), SelfTimes()
	start := time.Now()
	switch r.Loader {
	case "psql-copy":
		r.Batches, err = loadPsql(ctx, s, g, false)
	case "psql-pipe":
		r.Batches, err = loadPsql(ctx, s, g, true)
	case "pgts-text", "pgts-binary", "pgts-parent", "pgts-bulk":
		r.Batches, r.Phases, err = loadPgts(ctx, pool, s, g, r.Loader, r.Workers, start)
	case "pgts-file":
		r.Batches, err = loadPgtsFile(ctx, pool, s, csvPath, r.Workers, start)
	case "server-copy":
		r.Batches, err = loadServerCopy(ctx, pool, serverFiles, start)
	case "insert":
		r.Batches, err = loadInsert(ctx, pool, s, g, r.Workers, start)
	}
	elapsed := time.Since(start)
	srv, cli := ServerTimes(postmaster).Sub(srv0), SelfTimes().Sub(cli0)
	if err != nil {
		return err
	}
	r.Seconds = elapsed.Seconds()
	r.ClientCPU, r.ServerCPU, r.ServerWrite = cli.CPUSeconds, srv.CPUSeconds, srv.WriteBytes
	if srv.Unavailable {
		r.ServerCPU = -1
	}
	err = pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM conditions),
			pg_current_wal_lsn() - $1::pg_lsn,
			coalesce((SELECT sum(pg_table_size(relid)) FROM pg_partition_tree('conditions') WHERE isleaf), 0)::bigint,
			coalesce((SELECT sum(pg_indexes_size(relid)) FROM pg_partition_tree('conditions') WHERE isleaf), 0)::bigint,
			pg_database_size(current_database())`, walStart).Scan(&r.Rows, &r.WALBytes, &r.TableBytes, &r.IndexBytes, &r.DBBytes)
	if err != nil {
		return fmt.Errorf("measuring: %w", err)
	}
	if err := unpartitionedSizes(ctx, pool, r); err != nil {
		return fmt.Errorf("measuring: %w", err)
	}
	r.StartRate, r.EndRate = TenthRates(r.Batches)
	want := s.Batches * 10000
	r.Verified = r.Rows == want
	if r.Seconds > 0 {
		r.RowsPerSec = float64(r.Rows) / r.Seconds
	}
	if !r.Verified {
		return fmt.Errorf("the table has %d rows after the load; %d were sent", r.Rows, want)
	}
	return nil
}

var psqlTime = regexp.MustCompile(`^Time: ([0-9.]+) ms`)

// loadPsql pipes the generator's text into a psql child: one COPY of all
// rows, or (batched) one COPY per 10,000 rows, each its own transaction,
// timed by psql's \timing.
func loadPsql(ctx context.Context, s LoadScenario, g gen.Generator, batched bool) ([]BatchTiming, error) {
	cmd := exec.CommandContext(ctx, s.Psql, "--no-psqlrc", "-q", "-v", "ON_ERROR_STOP=1", "-d", s.ConnString)
	cmd.Env = append(cmd.Environ(), "PGTZ=UTC")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting psql: %w", err)
	}
	var timings []BatchTiming
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		sc := bufio.NewScanner(stdout)
		var at float64
		for sc.Scan() {
			if m := psqlTime.FindStringSubmatch(sc.Text()); m != nil {
				d, _ := strconv.ParseFloat(m[1], 64)
				timings = append(timings, BatchTiming{StartMS: at, DurationMS: d, Rows: 10000})
				at += d
			}
		}
	}()
	w := bufio.NewWriterSize(stdin, 1<<20)
	tw := copyenc.NewTextWriter(1 << 20)
	const begin = "COPY conditions FROM STDIN;\n"
	fmt.Fprint(w, "\\timing on\n")
	if !batched {
		fmt.Fprint(w, begin)
	}
	var row int64
	for g.Next() {
		if batched && row%10000 == 0 {
			if row > 0 {
				fmt.Fprint(w, "\\.\n")
			}
			fmt.Fprint(w, begin)
		}
		row++
		tw.Reset()
		g.Encode(tw)
		if _, err := w.Write(tw.Bytes()); err != nil {
			break
		}
	}
	fmt.Fprint(w, "\\.\n")
	werr := w.Flush()
	stdin.Close()
	wg.Wait()
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("psql: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	if werr != nil {
		return nil, werr
	}
	if !batched {
		timings = nil
	}
	return timings, nil
}

// loadPgts runs pgts' loader in-process.
// loadPgts runs pgts' loader in-process: pgts-text (text COPY into the
// leaf partitions), pgts-binary (binary COPY into the leaf partitions),
// pgts-parent (binary COPY into the parent, routed by the server) or
// pgts-bulk (pgts load --bulk; its phases: index builds and attaches).
func loadPgts(ctx context.Context, pool *pgxpool.Pool, s LoadScenario, g gen.Generator, loader string, workers int, start time.Time) ([]BatchTiming, map[string]float64, error) {
	m := partition.NewManager(pool, s.Logger, time.Now)
	target, err := copyload.LookupTarget(ctx, pool, m, benchTable)
	if err != nil {
		return nil, nil, err
	}
	cfg := copyload.DefaultConfig()
	cfg.Workers, cfg.Text, cfg.Bulk = workers, loader == "pgts-text", loader == "pgts-bulk"
	if loader == "pgts-parent" {
		cfg.Route = copyload.RouteParent
	}
	timings, onBatch := batchTimings(start)
	cfg.OnBatch = onBatch
	l, err := copyload.New(pool, m, target, cfg)
	if err != nil {
		return nil, nil, err
	}
	sum, err := l.Run(ctx, &copyload.GenSource{Name: "conditions", Gen: g})
	if err != nil {
		return nil, nil, err
	}
	if sum.Rejected > 0 {
		return nil, nil, fmt.Errorf("%d rows rejected", sum.Rejected)
	}
	var phases map[string]float64
	if bt := l.BulkTimes(); bt.Partitions > 0 {
		phases = map[string]float64{"bulk_partitions": float64(bt.Partitions), "create": bt.Create.Seconds(),
			"index_build": bt.Index.Seconds(), "attach": bt.Attach.Seconds()}
	}
	return timings(), phases, nil
}

// batchTimings returns a loader's OnBatch hook, which records each
// batch's timing relative to start (safe for concurrent use), and the
// function that returns what it recorded.
func batchTimings(start time.Time) (timings func() []BatchTiming, onBatch func(copyload.BatchInfo)) {
	var mu sync.Mutex
	var out []BatchTiming
	onBatch = func(b copyload.BatchInfo) {
		mu.Lock()
		out = append(out, BatchTiming{StartMS: ms(b.Start.Sub(start)), DurationMS: ms(b.Duration), Rows: b.Rows})
		mu.Unlock()
	}
	return func() []BatchTiming {
		mu.Lock()
		defer mu.Unlock()
		return out
	}, onBatch
}

// TenthRates returns the rows/s of the first and of the last tenth of
// the batches, ordered by start time: the rows of those batches over the
// wall-clock span from the first one's start to the last one's end, so
// batches of concurrent workers count once. Both are 0 with fewer than 10
// batches.
func TenthRates(batches []BatchTiming) (start, end float64) {
	n := len(batches) / 10
	if n == 0 {
		return 0, 0
	}
	b := slices.Clone(batches)
	slices.SortStableFunc(b, func(x, y BatchTiming) int { return cmp.Compare(x.StartMS, y.StartMS) })
	rate := func(part []BatchTiming) float64 {
		var rows int64
		lo, hi := part[0].StartMS, part[0].StartMS
		for _, t := range part {
			rows += t.Rows
			hi = max(hi, t.StartMS+t.DurationMS)
		}
		if hi <= lo {
			return 0
		}
		return float64(rows) / ((hi - lo) / 1000)
	}
	return rate(b[:n]), rate(b[len(b)-n:])
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// loadInsert sends multi-row INSERTs of 1,000 rows from `workers`
// connections, each statement its own transaction.
func loadInsert(ctx context.Context, pool *pgxpool.Pool, s LoadScenario, g gen.Generator, workers int, start time.Time) ([]BatchTiming, error) {
	const rowsPer = 1000
	ncols := 2 + s.Width
	var sql strings.Builder
	sql.WriteString("INSERT INTO conditions VALUES ")
	for r := 0; r < rowsPer; r++ {
		if r > 0 {
			sql.WriteByte(',')
		}
		sql.WriteByte('(')
		for c := 0; c < ncols; c++ {
			if c > 0 {
				sql.WriteByte(',')
			}
			fmt.Fprintf(&sql, "$%d", r*ncols+c+1)
		}
		sql.WriteByte(')')
	}
	stmt := sql.String()
	type job struct{ args []any }
	jobs := make(chan job, workers)
	var mu sync.Mutex
	var timings []BatchTiming
	errc := make(chan error, workers)
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				t0 := time.Now()
				if _, err := pool.Exec(ctx, stmt, j.args...); err != nil {
					errc <- err
					for range jobs {
					}
					return
				}
				mu.Lock()
				timings = append(timings, BatchTiming{StartMS: ms(t0.Sub(start)), DurationMS: ms(time.Since(t0)), Rows: rowsPer})
				mu.Unlock()
			}
		}()
	}
	rec := &valueRecorder{}
	args := make([]any, 0, rowsPer*ncols)
	var sendErr error
	for g.Next() {
		rec.vals = rec.vals[:0]
		g.Encode(rec)
		args = append(args, rec.vals...)
		if len(args) == rowsPer*ncols {
			jobs <- job{args}
			args = make([]any, 0, rowsPer*ncols)
		}
	}
	if len(args) > 0 {
		sendErr = fmt.Errorf("%d rows left over: the row count must be a multiple of %d", len(args)/ncols, rowsPer)
	}
	close(jobs)
	wg.Wait()
	close(errc)
	if err := <-errc; err != nil {
		return nil, err
	}
	return timings, sendErr
}

// valueRecorder turns a generator's fields into query arguments.
type valueRecorder struct{ vals []any }

func (v *valueRecorder) BeginRow(int)      {}
func (v *valueRecorder) Null()             { v.vals = append(v.vals, nil) }
func (v *valueRecorder) Bool(b bool)       { v.vals = append(v.vals, b) }
func (v *valueRecorder) Int2(x int16)      { v.vals = append(v.vals, x) }
func (v *valueRecorder) Int4(x int32)      { v.vals = append(v.vals, x) }
func (v *valueRecorder) Int8(x int64)      { v.vals = append(v.vals, x) }
func (v *valueRecorder) Float4(x float32)  { v.vals = append(v.vals, x) }
func (v *valueRecorder) Float8(x float64)  { v.vals = append(v.vals, x) }
func (v *valueRecorder) Timestamp(m int64) { v.vals = append(v.vals, time.UnixMicro(m).UTC()) }
func (v *valueRecorder) Date(d int32)      { v.vals = append(v.vals, time.Unix(int64(d)*86400, 0).UTC()) }
func (v *valueRecorder) Text(b []byte)     { v.vals = append(v.vals, string(b)) }
func (v *valueRecorder) String(s string)   { v.vals = append(v.vals, s) }
func (v *valueRecorder) UUID(u [16]byte)   { v.vals = append(v.vals, u) }
func (v *valueRecorder) JSON(b []byte)     { v.vals = append(v.vals, string(b)) }
func (v *valueRecorder) JSONB(b []byte)    { v.vals = append(v.vals, string(b)) }

var _ copyenc.FieldWriter = (*valueRecorder)(nil)

// availableStores drops the timescaledb stores, with one logged line
// saying how to get TimescaleDB, when the server does not offer the
// extension; it is an error only when no store is left.
func availableStores(ctx context.Context, pool *pgxpool.Pool, stores []string, log *slog.Logger) ([]string, error) {
	if !slices.ContainsFunc(stores, isTimescaleStore) {
		return stores, nil
	}
	var ok bool
	if err := pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'timescaledb')").Scan(&ok); err != nil {
		return nil, fmt.Errorf("looking for timescaledb: %w", err)
	}
	if ok {
		return stores, nil
	}
	var out, skipped []string
	for _, st := range stores {
		if isTimescaleStore(st) {
			skipped = append(skipped, st)
		} else {
			out = append(out, st)
		}
	}
	log.Warn("skipping store "+strings.Join(skipped, ", ")+": the server does not offer the timescaledb extension (pg_available_extensions); "+
		TimescaleHint, "stores", skipped)
	if len(out) == 0 {
		return nil, fmt.Errorf("no store to run: timescaledb is not available on the server (%s)", TimescaleHint)
	}
	return out, nil
}

// unpartitionedSizes measures the table and index sizes of the stores
// pg_partition_tree does not cover: a plain table (no partitions) and a
// hypertable (its chunks are inheritance children, not partitions).
func unpartitionedSizes(ctx context.Context, pool *pgxpool.Pool, r *LoadRun) error {
	store := r.Store
	if isTimescaleStore(store) {
		store = "timescaledb"
	}
	switch store {
	case "plain":
		return pool.QueryRow(ctx, "SELECT pg_table_size($1::regclass), pg_indexes_size($1::regclass)", benchTable).
			Scan(&r.TableBytes, &r.IndexBytes)
	case "timescaledb":
		return pool.QueryRow(ctx, "SELECT coalesce(table_bytes, 0) + coalesce(toast_bytes, 0), coalesce(index_bytes, 0) FROM hypertable_detailed_size($1::regclass)",
			benchTable).Scan(&r.TableBytes, &r.IndexBytes)
	}
	return nil
}
