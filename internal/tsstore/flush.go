package tsstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sync/errgroup"

	"github.com/pgts/pgts/internal/copyload"
	"github.com/pgts/pgts/internal/rra"
)

// flushItem is what one flush takes of one series: prefixes of its
// buffers (the series may grow them meanwhile) and its state.
type flushItem struct {
	x      *series
	held   []rra.Update
	raw    []rawPoint
	state  []byte // nil: unchanged since last written
	worker int32
	shard  int32 // the series' shard: gather takes the items shard by shard
}

// recomputeAnswer answers one recompute request (Graphite consolidation)
// among the updates of flush item item: the finer values read in the
// flush's transaction, given to the DS in it.
type recomputeAnswer struct {
	item int
	req  rra.Update
	kids []float64
}

// lateBatch is the updates of flush item item a transaction wrote and
// whose recompute requests it answers.
type lateBatch struct {
	item int
	ups  []rra.Update
}

// lateRounds bounds the rounds of recompute requests one flush answers:
// each answer may request the next coarser archive's slot, so a late
// point needs one round per archive above the finest. Requests beyond it
// (late points arriving meanwhile) wait in their DS for the next flush.
const lateRounds = rra.MaxArchives

// rawRetryBytes is what a raw point kept aside for a retry costs (its
// series id, time and value).
const rawRetryBytes = 24

// slotChunk bounds the slot updates of one statement, and stateChunk the
// bytes of saved states: a statement's parameters are held whole while it
// is sent, twice (the encoded parameters, 16 bytes a slot update when
// the updates of an archive row are many and consecutive, up to 64 when
// each is alone in its row, and pgconn's Bind message holding a copy),
// outside the store's budget.
const (
	slotChunk  = 20_000
	stateChunk = 1 << 20
)

// Flush writes everything buffered: it registers new series, then writes
// raw points (through the loader's COPY path), closed archive slots and
// consolidation state. Data a failed flush could not write stays buffered
// for the next flush. Flushes are serialised.
func (s *Store) Flush(ctx context.Context) error {
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	defer s.wakeWaiters()
	s.gen.Add(1)
	start := time.Now()
	errReg := s.register(ctx)
	tReg := time.Since(start)
	items := s.gather()
	defer s.flushScratch.keep(items)
	tGather := time.Since(start)
	rawOK, errRaw := true, error(nil)
	if s.raw != nil {
		rawOK, errRaw = s.writeRaw(ctx, items)
	}
	tRaw := time.Since(start)
	rraOK, errRRA := s.writeArchives(ctx, items)
	tRRA := time.Since(start)
	s.settle(items, rawOK, rraOK)
	s.evictIdle()
	elapsed := time.Since(start)
	s.log.Debug("flushed the metrics cache", "series", len(items), "register", tReg, "gather", tGather-tReg,
		"raw", tRaw-tGather, "archives", tRRA-tRaw, "settle", elapsed-tRRA)
	s.lastFlushNS.Store(int64(elapsed))
	s.metrics.observeFlush(elapsed)
	err := errors.Join(errReg, errRaw, errRRA)
	if err != nil {
		s.counters.flushFails.Add(1)
		return fmt.Errorf("flushing the metrics cache: %w", err)
	}
	s.counters.flushes.Add(1)
	return nil
}

