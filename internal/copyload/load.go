package copyload

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"

	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pg"
)

// Route says where batches of a series table are COPYed.
type Route int

const (
	// RouteLeaf COPYs each batch straight into its leaf time partition
	// (the default: measured faster, see docs/benchmarks.md).
	RouteLeaf Route = iota
	// RouteParent COPYs into the partitioned parent and lets the server
	// route each row.
	RouteParent
)

// Config tunes a load. Zero values take the defaults of DefaultConfig.
type Config struct {
	Workers    int   // connections, each pulling batches from one queue
	BatchRows  int   // rows per batch (one transaction)
	BatchBytes int   // encoded bytes per batch, at most
	Text       bool  // force text COPY even when binary is possible
	Route      Route // series tables only
	// LoadID makes the load resumable and exactly-once: each batch's
	// ledger row commits with the batch, and a rerun with the same ID and
	// the same input skips the batches that committed.
	LoadID string
	// Fingerprint describes the input options that decide where records
	// start and end (format, delimiter, quoting, header): with the table,
	// the columns and the batch options it must be the same on a resume.
	// Input names, sizes and times do not belong here: a resume compares
	// each batch it skips with the digest of the committed one.
	Fingerprint string
	// MaxRejects aborts the load once more rows than this are rejected;
	// negative means no limit.
	MaxRejects int64
	// MaxOpenBatches bounds the partially filled batches held by the
	// router (one per partition being written); the fullest is sent when
	// a new one would exceed it.
	MaxOpenBatches int
	// AsyncCommit lets batches commit with the server's synchronous_commit
	// setting. By default each batch commits with synchronous_commit = on,
	// so a batch counted as loaded survives a server crash even where the
	// server runs with synchronous_commit = off (one WAL flush per batch
	// costs nothing measurable at 10,000 rows a batch).
	AsyncCommit bool
	// Analyze runs ANALYZE on the partitions (or the plain table) written
	// once the load completes, so that the planner and `table show` see
	// their rows before autovacuum comes (cheap on fresh partitions: it
	// samples at most 300 × default_statistics_target rows).
	Analyze bool
	Retry   RetryPolicy
	Rejects RejectSink // nil: rejects are only counted
	// OnBatch is called after each committed batch, from worker goroutines
	// (progress, batch logs, benchmarks); nil for none.
	OnBatch func(BatchInfo)
	Now     func() time.Time // clock for the accepted time window
	Logger  *slog.Logger

	// OnConflict says what becomes of a row whose unique key is stored
	// already (conflict.go): rejected with the server's reason
	// (ConflictReject, the default), the stored row kept (ConflictSkip),
	// or its other columns overwritten with the row's (ConflictUpdate).
	OnConflict ConflictMode

	// Bulk loads partitions that do not exist yet and end before now −
	// BulkMargin (0: DefaultBulkMargin; negative: none) as standalone tables, indexed once
	// and attached when their rows are in (bulk.go).
	Bulk       bool
	BulkMargin time.Duration
	// BulkUnitRows: a bulk partition of at most this many rows (0:
	// DefaultBulkUnitRows) is loaded by one worker in one transaction
	// (COPY FREEZE into the table made in it); a larger one by all.
	BulkUnitRows int
}

// ConflictMode is what a load does with a row whose unique key is stored
// already.
type ConflictMode int

// Conflict modes: see Config.OnConflict.
const (
	ConflictReject ConflictMode = iota
	ConflictSkip
	ConflictUpdate
)

// ParseConflictMode reads "reject", "skip" or "update".
func ParseConflictMode(s string) (ConflictMode, error) {
	switch s {
	case "", "reject":
		return ConflictReject, nil
	case "skip":
		return ConflictSkip, nil
	case "update":
		return ConflictUpdate, nil
	}
	return 0, fmt.Errorf("--on-conflict %q: choose reject, skip or update", s)
}

func (m ConflictMode) String() string {
	return [...]string{"reject", "skip", "update"}[m]
}

