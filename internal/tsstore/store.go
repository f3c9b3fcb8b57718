package tsstore

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgts/pgts/internal/catalog"
	"github.com/pgts/pgts/internal/copyload"
	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/rra"
	scaleout "github.com/pgts/pgts/internal/shard"
)

var (
	// ErrFull: accepting the point could make the pending data exceed
	// Config.MaxMemory. TryAdd returns it at once; Add waits for a flush
	// instead and never returns it. Health wraps it while points are
	// being refused or held back.
	ErrFull = errors.New("write-back cache full")
	// ErrClosed: the Store is closed.
	ErrClosed = errors.New("store closed")
)

// shards spread the series over independently locked maps so that
// concurrent Adds rarely wait for each other.
const shards = 64

// lockRun bounds the series a flush handles in one hold of a shard's
// lock (gather, releaseKept, settle): a receiver's point for the shard
// waits for one run. Held for a shard's every series, 15,600 of them at
// 1,000,000 series, the lock stalled the receivers for the whole of each
// gather (TestFlushHoldsShardLocksBriefly): a point for the shard being
// gathered came every 64 points or so. A run is short because the
// receivers meet it that often: one point in 64 waits for half a run on
// average while a flush gathers or settles, and a series takes the flush
// about a microsecond: at 1,000,000 series and 350,000 points/s, the
// receiving goroutine waited for shard locks 0.75 s of every 8 with runs
// of 256, 0.12 s with runs of 32 (execution traces).
const lockRun = 32

// Store keeps the series of the metrics daemon: it consolidates points into
// round-robin archives in memory, buffers closed slots and raw points in a
// write-back cache, and flushes them to PostgreSQL in batches. It is safe
// for concurrent use. Open starts one background goroutine (the periodic
// flush), which Close stops.
type Store struct {
	pool   *pgxpool.Pool
	cfg    Config
	log    *slog.Logger
	mgr    *partition.Manager
	raw    *copyload.Target // nil: no raw points
	rawTbl *partition.Table
	// rawPast is how old a raw point may be (RawConfig.AcceptPast).
	rawPast partition.Interval
	// rawShard writes the raw points into a sharded raw table's
	// partitions on the shards (rawshard.go); nil when the raw table is
	// local. raw is then the coordinator's parent and rawTbl names it.
	rawShard *scaleout.Writer

	rules atomic.Pointer[[]rra.Rule]
	// ruleSchemas maps a rule of rules (*rra.Rule) to its *schemaInfo
	// (schemaOf); SetRules clears it.
	ruleSchemas sync.Map
	seed        maphash.Seed
	shard       [shards]shard
	idx         index // every key of the shards' maps, for Find and tag queries

	regMu   sync.Mutex             // guards schemas and bundles
	schemas map[string]*schemaInfo // by identity text
	bundles map[bundleKey]int32
	nSeries atomic.Int64
	mem     memory
	// gen counts flushes; a series records it at each point (touched),
	// so that one not touched for two flushes is idle (evict.go).
	gen atomic.Uint32
	// refusedAt is the clock (micros) of the last point that did not fit
	// in the budget, 0 if none: Health reports it for a flush interval.
	refusedAt atomic.Int64
	counters  counters
	metrics   *metrics

	// closeMu: Add holds it shared while it changes the cache, Close
	// exclusively to stop new Adds before the final flush.
	closeMu sync.RWMutex
	closed  bool

	flushMu sync.Mutex // one flush at a time
	// flushCols are each flush worker's slot columns, reused from flush
	// to flush under flushMu (writeShare).
	flushCols []slotRows
	// flushScratch is what a flush needs in proportion to the series it
	// writes, kept likewise while the series keep sending (Flush).
	flushScratch flushScratch
	// rawRetry holds the raw points of a write that failed part-way, under
	// flushMu: some of its batches may have committed. The next flush
	// writes exactly these rows again under the same load ID, so the
	// loader's ledger skips the batches that committed (exactly once).
	rawRetry    *rawRows
	rawRetryID  string
	rawSeq      int64
	openedAt    time.Time // names the raw writes' load IDs
	kick        chan struct{}
	freedMu     sync.Mutex
	freed       chan struct{} // closed and replaced after every flush
	stop        context.CancelFunc
	done        chan struct{}
	lastMaint   time.Time
	lastFlushNS atomic.Int64
	// flushRunMax is the most series a flush handled in one hold of a
	// shard's lock (gather, releaseKept, settle), for tests.
	flushRunMax atomic.Int64

	// The periodic flush's failures, owned by the flush loop; health is
	// the last flush's error for Health.
	health                atomic.Pointer[error]
	failRun, failUnlogged int
	failSince, failLogged time.Time
}