// gather takes what every dirty, registered series has to write: the
// closed slots of its DS copied into blocks shared by many series (the
// DS keeps its buffer for its next points), its state encoded likewise.
// It frees the buffers the series that got no point since the last flush
// kept (settle).
func (s *Store) gather() []flushItem {
	// Sized for the series dirty now (a few more may come meanwhile), not
	// grown by doubling: at 300,000 series that is ~26 MB a flush; the
	// last flush's when it has room.
	items := s.flushScratch.items[:0]
	if n := int(max(0, s.counters.unflushed.Load())) + 64; cap(items) < n {
		items = make([]flushItem, 0, n)
	}
	s.flushScratch.items = nil
	workers := int64(s.cfg.FlushWorkers)
	var ups updateBlocks
	var states byteBlocks
	for i := range s.shard {
		sh := &s.shard[i]
		s.releaseKept(sh)
		// The dirty list is taken whole and replaced by the spare one,
		// which the series made dirty meanwhile join; its series are
		// then taken a run at a time (lockRun), so that a receiver's
		// point for this shard waits for a run, not for the shard. A
		// series in the taken list stays marked dirty until its run
		// takes it: it is not listed twice. Both arrays are kept while
		// the series send; a list found empty, once quiet, is freed.
		sh.mu.Lock()
		list := sh.dirty
		sh.dirty, sh.spare = sh.spare[:0], nil
		sh.mu.Unlock()
		s.inRuns(sh, list, func(run []*series) {
			var bytes, taken int64
			for _, x := range run {
				if x.id == 0 {
					// Not registered yet: listed again for the next flush.
					sh.dirty = append(sh.dirty, x)
					continue
				}
				x.dirty = false
				taken++
				it := flushItem{x: x, worker: int32(x.seg() % workers), shard: int32(i)}
				if x.ds != nil {
					if len(x.held()) == 0 {
						if n := x.ds.Pending(); n > 0 {
							x.setHeld(x.ds.AppendClosedSlots(ups.take(n)))
						}
					} else {
						x.setHeld(x.ds.ClosedSlots(x.held()))
					}
					if x.stateDirty {
						if st, err := states.appendState(x.ds); err == nil {
							it.state = st
							x.stateDirty = false
						}
					}
					b := x.bufBytes()
					bytes += b - x.bytes
					x.bytes = b
				}
				it.held, it.raw = x.held(), x.raw()
				items = append(items, it)
			}
			s.counters.unflushed.Add(-taken)
			s.mem.add(bytes)
		})
		if len(list) > 0 {
			// Only the flush, under flushMu, reads and sets spare.
			clear(list)
			sh.spare = list[:0]
		}
	}
	return items
}

// settle removes what was written from the buffers, and puts back in the
// dirty lists the series with something left to write.
func (s *Store) settle(items []flushItem, rawOK bool, rraOK []bool) {
	// The items of a shard are consecutive: one hold of its lock, and one
	// change of the shared counters, a run of at most lockRun of them.
	for lo := 0; lo < len(items); {
		sh := &s.shard[items[lo].shard]
		hi := lo + 1
		for hi < len(items) && items[hi].shard == items[lo].shard && hi-lo < lockRun {
			hi++
		}
		var bytes, buffered, unflushed int64
		sh.mu.Lock()
		for i := lo; i < hi; i++ {
			it := &items[i]
			x := it.x
			// An emptied seriesBuf stays for the series' next points
			// (releaseKept frees it when none come).
			if rraOK[it.worker] {
				if x.buf != nil {
					x.buf.held = dropFront(x.buf.held, len(it.held))
				}
			} else if it.state != nil {
				x.stateDirty = true
			}
			if rawOK {
				if x.buf != nil {
					x.buf.raw = dropFront(x.buf.raw, len(it.raw))
				}
				buffered -= int64(len(it.raw))
			}
			if !x.dirty && (x.stateDirty || len(x.raw()) > 0 || len(x.held()) > 0) {
				x.dirty = true
				sh.dirty = append(sh.dirty, x)
				unflushed++
			}
			if !x.kept && (x.buf != nil || (x.ds != nil && x.ds.PendingCap() > 0)) {
				x.kept = true
				sh.kept = append(sh.kept, x)
			}
			b := x.bufBytes()
			bytes += b - x.bytes
			x.bytes = b
		}
		s.counters.buffered.Add(buffered)
		s.counters.unflushed.Add(unflushed)
		s.mem.add(bytes)
		s.endRun(sh, hi-lo)
		lo = hi
	}
}