// RetryPolicy bounds retries of batches that failed for transient reasons
// (lost connection, server restart, serialization failure).
type RetryPolicy struct {
	Attempts  int           // tries per batch, at least 1
	BaseDelay time.Duration // first backoff, doubled each time
	MaxDelay  time.Duration
}

// DefaultConfig returns the defaults: one worker per core (set by the
// caller), 10,000-row batches of at most 32 MiB, about a minute of retries.
func DefaultConfig() Config {
	return Config{Workers: 2, BatchRows: 10000, BatchBytes: 32 << 20, MaxRejects: -1, MaxOpenBatches: 64,
		Retry: RetryPolicy{Attempts: 10, BaseDelay: 100 * time.Millisecond, MaxDelay: 10 * time.Second}}
}

// Validate checks the config.
func (c *Config) Validate() error {
	switch {
	case c.Workers < 1 || c.Workers > 256:
		return fmt.Errorf("workers %d: must be between 1 and 256", c.Workers)
	case c.BatchRows < 1 || c.BatchRows > 10_000_000:
		return fmt.Errorf("batch size %d: must be between 1 and 10,000,000 rows", c.BatchRows)
	case c.BatchBytes < 1024 || c.BatchBytes > 1<<30:
		return fmt.Errorf("batch byte cap %d: must be between 1 KiB and 1 GiB", c.BatchBytes)
	case c.MaxOpenBatches < 1:
		return fmt.Errorf("max open batches %d: must be at least 1", c.MaxOpenBatches)
	case c.Retry.Attempts < 1:
		return fmt.Errorf("retry attempts %d: must be at least 1", c.Retry.Attempts)
	case len(c.LoadID) > 200:
		return fmt.Errorf("load ID is %d bytes; at most 200", len(c.LoadID))
	}
	return nil
}

// Summary counts what a load did. Read = Loaded + Rejected + Skipped +
// NotLoaded always holds.
type Summary struct {
	Read      int64 `json:"rows_read"`
	Loaded    int64 `json:"rows_loaded"`
	Rejected  int64 `json:"rows_rejected"`
	Skipped   int64 `json:"rows_already_loaded"` // committed by an earlier run of the same load ID
	NotLoaded int64 `json:"rows_not_loaded"`     // read but not committed (interrupted or failed)
	// With Config.OnConflict skip or update, Loaded = Inserted + Updated
	// + Kept: rows new to the table, rows that overwrote a stored row of
	// their key (or an earlier row of the same key in the input), stored
	// rows kept. Zero otherwise.
	Inserted    int64         `json:"rows_inserted,omitempty"`
	Updated     int64         `json:"rows_updated,omitempty"`
	Kept        int64         `json:"rows_kept_existing,omitempty"`
	Batches     int64         `json:"batches_committed"`
	SkippedB    int64         `json:"batches_already_loaded"`
	Bytes       int64         `json:"bytes_sent"`
	Partitions  int           `json:"partitions_written"`
	Created     int           `json:"partitions_created"`
	Retries     int64         `json:"retries"`
	Splits      int64         `json:"batch_splits"`
	Format      string        `json:"format"`
	Route       string        `json:"route"`
	Elapsed     time.Duration `json:"-"`
	Seconds     float64       `json:"seconds"`
	RowsPerSec  float64       `json:"rows_per_second"`
	Interrupted bool          `json:"interrupted,omitempty"`
	Complete    bool          `json:"complete"`
	// LoadID is the load's ID (made for a bulk load given none).
	LoadID string `json:"load_id,omitempty"`
	// Moved counts the rows other writers left waiting in the series
	// table's DEFAULT partition that the load's end moved into their
	// partitions (partition.Manager.MoveWaiting).
	Moved int64 `json:"waiting_rows_moved,omitempty"`
	// Pending: after an interrupted or failed bulk load, its partitions
	// whose rows are committed but not attached (invisible until a rerun
	// of the load completes).
	Pending []PendingPartition `json:"pending_partitions,omitempty"`
}

// PendingPartition is an unattached partition a bulk load holds.
type PendingPartition struct {
	Name string `json:"name"`
	Rows int64  `json:"rows"`
}