type shard struct {
	mu    sync.Mutex
	m     map[string]*series
	dirty []*series // series with something to write
	spare []*series // the array of the dirty list a flush took, for the next (flush only)
	fresh []*series // series not yet registered in the database
	kept  []*series // series keeping emptied buffers (series.kept; flush only)
}

// Open migrates the pgts catalog, creates the raw table if configured and
// missing, loads the series registry and the saved consolidation state, and
// starts the periodic flush. The pool must allow FlushWorkers+1
// connections.
func Open(ctx context.Context, pool *pgxpool.Pool, cfg Config) (*Store, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("tsstore config: %w", err)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := &Store{
		pool:     pool,
		cfg:      cfg,
		log:      log,
		seed:     maphash.MakeSeed(),
		schemas:  map[string]*schemaInfo{},
		bundles:  map[bundleKey]int32{},
		kick:     make(chan struct{}, 1),
		freed:    make(chan struct{}),
		openedAt: time.Now(),
	}
	s.flushCols = make([]slotRows, cfg.FlushWorkers)
	s.flushScratch.order = make([][]orderKey, cfg.FlushWorkers)
	rules := append([]rra.Rule(nil), cfg.Rules...)
	s.rules.Store(&rules)
	s.mem.max = cfg.MaxMemory
	for i := range s.shard {
		s.shard[i].m = map[string]*series{}
	}
	if err := catalog.Migrate(ctx, pool); err != nil {
		return nil, err
	}
	s.mgr = partition.NewManager(pool, log, cfg.Now)
	if cfg.Raw != nil {
		s.rawPast = cfg.Raw.acceptPast()
		if err := s.openRaw(ctx); err != nil {
			return nil, err
		}
	}
	m, err := s.loadRegistry(ctx, cfg)
	if err != nil {
		if s.rawShard != nil {
			s.rawShard.Close()
		}
		return nil, err
	}
	s.metrics = m
	loopCtx, stop := context.WithCancel(context.Background())
	s.stop = stop
	s.done = make(chan struct{})
	s.lastMaint = cfg.Now()
	go s.loop(loopCtx)
	return s, nil
}

// loadRegistry loads the series registry and state and registers the
// metrics.
func (s *Store) loadRegistry(ctx context.Context, cfg Config) (*metrics, error) {
	if err := s.load(ctx); err != nil {
		return nil, err
	}
	return newMetrics(s, cfg.Registerer)
}

// SetRules replaces the rules for series seen from now on; series already
// known keep the archives they were given. It is the SIGHUP reload.
func (s *Store) SetRules(rules []rra.Rule) error {
	if err := checkRules(rules); err != nil {
		return fmt.Errorf("tsstore rules: %w", err)
	}
	r := append([]rra.Rule(nil), rules...)
	s.rules.Store(&r)
	// An Add still matching the old rules may store one entry after
	// this; it is never looked up again, and the next SetRules drops it.
	s.ruleSchemas.Clear()
	return nil
}

// loop flushes every FlushInterval, and sooner when kicked (the cache
// passed 80% of its budget). A failed flush keeps the data and is retried
// at the next tick.
func (s *Store) loop(ctx context.Context) {
	defer close(s.done)
	t := time.NewTicker(s.cfg.FlushInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-s.kick:
		}
		// A flush under way finishes even when Close stops the loop: cut
		// short, it could leave raw points half written.
		fctx := context.WithoutCancel(ctx)
		s.noteFlush(s.Flush(fctx))
		s.logFuture()
		s.logRawOld()
		s.maintain(fctx)
	}
}

// noteFlush records the outcome of a periodic flush: a failure is logged
// at most once per flush interval with the number of failures since the
// last log, and the first success after failures is logged as recovery.
func (s *Store) noteFlush(err error) {
	now := time.Now()
	if err != nil {
		s.health.Store(&err)
		s.failRun++
		s.failUnlogged++
		if s.failSince.IsZero() {
			s.failSince = now
		}
		if now.Sub(s.failLogged) >= s.cfg.FlushInterval {
			s.log.Warn("flushing the metrics cache", "err", err, "failures", s.failUnlogged, "failing_for", now.Sub(s.failSince).Round(time.Second))
			s.failLogged, s.failUnlogged = now, 0
		}
		return
	}
	s.health.Store(nil)
	if s.failRun > 0 {
		s.log.Info("flushing the metrics cache recovered", "failures", s.failRun, "failed_for", now.Sub(s.failSince).Round(time.Second))
		s.failRun, s.failUnlogged, s.failSince, s.failLogged = 0, 0, time.Time{}, time.Time{}
	}
}