// dropFront returns s without its first n elements, in a new array (or
// nil) so that the written ones are freed. An emptied buffer of a series
// (its seriesBuf) stays for its next flush: releaseKept frees it.
func dropFront[T any](s []T, n int) []T {
	if n >= len(s) {
		return nil
	}
	r := make([]T, len(s)-n)
	copy(r, s[n:])
	return r
}

// releaseKept frees the emptied buffers of shard sh's kept series that
// got no point since the last flush; the others (dirty: gather takes
// them next) keep theirs, and settle lists them again. It takes sh.mu a
// run of lockRun series at a time; the kept list itself is only read
// and set by the flush, under flushMu.
func (s *Store) releaseKept(sh *shard) {
	var busy int64
	s.inRuns(sh, sh.kept, func(run []*series) {
		var bytes int64
		for _, x := range run {
			x.kept = false
			if x.dirty {
				busy++
				continue
			}
			if x.ds != nil {
				x.ds.ReleasePending()
			}
			x.tidy()
			b := x.bufBytes()
			bytes += b - x.bytes
			x.bytes = b
		}
		s.mem.add(bytes)
	})
	if busy == 0 {
		sh.kept = nil // quiet: the list's array too
		return
	}
	clear(sh.kept)
	sh.kept = sh.kept[:0]
}

// updateBlocks hands out room for the closed slots a flush takes from
// many series in blocks of updateBlock, a few allocations a flush instead
// of one a series; a block is freed once every series' slots in it are
// written (settle drops them).
type updateBlocks struct{ cur []rra.Update }

const updateBlock = 4096

// take returns an empty slice with room for n updates; appending more
// than n copies it out of the block.
func (b *updateBlocks) take(n int) []rra.Update {
	if cap(b.cur)-len(b.cur) < n {
		b.cur = make([]rra.Update, 0, max(n, updateBlock))
	}
	l := len(b.cur)
	b.cur = b.cur[:l+n]
	return b.cur[l : l : l+n]
}

// byteBlocks holds the states a flush encodes, in blocks of
// stateBlock bytes.
type byteBlocks struct{ cur []byte }

const stateBlock = 64 << 10

// appendState returns the encoding of d's state (rra.DS.AppendBinary),
// in the current block when it fits.
func (b *byteBlocks) appendState(d *rra.DS) ([]byte, error) {
	if cap(b.cur)-len(b.cur) < stateBlock/16 {
		b.cur = make([]byte, 0, stateBlock)
	}
	free := b.cur[len(b.cur):]
	st, err := d.AppendBinary(free)
	if err != nil {
		return nil, err
	}
	if len(st) <= cap(free) { // it fit: the block holds it
		b.cur = b.cur[:len(b.cur)+len(st)]
	}
	return st[:len(st):len(st)], nil
}

// writeRaw writes the raw points of items through the loader, each write
// under its own load ID so that it is exactly once: a write that fails
// part-way (some batches committed) is kept aside and written again,
// the same rows in the same order under the same ID, before anything
// else; the ledger then skips what committed. It returns whether the
// items' raw points were taken (written, or kept aside for the retry):
// when not, they stay in their series' buffers.
func (s *Store) writeRaw(ctx context.Context, items []flushItem) (taken bool, err error) {
	if s.rawRetry != nil {
		if err := s.loadRaw(ctx, s.rawRetry, s.rawRetryID); err != nil {
			return false, err
		}
		s.mem.add(-rawRetryBytes * int64(len(s.rawRetry.ids)))
		s.rawRetry, s.rawRetryID = nil, ""
	}
	src := &rawRows{}
	for _, it := range items {
		for _, p := range it.raw {
			src.ids = append(src.ids, it.x.id)
			src.ts = append(src.ts, p.t)
			src.vs = append(src.vs, p.v)
		}
	}
	if len(src.ids) == 0 {
		return true, nil
	}
	s.rawSeq++
	id := fmt.Sprintf("pgts-serve-%d-%d", s.openedAt.UnixNano(), s.rawSeq)
	if err := s.loadRaw(ctx, src, id); err != nil {
		// Held here from now on; the series' buffers let them go.
		s.rawRetry, s.rawRetryID = src, id
		s.mem.add(rawRetryBytes * int64(len(src.ids)))
		return true, err
	}
	return true, nil
}