// ErrTooManyRejects is returned when MaxRejects is exceeded.
var ErrTooManyRejects = errors.New("too many rejected rows")

// Loader runs one load. Not safe for concurrent use.
type Loader struct {
	pool   *pgxpool.Pool
	mgr    *partition.Manager
	target *Target
	cfg    Config
	log    *slog.Logger
	binary bool

	queue chan *batch
	free  chan *batch
	// The rows and encoded bytes of the last full batch the router sent:
	// a batch made new starts with that capacity, so that it does not
	// grow by copying itself over and over as it fills (a batch is held
	// long on the bulk path, so the free list often has none). Router only.
	fullRows, fullBytes int

	copyTail string        // the COPY statement after the table name
	cols     []Column      // the columns COPY writes, in order
	typeMap  *pgtype.Map   // decodes binary rows for the reject file
	txOpts   pgx.TxOptions // BEGIN, with synchronous_commit unless AsyncCommit, and the rollups' setting (rollups.go)
	// beginQuery is txOpts' BEGIN without the rollups' setting.
	beginQuery string
	rollups    *rollupHook // the rollups this load records for (rollups.go), nil for none
	colOf      sync.Map    // constraint (schema.table.name) → its single column, for server rejects
	staged     sync.Map    // *pgx.Conn → true once it has this load's staging table
	keysOf     sync.Map    // quoted table → tableKeys, for duplicate rejects
	sources    []string    // names of sources, indexed by batch.srcs
	raws       rawInputs   // the sources that can be read again, for rejects as written
	done       map[int64]ledgerEntry
	lockConn   *pgx.Conn // holds the load ID's advisory lock during Run
	// madeID: the load ID was made by New (a bulk load given none); its
	// ledger is deleted once the load completes.
	madeID bool
	// firstStart is when the load ID's first run started (pgts.load),
	// zero without a load ID.
	firstStart time.Time
	read       atomic.Int64
	loaded     atomic.Int64
	rejected   atomic.Int64
	skipped    atomic.Int64
	batches    atomic.Int64
	skippedB   atomic.Int64
	bytes      atomic.Int64
	retries    atomic.Int64
	splits     atomic.Int64
	created    atomic.Int64
	inserted   atomic.Int64 // OnConflict: see Summary
	updated    atomic.Int64
	kept       atomic.Int64
	// conflictKey is the arbiter of ConflictUpdate: the columns of the
	// primary key, or of the table's only unique index.
	conflictKey []string
	partsMu     sync.Mutex
	parts       map[string]bool

	bulk *bulkState // nil unless the bulk path serves this Run
	// parseFree holds the parse jobs (parse.go) of the inputs read so
	// far, with their grown buffers, for the next input; made by the
	// first input parsed in parallel, used by Run's goroutine and the
	// splitter it starts.
	parseFree chan *parseJob
}

// BatchInfo describes a committed batch.
type BatchInfo struct {
	Seq      int64
	Worker   int
	Table    string // the partition or table written
	Rows     int64  // rows stored
	Rejected int64  // rows the server refused
	Bytes    int64
	Start    time.Time
	Duration time.Duration
}