// Health returns nil when the last periodic flush wrote everything and no
// point was refused for memory within the last flush interval; otherwise
// the flush's error (the data stays buffered for the next), or ErrFull
// wrapped with when a point was last refused or held back (TryAdd drops
// it; Add waits for a flush). /healthz answers 503 with it. Safe for
// concurrent use.
func (s *Store) Health() error {
	if p := s.health.Load(); p != nil {
		return *p
	}
	if at := s.refusedAt.Load(); at != 0 {
		if ago := time.Duration(s.cfg.Now().UnixMicro()-at) * time.Microsecond; ago < s.cfg.FlushInterval {
			return fmt.Errorf("%w: points refused or held back %v ago (max-memory %d bytes pending; %d points dropped since start)",
				ErrFull, ago.Round(time.Millisecond), s.mem.max, s.counters.full.Load())
		}
	}
	return nil
}

// logFuture logs, at most once per flush, the points refused since the
// last time for being too far in the future.
func (s *Store) logFuture() {
	n := s.counters.future.Load()
	if d := n - s.counters.futureLogged.Swap(n); d > 0 {
		s.log.Warn("refused points dated beyond the clock plus the future tolerance",
			"points", d, "tolerance", s.cfg.FutureTolerance)
	}
}

// logRawOld logs, at most once per flush, the points not kept raw since
// the last time for being older than the raw points' accepted past.
func (s *Store) logRawOld() {
	n := s.counters.rawOld.Load()
	if d := n - s.counters.rawOldLogged.Swap(n); d > 0 {
		s.log.Warn("refused raw points dated before the raw table's accepted window (a clock unset, or Influx seconds sent without precision=s?)",
			"points", d, "accept_past", s.rawPast.String())
	}
}

// maintain premakes the raw table's partitions and applies its retention,
// hourly.
func (s *Store) maintain(ctx context.Context) {
	if s.rawTbl == nil || s.cfg.Now().Sub(s.lastMaint) < time.Hour {
		return
	}
	s.lastMaint = s.cfg.Now()
	if s.rawShard != nil {
		s.maintainSharded(ctx)
		return
	}
	for _, r := range s.mgr.Maintain(ctx, []*partition.Table{s.rawTbl}) {
		if r.Err != nil {
			s.log.Warn("maintaining the raw points table", "table", r.Table, "err", r.Err)
		}
	}
}

// Close stops accepting points, stops the periodic flush and flushes
// everything buffered: when it returns nil, every accepted point is in
// PostgreSQL. Close does not close the pool.
func (s *Store) Close(ctx context.Context) error {
	s.closeMu.Lock()
	if s.closed {
		s.closeMu.Unlock()
		return ErrClosed
	}
	s.closed = true
	s.closeMu.Unlock()
	s.stop()
	<-s.done
	s.wakeWaiters()
	err := s.Flush(ctx)
	s.metrics.unregister()
	if s.rawShard != nil {
		s.rawShard.Close()
	}
	if err != nil {
		return fmt.Errorf("final flush: %w", err)
	}
	return nil
}

// kickFlush asks the loop for an early flush without waiting.
func (s *Store) kickFlush() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// freedChan returns the channel closed at the end of the next flush.
func (s *Store) freedChan() <-chan struct{} {
	s.freedMu.Lock()
	defer s.freedMu.Unlock()
	return s.freed
}

func (s *Store) wakeWaiters() {
	s.freedMu.Lock()
	close(s.freed)
	s.freed = make(chan struct{})
	s.freedMu.Unlock()
}

func (s *Store) shardOf(key string) *shard {
	return &s.shard[maphash.String(s.seed, key)%shards]
}