// loadRaw COPYs src under load ID id, then forgets the ledger of the
// load (it is complete).
func (s *Store) loadRaw(ctx context.Context, src *rawRows, id string) error {
	if s.rawShard != nil {
		return s.loadRawSharded(ctx, src, id)
	}
	src.reset()
	cfg := s.rawLoadConfig(id, len(src.ids))
	ld, err := copyload.New(s.pool, s.mgr, s.raw, cfg)
	if err != nil {
		return fmt.Errorf("writing raw points: %w", err)
	}
	sum, err := ld.Run(ctx, &copyload.GenSource{Name: "metrics cache", Gen: src})
	s.counters.rawStored.Add(sum.Loaded)
	s.counters.rawRefused.Add(sum.Rejected)
	if err != nil {
		return fmt.Errorf("writing %d raw points: %w", len(src.ids), err)
	}
	// Durably, whatever the server's synchronous_commit: a ledger a crash
	// brought back would never be deleted (its load ID is never used again).
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL synchronous_commit = on`); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DELETE FROM pgts.load WHERE load_id = $1`, id)
		return err
	})
	if err != nil {
		s.log.Warn("forgetting the ledger of a raw points write", "load_id", id, "err", err)
	}
	return nil
}

// rawLoadConfig is the loader's configuration of a raw write of n points
// under load ID id.
func (s *Store) rawLoadConfig(id string, n int) copyload.Config {
	cfg := copyload.DefaultConfig()
	cfg.Workers = s.cfg.FlushWorkers
	cfg.MaxRejects = -1
	cfg.Now = s.cfg.Now
	cfg.Logger = s.log
	if s.cfg.Raw.Retry.Attempts > 0 {
		cfg.Retry = s.cfg.Raw.Retry
	}
	cfg.LoadID, cfg.Fingerprint = id, fmt.Sprintf("raw points: %d", n)
	return cfg
}

// slotRows are the columns of the slot updates of one statement.
type slotRows struct {
	bundle []int32
	seg    []int64
	slot   []int32
	pos    []int32
	time   []int64 // seconds
	val    []float64
}

func (r *slotRows) len() int { return len(r.bundle) }

// reset empties r, keeping its columns' memory for the next statement.
func (r *slotRows) reset() {
	r.bundle, r.seg, r.slot = r.bundle[:0], r.seg[:0], r.slot[:0]
	r.pos, r.time, r.val = r.pos[:0], r.time[:0], r.val[:0]
}

// encodedSlots is one statement's slot updates, encoded (slotRows.encode).
type encodedSlots struct {
	params [][]byte
	n      int // slot updates
}

// slotEncoder gathers slot updates into statements of at most slotChunk,
// encoding each as it fills, so that one set of columns serves them all.
type slotEncoder struct {
	cur  *slotRows
	done []encodedSlots
}

// add appends the slots of series x's updates ups. A statement ends
// once it holds slotChunk updates, at the next segment: the rows of a
// segment are each written by one statement (see shareOrder).
func (e *slotEncoder) add(x *series, ups []rra.Update) {
	if n := e.cur.len(); n >= slotChunk && e.cur.seg[n-1] != x.seg() {
		e.finish()
	}
	e.cur.add(x, ups)
}

