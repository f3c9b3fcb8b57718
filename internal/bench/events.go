package bench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgts/pgts/internal/gen"
	"github.com/pgts/pgts/internal/pg"
)

// The event workload of a field report on audit logs in PostgreSQL, with
// and without time partitioning:
//
//	events(id bigserial, event_id uuid, event_type text, created_at timestamptz, data jsonb)
//	indexes: primary key on id, btree event_id, GIN (data -> 'categories_ids') jsonb_path_ops,
//	         btree created_at, btree event_type
//	Sessions connections insert as fast as they can, one row per transaction
//
// Stores: plain (one table) and pgts (a weekly series table; a partitioned
// table cannot have a primary key on id alone, so the key is what pgts'
// table creation advises). Every second the run samples inserts, commit
// latency, the server's bytes written and write calls (/proc), WAL and
// whether a checkpoint is in progress.

// EventStores are the layouts of the events table.
var EventStores = []string{"plain", "pgts"}

// EventsScenario configures `pgts bench events`. Each store runs on a
// fresh events table, one after another.
type EventsScenario struct {
	Stores   []string      `json:"stores"`
	Sessions int           `json:"sessions"`    // connections inserting, one row per transaction
	Rows     int64         `json:"rows"`        // rows per store; 0 when Duration bounds the run
	Duration time.Duration `json:"duration_ns"` // time per store; 0 when Rows bounds the run
	DocBytes int           `json:"doc_bytes"`   // mean size of the data document (JSON text)
	// WeekRows is how many rows one week of created_at holds: created_at
	// advances 7 days / WeekRows per row (± 2.5 s of jitter), so that a
	// run of minutes covers the weeks the partitioned store splits by.
	WeekRows int64  `json:"week_rows"`
	Seed     uint64 `json:"seed"`
	// CheckpointTimeout, when not 0, is set as the server's
	// checkpoint_timeout (ALTER SYSTEM, reloaded; superuser) for the
	// benchmark and reset afterwards, so that a short run sees checkpoints.
	CheckpointTimeout time.Duration `json:"checkpoint_timeout_ns,omitempty"`
	MemoryLimit       int64         `json:"memory_limit_bytes,omitempty"` // the server's cgroup limit, when the caller set one
	ConnString        string        `json:"-"`
	Logger            *slog.Logger  `json:"-"`
	// BeforeRun runs before each store's run, after its table is made and
	// checkpointed (e.g. to attach the server to a memory cgroup); nil for none.
	BeforeRun func(ctx context.Context) error `json:"-"`
}

// DefaultEventsScenario is the field report's workload at a size that
// runs in minutes.
func DefaultEventsScenario() EventsScenario {
	return EventsScenario{Stores: []string{"plain", "pgts"}, Sessions: 16, Rows: 200_000, DocBytes: 2048,
		WeekRows: 50_000, Seed: 1}
}

// Validate checks the scenario.
func (s *EventsScenario) Validate() error {
	if len(s.Stores) == 0 {
		return fmt.Errorf("no store: choose from %s", strings.Join(EventStores, ", "))
	}
	for i, st := range s.Stores {
		if !contains(EventStores, st) {
			return fmt.Errorf("unknown store %q (choose from %s)", st, strings.Join(EventStores, ", "))
		}
		if contains(s.Stores[:i], st) {
			return fmt.Errorf("store %q given twice", st)
		}
	}
	switch {
	case s.Sessions < 1 || s.Sessions > 256:
		return fmt.Errorf("sessions %d: must be between 1 and 256", s.Sessions)
	case (s.Rows == 0) == (s.Duration == 0):
		return fmt.Errorf("give rows or a duration, not both and not neither")
	case s.Rows < 0 || s.Rows > maxEventRows:
		return fmt.Errorf("rows %d: must be between 1 and %d", s.Rows, maxEventRows)
	case s.Duration < 0 || s.Duration > 24*time.Hour:
		return fmt.Errorf("duration %s: must be between 1s and 24h", s.Duration)
	case s.Duration > 0 && s.Duration < time.Second:
		return fmt.Errorf("duration %s: must be between 1s and 24h", s.Duration)
	case s.DocBytes < 64 || s.DocBytes > gen.MaxPayloadBytes:
		return fmt.Errorf("doc bytes %d: must be between 64 and %d", s.DocBytes, gen.MaxPayloadBytes)
	case s.CheckpointTimeout != 0 && (s.CheckpointTimeout < 30*time.Second || s.CheckpointTimeout > 24*time.Hour ||
		s.CheckpointTimeout%time.Second != 0):
		return fmt.Errorf("checkpoint timeout %s: must be whole seconds between 30s and 24h (the server's limits)", s.CheckpointTimeout)
	case s.WeekRows < 1 || s.WeekRows > int64(7*24*time.Hour/time.Microsecond):
		return fmt.Errorf("week rows %d: must be between 1 and %d (one row a microsecond)", s.WeekRows, int64(7*24*time.Hour/time.Microsecond))
	}
	return nil
}