// Stats is a snapshot of the store's counters. Point counts are since Open.
type Stats struct {
	Series      int64 // series known (registered or about to be)
	Unflushed   int64 // series with data not yet written
	Bytes       int64 // bytes pending (buffered points and slots), accounted against MaxMemory
	PeakBytes   int64 // the most ever pending
	MaxMemory   int64
	SeriesBytes int64 // bytes of the series themselves: keys, index, consolidation state in memory
	Evicted     int64 // consolidation states dropped from memory (their series idle and flushed)
	Reloaded    int64 // evicted states read back from pgts.ds_state for a new point
	Buffered    int64 // raw points in the cache
	Added       int64 // points accepted
	Unmatched   int64 // points of series matching no rule, without raw storage: dropped
	OutOfOrder  int64 // RRD consolidation: points older than their series' last update: not consolidated
	Duplicate   int64 // RRD consolidation: points at the time of their series' previous point: not consolidated
	Future      int64 // points beyond the clock plus FutureTolerance: dropped whole
	TooOld      int64 // Graphite consolidation: points older than every archive's span: not archived
	LateKept    int64 // Graphite consolidation: late points stored in their slot without updating coarser archives
	Invalid     int64 // points with an infinite value or a time out of range: dropped
	OverLimit   int64 // points of new series beyond MaxSeries: dropped
	Full        int64 // points refused for lack of memory (ErrFull)
	RawStored   int64 // raw points written
	RawRefused  int64 // raw points refused for the raw time window (by the store or the table)
	Slots       int64 // archive slots written
	Flushes     int64 // flushes that wrote everything they took
	FlushFails  int64 // flushes that failed (their data is kept for the next)
	LastFlush   time.Duration
}

type counters struct {
	added, unmatched, outOfOrder, duplicate, invalid, overLimit, full atomic.Int64
	future, tooOld, lateKept, futureLogged                            atomic.Int64
	rawStored, rawRefused, slots, flushes, flushFails, buffered       atomic.Int64
	unflushed, evicted, reloaded, rawOld, rawOldLogged                atomic.Int64
}

// SeriesBytes returns the resident bytes of every series' state, as the
// store accounts them: keys, registry and index entries, consolidation
// states (Stats.SeriesBytes). The pending data (buffered points, closed
// slots) is apart, in Stats.Bytes.
func (s *Store) SeriesBytes() int64 { return s.mem.series.Load() }

// Stats returns the current counters.
func (s *Store) Stats() Stats {
	c := &s.counters
	return Stats{
		Series:      s.nSeries.Load(),
		Unflushed:   c.unflushed.Load(),
		Bytes:       s.mem.used.Load(),
		PeakBytes:   s.mem.peak.Load(),
		MaxMemory:   s.mem.max,
		SeriesBytes: s.mem.series.Load(),
		Evicted:     c.evicted.Load(),
		Reloaded:    c.reloaded.Load(),
		Buffered:    c.buffered.Load(),
		Added:       c.added.Load(),
		Unmatched:   c.unmatched.Load(),
		OutOfOrder:  c.outOfOrder.Load(),
		Duplicate:   c.duplicate.Load(),
		Future:      c.future.Load(),
		TooOld:      c.tooOld.Load(),
		LateKept:    c.lateKept.Load(),
		Invalid:     c.invalid.Load(),
		OverLimit:   c.overLimit.Load(),
		Full:        c.full.Load(),
		RawStored:   c.rawStored.Load(),
		RawRefused:  c.rawRefused.Load(),
		Slots:       c.slots.Load(),
		Flushes:     c.flushes.Load(),
		FlushFails:  c.flushFails.Load(),
		LastFlush:   time.Duration(s.lastFlushNS.Load()),
	}
}

// memory accounts the pending bytes against the budget: reserve before
// growing the cache, settle with the actual size afterwards. The series
// themselves are accounted apart (series): they are not refused for
// memory, their idle states are evicted instead.
type memory struct {
	max    int64
	used   atomic.Int64
	peak   atomic.Int64
	series atomic.Int64
}

// reserve takes n bytes if they fit in the budget.
func (m *memory) reserve(n int64) bool {
	if n <= 0 {
		// Most points: nothing to reserve, and no write to the counter
		// every adder and the flush share.
		m.add(n)
		return true
	}
	for {
		u := m.used.Load()
		if u+n > m.max && n > 0 {
			return false
		}
		if m.used.CompareAndSwap(u, u+n) {
			m.notePeak(u + n)
			return true
		}
	}
}

// add accounts n more (or, negative, fewer) bytes unconditionally.
func (m *memory) add(n int64) {
	if n == 0 {
		return
	}
	m.notePeak(m.used.Add(n))
}

func (m *memory) notePeak(u int64) {
	for {
		p := m.peak.Load()
		if u <= p || m.peak.CompareAndSwap(p, u) {
			return
		}
	}
}
