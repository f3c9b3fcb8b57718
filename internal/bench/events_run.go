package bench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgts/pgts/internal/gen"
	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pg"
)

const eventsTable = "events"

// eventColumns are the report's columns; the primary key is added per store.
const eventColumns = "id bigserial not null, event_id uuid not null, event_type text not null, " +
	"created_at timestamptz not null, data jsonb not null"

// eventIndexes are the report's secondary indexes: name, method, key.
var eventIndexes = [][3]string{
	{"events_event_id", "btree", "event_id"},
	{"events_categories_ids", "gin", "(data -> 'categories_ids') jsonb_path_ops"},
	{"events_created_at", "btree", "created_at"},
	{"events_event_type", "btree", "event_type"},
}

const eventsInsert = "INSERT INTO events (event_id, event_type, created_at, data) VALUES ($1, $2, $3, $4)"

// eventsRunner is one store's run in progress.
type eventsRunner struct {
	pool      *pgxpool.Pool
	s         EventsScenario
	store     string
	series    *partition.Table // pgts store
	mgr       *partition.Manager
	committed atomic.Int64
	second    atomic.Pointer[latencyRecorder] // the current second's commits
	total     *latencyRecorder
}

// runEvents makes the store's table and runs the workload on it; it
// never panics on a failed run but returns it incomplete with its error.
func runEvents(ctx context.Context, pool *pgxpool.Pool, s EventsScenario, store string) EventsRun {
	r := &eventsRunner{pool: pool, s: s, store: store, total: newLatencyRecorder()}
	run := EventsRun{Store: store, WriteBytes: -1}
	fail := func(format string, args ...any) EventsRun {
		run.Error = fmt.Sprintf(format, args...)
		return run
	}
	opts, err := gen.DefaultOptions("events")
	if err != nil {
		return fail("%v", err)
	}
	opts.Seed, opts.Step, opts.PayloadBytes = s.Seed, s.step(), s.DocBytes
	opts.Rows = s.Rows
	if s.Rows == 0 {
		// As many rows as a day could take, or as created_at has years for.
		fit := time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC).Sub(opts.Start) / s.step()
		opts.Rows = min(maxEventRows, int64(fit))
	}
	g, err := gen.New("events", opts)
	if err != nil {
		return fail("events generator: %v", err)
	}
	if run.PrimaryKey, run.Advice, err = r.createTable(ctx, opts.Start); err != nil {
		return fail("creating %s: %v", eventsTable, err)
	}
	smp, err := newEventsSampler(ctx, pool, r)
	if err != nil {
		return fail("sampling: %v", err)
	}
	defer smp.release()
	if err := smp.checkpoint(ctx); err != nil {
		return fail("checkpoint: %v", err)
	}
	if s.BeforeRun != nil {
		if err := s.BeforeRun(ctx); err != nil {
			return fail("before the run: %v", err)
		}
	}

	start := time.Now()
	smp.start(start)
	workErr := r.work(ctx, g)
	elapsed := time.Since(start)
	var smpErr error
	run.Samples, smpErr = smp.stop()
	workErr = errors.Join(workErr, smpErr)
	s.Logger.Debug("events run done", "store", store, "rows", r.committed.Load(), "seconds", elapsed.Seconds())

	run.Rows, run.Seconds = r.committed.Load(), elapsed.Seconds()
	if run.Seconds > 0 {
		run.IPS = float64(run.Rows) / run.Seconds
	}
	run.StartIPS, run.EndIPS = startEnd(run.Samples)
	if run.StartIPS > 0 {
		run.EndToStart = run.EndIPS / run.StartIPS
	}
	run.Latency = r.total.latency()
	run.WriteBytes, run.WriteCalls = 0, 0
	for _, sm := range run.Samples {
		if sm.DeviceWriteBytes < 0 {
			run.DeviceWriteBytes, run.DeviceWrites = -1, -1
		} else if run.DeviceWriteBytes >= 0 {
			run.DeviceWriteBytes += sm.DeviceWriteBytes
			run.DeviceWrites += sm.DeviceWrites
		}
		if sm.WriteBytes < 0 {
			run.WriteBytes, run.WriteCalls = -1, -1
		} else if run.WriteBytes >= 0 {
			run.WriteBytes += sm.WriteBytes
			run.WriteCalls += sm.WriteCalls
		}
		run.WALBytes += sm.WALBytes
	}
	if n := len(run.Samples); n > 0 {
		run.Checkpoints = run.Samples[n-1].Checkpoints
	}

	// A cancelled ctx must not lose the run's measurements: the figures
	// below get a short context of their own.
	mctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	if err := r.measureSizes(mctx, &run); err != nil {
		workErr = errors.Join(workErr, fmt.Errorf("measuring sizes: %w", err))
	}
	var counted int64
	if err := pool.QueryRow(mctx, "SELECT count(*) FROM "+pg.QuoteIdent(eventsTable)).Scan(&counted); err != nil {
		workErr = errors.Join(workErr, fmt.Errorf("counting rows: %w", err))
	} else if counted != run.Rows {
		workErr = errors.Join(workErr, fmt.Errorf("the table has %d rows; %d inserts committed", counted, run.Rows))
	} else {
		run.Verified = true
	}
	if s.Rows > 0 && workErr == nil && run.Rows != s.Rows {
		workErr = fmt.Errorf("%d of %d rows inserted", run.Rows, s.Rows)
	}
	if workErr != nil {
		run.Error = workErr.Error()
		return run
	}
	run.Complete = true
	return run
}