// shareOrder returns the indices of worker w's items in the order of
// their series' ids, so that the updates of a segment's rows are
// gathered together and each row is written once per flush: a packed
// row's page holds it and room for one more version (catalog migration
// 14), so that a first update in a transaction is HOT (in place, no new
// index entry) but a second one finds no room and moves the row, and
// in the shards' hash order every statement of a large flush updated
// most of the rows.
//
// It appends them to ks[:0] and returns it.
func shareOrder(ks []orderKey, items []flushItem, w int) []orderKey {
	ks = ks[:0]
	for i := range items {
		if int(items[i].worker) == w {
			ks = append(ks, orderKey{items[i].x.id, int32(i)})
		}
	}
	slices.SortFunc(ks, func(a, b orderKey) int { return cmp.Compare(a.id, b.id) })
	return ks
}

// orderKey is a flush item's index with its series' id (shareOrder).
type orderKey struct {
	id int64
	i  int32
}

// flushScratch is what a flush needs in proportion to the series it
// writes, its items and each worker's order of them, kept from flush to
// flush under flushMu: at a million series, making them afresh for every
// flush was a sixth of the bytes the daemon allocated. A flush that
// uses less than a quarter of them (the series slowed down or stopped)
// frees them.
type flushScratch struct {
	items []flushItem
	order [][]orderKey // by flush worker
}

// keep keeps items, the flush's, for the next flush, or frees them and
// the workers' orders when the flush used little of them.
func (f *flushScratch) keep(items []flushItem) {
	if len(items) < cap(items)/4 {
		f.items = nil
		clear(f.order)
		return
	}
	clear(items) // the series' buffers, for the collector
	f.items = items[:0]
}

// finish encodes the updates gathered since the last statement, if any,
// and returns the statements.
func (e *slotEncoder) finish() []encodedSlots {
	if n := e.cur.len(); n > 0 {
		e.done = append(e.done, encodedSlots{e.cur.encode(), n})
		e.cur.reset()
	}
	return e.done
}

// stateRows are the columns of the state updates of one statement.
type stateRows struct {
	seg   []int64
	pos   []int32
	state [][]byte
}

// writeArchives writes closed slots and states, each worker its share of
// the segments in one transaction. It reports which workers succeeded.
// A worker changes the held updates of its own items only (see
// writeLate).
func (s *Store) writeArchives(ctx context.Context, items []flushItem) ([]bool, error) {
	n := s.cfg.FlushWorkers
	ok := make([]bool, n)
	errs := make([]error, n)
	var g errgroup.Group
	for w := range n {
		g.Go(func() error {
			slots, err := s.writeShare(ctx, items, w)
			if err != nil {
				errs[w] = err
				return nil
			}
			ok[w] = true
			s.counters.slots.Add(slots)
			return nil
		})
	}
	_ = g.Wait() // errors are per worker
	return ok, errors.Join(errs...)
}