// maxEventRows bounds a store's rows, and is the generator's length when
// a duration bounds the run: more single-row transactions than a day holds.
const maxEventRows = 1_000_000_000

// step is created_at's spacing.
func (s *EventsScenario) step() time.Duration {
	return 7 * 24 * time.Hour / time.Duration(s.WeekRows)
}

// EventsSample is one second of a run (the last one may be shorter).
// Byte and call counts are for the interval, not per second; the server
// figures are -1 when its /proc is not readable.
type EventsSample struct {
	T          float64 `json:"t"`       // seconds since the run started, at the interval's end
	Seconds    float64 `json:"seconds"` // the interval's length
	Inserts    int64   `json:"inserts"` // rows committed in the interval
	IPS        float64 `json:"ips"`     // Inserts / Seconds
	P50US      int64   `json:"p50_us"`  // commit latency of the interval's inserts
	P99US      int64   `json:"p99_us"`
	MaxUS      int64   `json:"max_us"`
	WriteBytes int64   `json:"server_write_bytes"` // /proc/PID/io write_bytes of the server processes
	WriteCalls int64   `json:"server_write_calls"` // /proc/PID/io syscw of the server processes
	// DeviceWriteBytes and DeviceWrites are the block device holding the
	// data directory's, whoever wrote (/sys/dev/block/M:m/stat); -1 when
	// unknown. On a shared machine they include other programs' writes.
	DeviceWriteBytes int64 `json:"device_write_bytes"`
	DeviceWrites     int64 `json:"device_writes"`
	WALBytes         int64 `json:"wal_bytes"`
	Checkpoint       bool  `json:"checkpoint"`  // the checkpointer was busy at the sample (not waiting in CheckpointerMain)
	Checkpoints      int64 `json:"checkpoints"` // checkpoints completed since the run started
}

// EventIndex is one index's size at the end of a run, summed over
// partitions.
type EventIndex struct {
	Name       string `json:"name"`
	Definition string `json:"definition"`
	Bytes      int64  `json:"bytes"`
}

// EventsRun is one store's run.
type EventsRun struct {
	Store   string  `json:"store"`
	Rows    int64   `json:"rows"` // committed, and counted in the table when Verified
	Seconds float64 `json:"seconds"`
	IPS     float64 `json:"ips"`
	// StartIPS and EndIPS are the mean rates of the first and the last
	// tenth of the run's whole seconds (at least one second each; the
	// last, partial second is left out).
	StartIPS   float64  `json:"start_ips"`
	EndIPS     float64  `json:"end_ips"`
	EndToStart float64  `json:"end_to_start"` // EndIPS / StartIPS
	Latency    *Latency `json:"commit_latency,omitempty"`
	// PrimaryKey is the key the table got; Advice is what pgts' table
	// creation answered to a primary key on id alone (pgts store).
	PrimaryKey string       `json:"primary_key"`
	Advice     string       `json:"advice,omitempty"`
	Partitions int          `json:"partitions"`
	TableBytes int64        `json:"table_bytes"` // heap and TOAST, all partitions
	Indexes    []EventIndex `json:"indexes"`
	WriteBytes int64        `json:"server_write_bytes"` // -1 when the server's /proc is not readable
	WriteCalls int64        `json:"server_write_calls"`
	// DeviceWriteBytes and DeviceWrites: see EventsSample; -1 when unknown.
	DeviceWriteBytes int64          `json:"device_write_bytes"`
	DeviceWrites     int64          `json:"device_writes"`
	WALBytes         int64          `json:"wal_bytes"`
	Checkpoints      int64          `json:"checkpoints"`
	Samples          []EventsSample `json:"samples"`
	Verified         bool           `json:"rows_verified"`
	Complete         bool           `json:"complete"`
	Error            string         `json:"error,omitempty"`
}

// EventsResult is a whole `bench events` run.
type EventsResult struct {
	Scenario EventsScenario `json:"scenario"`
	Machine  Machine        `json:"machine"`
	Command  string         `json:"command"`
	Runs     []EventsRun    `json:"runs"`
	Complete bool           `json:"complete"`
	Error    string         `json:"error,omitempty"`
}