// createTable makes a fresh events table for the store and returns its
// primary key and, for pgts, the advice pgts' table creation gave for a
// primary key on id alone.
func (r *eventsRunner) createTable(ctx context.Context, start time.Time) (key, advice string, err error) {
	q := pg.QuoteIdent(eventsTable)
	if _, err := r.pool.Exec(ctx, "DROP TABLE IF EXISTS "+q); err != nil {
		return "", "", err
	}
	if _, err := r.pool.Exec(ctx, `DELETE FROM pgts.series_table WHERE table_name = $1`, eventsTable); err != nil && pg.SQLState(err) != "42P01" {
		return "", "", err
	}
	key = "PRIMARY KEY (id)"
	if r.store == "plain" {
		if _, err := r.pool.Exec(ctx, "CREATE TABLE "+q+" ("+eventColumns+", CONSTRAINT events_pkey "+key+")"); err != nil {
			return "", "", err
		}
	} else {
		r.mgr = partition.NewManager(r.pool, r.s.Logger, func() time.Time { return start })
		spec := partition.CreateSpec{Name: eventsTable, Columns: eventColumns + ", CONSTRAINT events_pkey " + key, TimeColumn: "created_at",
			Interval: partition.Interval{Days: 7}, Index: partition.IndexNone,
			AcceptPast: &partition.Interval{Days: 7}, AcceptFuture: &partition.Interval{Days: 36500}}
		// The report's table first, as `pgts table create` would be asked
		// for it; its refusal is the advice, and the key it asks for is used.
		_, err := r.mgr.Create(ctx, spec)
		if !errors.Is(err, partition.ErrUniqueWithoutTime) {
			return "", "", fmt.Errorf("a primary key on id alone: expected pgts to refuse it, got %v", err)
		}
		advice = err.Error()
		key = "PRIMARY KEY (id, created_at)"
		spec.Columns = eventColumns + ", CONSTRAINT events_pkey " + key
		if r.series, err = r.mgr.Create(ctx, spec); err != nil {
			return "", "", err
		}
	}
	for _, ix := range eventIndexes {
		sql := fmt.Sprintf("CREATE INDEX %s ON %s USING %s (%s)", pg.QuoteIdent(ix[0]), q, ix[1], ix[2])
		if _, err := r.pool.Exec(ctx, sql); err != nil {
			return "", "", fmt.Errorf("creating index %s: %w", ix[0], err)
		}
	}
	return key, advice, nil
}