// New prepares a load into target. The pool must allow cfg.Workers
// connections plus one for partition creation.
func New(pool *pgxpool.Pool, mgr *partition.Manager, target *Target, cfg Config) (*Loader, error) {
	def := DefaultConfig()
	if cfg.BatchRows == 0 {
		cfg.BatchRows = def.BatchRows
	}
	if cfg.BatchBytes == 0 {
		cfg.BatchBytes = def.BatchBytes
	}
	if cfg.MaxOpenBatches == 0 {
		cfg.MaxOpenBatches = def.MaxOpenBatches
	}
	if cfg.Retry.Attempts == 0 {
		cfg.Retry = def.Retry
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	l := &Loader{pool: pool, mgr: mgr, target: target, cfg: cfg, log: cfg.Logger,
		binary: target.BinaryOK() && !cfg.Text, parts: map[string]bool{}}
	if cfg.Bulk && cfg.LoadID == "" {
		// A bulk partition may take several transactions to fill: only a
		// ledger can tell a rerun which of them committed.
		l.cfg.LoadID, l.madeID = madeLoadID(target.String(), cfg.Now()), true
	}
	if !cfg.AsyncCommit {
		l.beginQuery = "BEGIN; SET LOCAL synchronous_commit TO on"
	}
	l.txOpts.BeginQuery = l.beginQuery
	if !target.BinaryOK() && !cfg.Text {
		l.log.Warn("some column types have no binary encoder; using text COPY for this table", "types", target.UnknownTypes())
	}
	return l, nil
}

// Binary reports whether the load uses binary COPY.
func (l *Loader) Binary() bool { return l.binary }

// LoadID returns the load's ID: Config.LoadID, or the one New made for a
// bulk load given none ("" for a load without a ledger).
func (l *Loader) LoadID() string { return l.cfg.LoadID }

// madeLoadID names a bulk load given no ID: the table, the time, and a
// random suffix against two loads started in the same second.
func madeLoadID(target string, now time.Time) string {
	var r [3]byte
	_, _ = rand.Read(r[:])
	return fmt.Sprintf("bulk-%s-%s-%x", target, now.UTC().Format("20060102T150405Z"), r)
}

// Run loads every row of src. It returns the summary (also on error: what
// was committed until then). When ctx is cancelled, reading stops, batches
// in flight finish, and the error wraps context.Canceled.
func (l *Loader) Run(ctx context.Context, src Source) (Summary, error) {
	start := time.Now()
	cols, err := src.CopyColumns(l.target)
	if err != nil {
		return Summary{}, err
	}
	format := "text"
	if l.binary {
		format = "binary"
	}
	l.cols, l.typeMap = cols, pgtype.NewMap()
	l.copyTail = " (" + columnList(cols) + ") FROM STDIN (FORMAT " + format + ")"
	if l.cfg.OnConflict != ConflictReject {
		if err := l.conflictSetup(ctx); err != nil {
			return Summary{}, err
		}
	}
	if err := l.rollupSetup(ctx); err != nil {
		return Summary{}, err
	}
	if l.cfg.LoadID != "" {
		defer l.unlockLoad()
		done, err := l.openLedger(ctx)
		if err != nil {
			return Summary{}, err
		}
		l.done = done
	}
	l.queue = make(chan *batch, l.cfg.Workers)
	l.free = make(chan *batch, l.cfg.Workers*2+l.cfg.MaxOpenBatches+2)

	// Workers use their own context: an interrupt stops the reader, and the
	// workers finish the batch in hand; only a worker's failure stops them.
	wctx, wcancel := context.WithCancel(context.WithoutCancel(ctx))
	defer wcancel()
	if l.cfg.Bulk {
		if err := l.bulkStart(wctx); err != nil {
			return Summary{}, err
		}
	}
	g, gctx := errgroup.WithContext(wctx)
	for i := 0; i < l.cfg.Workers; i++ {
		g.Go(func() error { return l.worker(gctx, i+1) })
	}
	// The router stops when the interrupt comes or a worker fails.
	rctx, rcancel := context.WithCancel(ctx)
	defer rcancel()
	go func() {
		select {
		case <-gctx.Done():
			rcancel()
		case <-rctx.Done():
		}
	}()
	r := newRouter(l)
	routeErr := src.Run(rctx, r)
	if routeErr == nil {
		routeErr = r.flushAll(rctx)
	}
	close(l.queue)
	workErr := g.Wait()
	if err := l.bulkWait(); err != nil && workErr == nil {
		workErr = err
	}

	s := l.summary(time.Since(start))
	s.Complete = routeErr == nil && workErr == nil
	if s.Complete && l.cfg.Analyze && s.Batches > 0 {
		l.analyze(context.WithoutCancel(ctx), r)
	}
	if s.Complete && l.target.Series != nil && l.mgr != nil {
		// Rows any SQL client wrote for partitions not made yet reach
		// them at every load, not only at maintain; the load's rows are
		// committed, so a failure is a warning.
		made, moved, err := l.mgr.MoveWaiting(context.WithoutCancel(ctx), l.target.Series)
		if err != nil {
			l.log.Warn("the load completed, but moving the rows waiting in the default partition failed (pgts maintain retries)", "err", err)
		}
		s.Created += made
		s.Moved = moved
	}
	if s.Complete && l.cfg.LoadID != "" {
		// The rows are committed whatever happens here: a failure is a
		// warning (a rerun finds every batch in the ledger).
		if err := l.finishLedger(context.WithoutCancel(ctx), l.madeID); err != nil {
			l.log.Warn("the load completed and its rows are committed, but recording its end failed", "load_id", l.cfg.LoadID, "err", err)
		}
	}
	if !s.Complete && l.bulk != nil {
		s.Pending = l.pendingAfter(context.WithoutCancel(ctx))
	}
	switch {
	case workErr != nil:
		return s, workErr
	case routeErr != nil && ctx.Err() != nil:
		s.Interrupted = true
		return s, fmt.Errorf("load interrupted: %w", context.Canceled)
	case routeErr != nil:
		return s, routeErr
	}
	return s, nil
}

func (l *Loader) summary(elapsed time.Duration) Summary {
	s := Summary{LoadID: l.cfg.LoadID, Read: l.read.Load(), Loaded: l.loaded.Load(), Rejected: l.rejected.Load(), Skipped: l.skipped.Load(),
		Batches: l.batches.Load(), SkippedB: l.skippedB.Load(), Bytes: l.bytes.Load(), Retries: l.retries.Load(),
		Splits: l.splits.Load(), Created: int(l.created.Load()), Elapsed: elapsed, Seconds: elapsed.Seconds(),
		Inserted: l.inserted.Load(), Updated: l.updated.Load(), Kept: l.kept.Load()}
	s.NotLoaded = s.Read - s.Loaded - s.Rejected - s.Skipped
	l.partsMu.Lock()
	s.Partitions = len(l.parts)
	l.partsMu.Unlock()
	s.Format = "text"
	if l.binary {
		s.Format = "binary"
	}
	s.Route = "table"
	if l.target.Series != nil {
		s.Route = "leaf"
		if l.cfg.Route == RouteParent {
			s.Route = "parent"
		}
	}
	if elapsed > 0 {
		s.RowsPerSec = float64(s.Loaded) / elapsed.Seconds()
	}
	return s
}

// reject records a reject and enforces MaxRejects.
func (l *Loader) reject(r Reject) error {
	n := l.rejected.Add(1)
	if l.cfg.Rejects != nil {
		if err := l.cfg.Rejects.Reject(r); err != nil {
			return err
		}
	}
	if l.cfg.MaxRejects >= 0 && n > l.cfg.MaxRejects {
		return fmt.Errorf("%w: more than %d (the last: %s line %d: %s)", ErrTooManyRejects, l.cfg.MaxRejects, r.Source, r.Line, r.Reason)
	}
	return nil
}

// analyze runs ANALYZE on the tables the load wrote: the leaf partitions
// its rows went to (also with RouteParent), or the plain table. A failure
// is logged, not returned: the rows are stored.
func (l *Loader) analyze(ctx context.Context, r *router) {
	tables := []string{l.target.Qualified()}
	if l.target.Series != nil {
		tables = tables[:0]
		for lo := range r.known {
			name, err := partition.Name(l.target.Series.Name, l.target.Series.Interval, lo)
			if err != nil {
				continue
			}
			tables = append(tables, pg.QuoteQualified(l.target.Series.Schema, name))
		}
		sort.Strings(tables)
	}
	start := time.Now()
	for _, t := range tables {
		if _, err := l.pool.Exec(ctx, "ANALYZE "+t); err != nil {
			l.log.Warn("analyzing a table the load wrote (the rows are committed; autovacuum will analyze it)", "table", t, "err", err)
			if pg.Retryable(err) || ctx.Err() != nil {
				return // the server is gone or going: the others would fail alike
			}
		}
	}
	l.log.Debug("analyzed the tables written", "tables", len(tables), "duration", time.Since(start))
}