// writeShare writes worker w's share of items in one transaction and
// returns the number of slots written.
func (s *Store) writeShare(ctx context.Context, items []flushItem, w int) (int64, error) {
	// The worker's columns are kept from flush to flush (under flushMu):
	// at a million series, growing them afresh for every statement was
	// most of the bytes the daemon allocated.
	if len(s.flushCols) != s.cfg.FlushWorkers {
		panic("tsstore: writeShare outside Flush")
	}
	enc := slotEncoder{cur: &s.flushCols[w]}
	enc.cur.reset()
	var states []stateRows
	st := &stateRows{}
	stBytes := 0
	order := shareOrder(s.flushScratch.order[w], items, w)
	s.flushScratch.order[w] = order
	for _, k := range order {
		// Other workers change their items' held updates: read only ours.
		it := &items[k.i]
		x := it.x
		seg, pos := x.seg(), x.pos()
		if it.state != nil {
			if stBytes >= stateChunk && seg != st.seg[len(st.seg)-1] {
				states = append(states, *st)
				st, stBytes = &stateRows{}, 0
			}
			st.seg, st.pos, st.state = append(st.seg, seg), append(st.pos, pos), append(st.state, it.state)
			stBytes += len(it.state) + 16
		}
		if len(it.held) == 0 {
			continue
		}
		enc.add(x, it.held)
	}
	rows := enc.finish()
	if len(st.seg) > 0 {
		states = append(states, *st)
	}
	if len(rows) == 0 && len(states) == 0 && !hasRequests(items, w) {
		return 0, nil
	}
	var total int64
	// READ COMMITTED whatever the database's default: runWrite relies on
	// each statement taking a new snapshot.
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.ReadCommitted}, func(tx pgx.Tx) error {
		n, err := writeSlotRows(ctx, tx, rows)
		if total = n; err != nil {
			return err
		}
		// Only the items holding recompute requests (late points) have
		// anything for writeLate's first round.
		var batches []lateBatch
		for i := range items {
			if int(items[i].worker) == w && hasRequest(items[i].held) {
				batches = append(batches, lateBatch{i, items[i].held})
			}
		}
		n, err = s.writeLate(ctx, tx, items, batches)
		if total += n; err != nil {
			return err
		}
		for _, st := range states {
			if err := runWrite(ctx, tx, stmtWriteStates, st.encode()); err != nil {
				return fmt.Errorf("writing the state of %d series: %w", len(st.seg), err)
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return total, nil
}

// add appends the slots of series x's updates ups.
func (r *slotRows) add(x *series, ups []rra.Update) {
	seg, pos, sch := x.seg(), x.pos(), x.sch
	for _, u := range ups {
		b := sch.bundles[u.Archive]
		for idx, t := range sch.schema.Slots(u) {
			r.bundle = append(r.bundle, b)
			r.seg = append(r.seg, seg)
			r.slot = append(r.slot, int32(idx))
			r.pos = append(r.pos, pos)
			r.time = append(r.time, t/1e6)
			r.val = append(r.val, u.Value)
		}
	}
}

// writeSlotRows writes rows in tx, in order, and returns the number of
// slots written.
func writeSlotRows(ctx context.Context, tx pgx.Tx, rows []encodedSlots) (int64, error) {
	var total int64
	for _, r := range rows {
		if err := runWrite(ctx, tx, stmtWriteSlots, r.params); err != nil {
			return total, fmt.Errorf("writing %d archive slots: %w", r.n, err)
		}
		total += int64(r.n)
	}
	return total, nil
}

// writeLate answers, in tx and after the updates of batches are written
// in it, their recompute requests (Graphite consolidation: the coarser
// slots of a point older than the ones its DS keeps in memory): it reads
// the finer values, gives them to the DS, and writes the slots the DS
// recomputes, round after round while they request coarser slots, so
// that the transaction writing a late point also writes the minute and
// hour it changes, as whisper does in one update. The updates taken from
// a DS join its series' held ones and its item's, so that a failed
// transaction leaves them held, written again with their requests by the
// next flush (recomputing is idempotent). It returns the slots written.
func (s *Store) writeLate(ctx context.Context, tx pgx.Tx, items []flushItem, batches []lateBatch) (int64, error) {
	var total int64
	for round := 1; len(batches) > 0; round++ {
		answers, err := s.recompute(ctx, tx, items, batches)
		if err != nil || len(answers) == 0 {
			return total, err
		}
		batches = batches[:0]
		enc := slotEncoder{cur: &slotRows{}}
		for a := 0; a < len(answers); {
			i := answers[a].item
			it := &items[i]
			x := it.x
			sh := s.shardOf(x.key)
			sh.mu.Lock()
			for ; a < len(answers) && answers[a].item == i; a++ {
				x.ds.Recompute(answers[a].req, answers[a].kids)
			}
			x.stateDirty = true
			if round < lateRounds {
				// Updates a fetch took meanwhile come first.
				n := len(it.held)
				x.setHeld(x.ds.ClosedSlots(x.held()))
				it.held = x.held()
				if ups := it.held[n:]; len(ups) > 0 {
					batches = append(batches, lateBatch{i, ups})
					enc.add(x, ups)
				}
			}
			sh.mu.Unlock()
		}
		n, err := writeSlotRows(ctx, tx, enc.finish())
		if total += n; err != nil {
			return total, err
		}
	}
	return total, nil
}

// hasRequests reports whether worker w's items hold recompute requests.
func hasRequests(items []flushItem, w int) bool {
	for i := range items {
		if int(items[i].worker) == w && hasRequest(items[i].held) {
			return true
		}
	}
	return false
}

// hasRequest reports whether ups hold a recompute request.
func hasRequest(ups []rra.Update) bool {
	for _, u := range ups {
		if u.Count == 0 {
			return true
		}
	}
	return false
}

// recompute reads, after the slots are written in tx, the finer values
// that the recompute requests among batches ask for, and returns them in
// the order of batches and of their updates.
func (s *Store) recompute(ctx context.Context, tx pgx.Tx, items []flushItem, batches []lateBatch) ([]recomputeAnswer, error) {
	var refs []recomputeAnswer
	var bundles, sizes []int32
	var segs, t0s, steps, ns []int64
	var poss []int32
	for _, b := range batches {
		x := items[b.item].x
		for _, u := range b.ups {
			if u.Count != 0 {
				continue
			}
			sch := x.sch
			arch, start, n := sch.schema.RecomputeSpan(u)
			a := sch.schema.Archive(arch)
			refs = append(refs, recomputeAnswer{item: b.item, req: u})
			bundles, segs, poss = append(bundles, sch.bundles[arch]), append(segs, x.seg()), append(poss, x.pos())
			t0s, steps = append(t0s, start/1e6), append(steps, int64(a.Step/time.Second))
			sizes, ns = append(sizes, int32(a.Size)), append(ns, int64(n))
		}
	}
	if len(refs) == 0 {
		return nil, nil
	}
	sizes64 := make([]int64, len(sizes))
	ns32 := make([]int32, len(ns))
	for i := range sizes {
		sizes64[i], ns32[i] = int64(sizes[i]), int32(ns[i])
	}
	rows, err := tx.Query(ctx, sqlRecompute, bundles, segs, poss, t0s, steps, sizes64, ns32)
	if err != nil {
		return nil, fmt.Errorf("reading %d slots to recompute: %w", len(refs), err)
	}
	var o int64
	var vals []byte
	_, err = pgx.ForEachRow(rows, []any{&o, &vals}, func() error {
		if o < 1 || o > int64(len(refs)) {
			return fmt.Errorf("recompute answer %d of %d", o, len(refs))
		}
		if len(vals)%8 != 0 {
			return fmt.Errorf("recompute answer %d: %d bytes of packed values", o, len(vals))
		}
		kids := make([]float64, len(vals)/8)
		for i := range kids {
			kids[i] = math.NaN()
			if v, ok := packedValue(packedAt(vals, i+1)); ok {
				kids[i] = v
			}
		}
		refs[o-1].kids = kids
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading %d slots to recompute: %w", len(refs), err)
	}
	return refs, nil
}

// inRuns calls f with the series of xs, a run of at most lockRun at a
// time, each under sh's lock, ended by endRun.
func (s *Store) inRuns(sh *shard, xs []*series, f func(run []*series)) {
	for lo := 0; lo < len(xs); lo += lockRun {
		run := xs[lo:min(lo+lockRun, len(xs))]
		sh.mu.Lock()
		f(run)
		s.endRun(sh, len(run))
	}
}

// endRun ends a run of n series the flush handled under sh's lock: it
// records it (flushRunMax), unlocks sh, and yields the processor, so that
// the receivers, waiting for the lock or for a processor, go first: a
// flush at 1,000,000 series otherwise takes the processors from them
// for seconds (scheduler wait: 3.3 s of every 8 in the receiving
// goroutine of an execution trace), while what it writes can wait a
// little.
func (s *Store) endRun(sh *shard, n int) {
	for {
		m := s.flushRunMax.Load()
		if int64(n) <= m || s.flushRunMax.CompareAndSwap(m, int64(n)) {
			break
		}
	}
	sh.mu.Unlock()
	runtime.Gosched()
}