// work runs the producer and the sessions until the rows are inserted,
// the duration has passed, an insert fails or ctx ends. Rows the producer
// made but no session took are not inserted and not counted.
func (r *eventsRunner) work(ctx context.Context, g gen.Generator) error {
	r.second.Store(newLatencyRecorder())
	stop := make(chan struct{})
	var stopOnce sync.Once
	halt := func() { stopOnce.Do(func() { close(stop) }) }
	if r.s.Duration > 0 {
		t := time.AfterFunc(r.s.Duration, halt)
		defer t.Stop()
	}
	rows := make(chan []any, 4*r.s.Sessions)
	var mu sync.Mutex
	var errs []error
	report := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
		halt()
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(rows)
		if err := r.produce(ctx, g, rows, stop); err != nil {
			report(err)
		}
	}()
	for range r.s.Sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := r.session(ctx, rows, stop); err != nil {
				report(err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// produce generates rows into out until the generator ends or stop
// closes, making each row's partition first on the pgts store.
func (r *eventsRunner) produce(ctx context.Context, g gen.Generator, out chan<- []any, stop <-chan struct{}) error {
	rec := &valueRecorder{}
	for g.Next() {
		if r.series != nil {
			if _, err := r.mgr.Ensure(ctx, r.series, []int64{g.Time()}); err != nil {
				return fmt.Errorf("making partitions: %w", err)
			}
		}
		rec.vals = rec.vals[:0]
		g.Encode(rec) // id, event_id, type, created_at, payload
		row := []any{rec.vals[1], rec.vals[2], rec.vals[3], rec.vals[4]}
		select {
		case out <- row:
		case <-stop:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// session inserts rows one per transaction on its own connection.
func (r *eventsRunner) session(ctx context.Context, rows <-chan []any, stop <-chan struct{}) error {
	conn, err := r.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("session: %w", err)
	}
	defer conn.Release()
	for {
		select {
		case <-stop:
			return nil
		default:
		}
		var row []any
		var ok bool
		select {
		case row, ok = <-rows:
			if !ok {
				return nil
			}
		case <-stop:
			return nil
		}
		t0 := time.Now()
		if _, err := conn.Exec(ctx, eventsInsert, row...); err != nil {
			return fmt.Errorf("insert: %w", err)
		}
		d := time.Since(t0)
		r.committed.Add(1)
		r.second.Load().record(d)
		r.total.record(d)
	}
}

// measureSizes reads the row's partitions (time partitions: the DEFAULT
// partition is not counted), the table's size and each index's size,
// summed over partitions.
func (r *eventsRunner) measureSizes(ctx context.Context, run *EventsRun) error {
	// pg_partition_tree lists a partitioned relation's leaves, and
	// nothing for a plain one.
	const size = `WITH leaves AS (SELECT relid FROM pg_partition_tree($1::regclass) WHERE isleaf)
		SELECT CASE WHEN (SELECT count(*) FROM leaves) = 0 AND (SELECT relkind FROM pg_class WHERE oid = $1::regclass) IN ('r', 'i')
			THEN %[1]s($1::regclass) ELSE (SELECT coalesce(sum(%[1]s(relid)), 0) FROM leaves)::bigint END,
		(SELECT count(*) FROM leaves WHERE relid IS DISTINCT FROM (SELECT partdefid FROM pg_partitioned_table WHERE partrelid = $1::regclass))::int`
	var leaves int
	if err := r.pool.QueryRow(ctx, fmt.Sprintf(size, "pg_table_size"), eventsTable).Scan(&run.TableBytes, &leaves); err != nil {
		return err
	}
	if r.series != nil {
		run.Partitions = leaves
	}
	names := []string{"events_pkey"}
	for _, ix := range eventIndexes {
		names = append(names, ix[0])
	}
	run.Indexes = nil
	for _, n := range names {
		ix := EventIndex{Name: n}
		if err := r.pool.QueryRow(ctx, fmt.Sprintf(size, "pg_relation_size"), n).Scan(&ix.Bytes, &leaves); err != nil {
			return fmt.Errorf("index %s: %w", n, err)
		}
		if err := r.pool.QueryRow(ctx, "SELECT pg_get_indexdef($1::regclass)", n).Scan(&ix.Definition); err != nil {
			return fmt.Errorf("index %s: %w", n, err)
		}
		ix.Definition = strings.Replace(ix.Definition, " ONLY ", " ", 1)
		run.Indexes = append(run.Indexes, ix)
	}
	return nil
}