// RunEvents runs the scenario's stores in order. It returns what it
// measured even when a run fails or ctx is cancelled: that run is
// recorded incomplete, the remaining ones are skipped, and the error is
// returned too. onRun (may be nil) is called after every run.
func RunEvents(ctx context.Context, s EventsScenario, onRun func(EventsRun)) (EventsResult, error) {
	res := EventsResult{Scenario: s}
	if err := s.Validate(); err != nil {
		return res, err
	}
	if s.Logger == nil {
		s.Logger = slog.New(slog.DiscardHandler)
	}
	pool, err := pg.NewPool(ctx, s.ConnString, int32(s.Sessions+2))
	if err != nil {
		return res, err
	}
	defer pool.Close()
	if s.CheckpointTimeout > 0 {
		reset, err := setCheckpointTimeout(ctx, pool, s.CheckpointTimeout)
		if err != nil {
			return res, err
		}
		defer reset()
	}
	res.Machine = DescribeMachine(ctx, pool)
	for _, store := range s.Stores {
		r := runEvents(ctx, pool, s, store)
		res.Runs = append(res.Runs, r)
		if onRun != nil {
			onRun(r)
		}
		if !r.Complete {
			res.Error = fmt.Sprintf("store %s: %s", store, r.Error)
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
			return res, fmt.Errorf("store %s: %s", store, r.Error)
		}
	}
	res.Complete = true
	return res, nil
}

// startEnd returns the mean rates of the first and last tenth of the
// whole-second samples (of all samples in a run shorter than a second).
func startEnd(samples []EventsSample) (start, end float64) {
	var whole, all []float64
	for _, sm := range samples {
		if sm.Seconds >= 0.5 {
			whole = append(whole, sm.IPS)
		}
		if sm.Seconds > 0 {
			all = append(all, sm.IPS)
		}
	}
	if len(whole) == 0 {
		whole = all
	}
	if len(whole) == 0 {
		return 0, 0
	}
	k := max(1, len(whole)/10)
	mean := func(v []float64) float64 {
		t := 0.0
		for _, x := range v {
			t += x
		}
		return t / float64(len(v))
	}
	return mean(whole[:k]), mean(whole[len(whole)-k:])
}

// setCheckpointTimeout sets the server's checkpoint_timeout and reloads
// its configuration; reset puts back what postgresql.auto.conf had (a
// RESET when it had nothing) and reloads again.
func setCheckpointTimeout(ctx context.Context, pool *pgxpool.Pool, d time.Duration) (reset func(), err error) {
	var prev *string
	// pg_file_settings shows postgresql.auto.conf's line, if any.
	err = pool.QueryRow(ctx, `SELECT (SELECT setting FROM pg_file_settings
		WHERE name = 'checkpoint_timeout' AND sourcefile LIKE '%postgresql.auto.conf' ORDER BY seqno DESC LIMIT 1)`).Scan(&prev)
	if err != nil {
		return nil, fmt.Errorf("reading checkpoint_timeout: %w", err)
	}
	apply := func(ctx context.Context, sql string) error {
		if _, err := pool.Exec(ctx, sql); err != nil {
			return err
		}
		_, err := pool.Exec(ctx, "SELECT pg_reload_conf()")
		return err
	}
	if err := apply(ctx, fmt.Sprintf("ALTER SYSTEM SET checkpoint_timeout = '%ds'", int64(d/time.Second))); err != nil {
		return nil, fmt.Errorf("setting checkpoint_timeout (needs a superuser): %w", err)
	}
	// The reload is asynchronous: wait until a new session sees the value.
	want := fmt.Sprintf("%ds", int64(d/time.Second))
	for deadline := time.Now().Add(10 * time.Second); ; {
		var got string
		if err := pool.QueryRow(ctx, "SELECT setting || 's' FROM pg_settings WHERE name = 'checkpoint_timeout'").Scan(&got); err != nil {
			return nil, err
		}
		if got == want {
			break
		}
		if time.Now().After(deadline) {
			return nil, errors.New("setting checkpoint_timeout: the server did not take the new value within 10 s")
		}
		time.Sleep(50 * time.Millisecond) // polling the server's reload, not synchronising goroutines
	}
	return func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		sql := "ALTER SYSTEM RESET checkpoint_timeout"
		if prev != nil {
			sql = "ALTER SYSTEM SET checkpoint_timeout = '" + strings.ReplaceAll(*prev, "'", "''") + "'"
		}
		_ = apply(rctx, sql) // the benchmark's figures stand without it; the setting is in the results
	}, nil
}
