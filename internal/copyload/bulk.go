package copyload

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sync/errgroup"

	"github.com/pgts/pgts/internal/catalog"
	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pg"
)

// The bulk path (Config.Bulk) loads history: a partition that does not
// exist yet and ends before now − BulkMargin is not created and attached
// first (which makes every row maintain the parent's indexes as it
// arrives), but filled as a standalone table, indexed once, then attached.
// The router holds the batches of such a partition until it closes (the
// input ended, or another bulk partition opens while max(2, Workers) are
// open; only one at first, see bulkState.limit) or outgrows BulkUnitRows:
//
//	closed within BulkUnitRows → one unit, one worker, one transaction
//	  (bulkunit.go): CREATE TABLE; one COPY ... FREEZE of all its
//	  batches; their ledger rows; CREATE INDEX; ATTACH; COMMIT
//	larger → split: the table is made and committed (marked by its comment)
//	  and its batches go to all the workers, each in its own transaction
//	  with its ledger row as on the live path (no index to maintain); when
//	  it is closed and its last batch committed, on a goroutine of its own:
//	  BEGIN; CREATE INDEX ON P ... (each index of the parent); advisory lock;
//	  ATTACH PARTITION (matching indexes adopted; the CHECK of the bounds
//	  spares the scan); DROP CONSTRAINT; COMMENT NULL; COMMIT
//
// Several partitions load at once (units on different workers, the split
// ones' batches on all). Exactly-once holds both ways: a unit commits its
// partition and its ledger rows together; a split partition's batches
// commit with their ledger rows, and a run that stops leaves the table
// unattached and pending (pgts.bulk_partition, partition/bulkpending.go),
// owned by its load ID: the rerun with the same load ID continues it
// (skipping the committed batches by digest) and attaches it; any other
// writer of its range is refused, naming the load. A bulk load always has
// a load ID (one is made when none is given).
//
// Batches are cut the same way on every run of the same input, whatever
// the database holds: every partition the bulk path would take goes
// through the same life (opened at its first row, closed when another
// opens while limit are open, its open batches then sent), whether this
// run finds it missing (held, a unit), unattached (split, resumed) or
// attached by an earlier run (live). Which partitions qualify is decided
// against the time the load first started (pgts.load.started_at), not
// the time of the rerun. So a resumed load matches its ledger batch for
// batch, in input order or not. Rows the server
// refuses are isolated per batch (conflict.go) with line and reason: a
// unit that meets one is rolled back and loaded split. Only the ATTACH
// touches the parent: SHARE UPDATE EXCLUSIVE, which writers (ROW
// EXCLUSIVE) do not conflict with, held from the ATTACH to the COMMIT
// (the index builds come before it).
//
// The rows of a bulk partition are invisible until it is attached: that is
// why the bulk path is asked for (--bulk), not automatic, and only takes
// partitions ending before now − BulkMargin, which live writers of current
// data do not need. It steps aside (with a warning; the live path loads)
// for tables where loading without the parent's indexes and triggers would
// change the result: unique or exclusion constraints (duplicates would be
// found only by the index build, without their lines), foreign keys, row
// triggers, hash sub-partitions, RouteParent.

// bulkMarker is the comment of a bulk-loaded partition until it is
// attached, for whoever looks at it with psql; ownership is recorded in
// pgts.bulk_partition.
func bulkMarker(loadID string) string {
	return "pgts: bulk load " + loadID + " in progress; attached when that load completes (rerun it with --load-id " + loadID +
		", or drop it with pgts loads abandon " + loadID + ")"
}

// DefaultBulkMargin is how far before now a partition must end for the
// bulk path to take it.
const DefaultBulkMargin = time.Hour

// DefaultBulkUnitRows is the size of the largest partition loaded as one
// unit: its batches are held in memory until it is sent (about 80 MB for
// the conditions rows of width 5).
const DefaultBulkUnitRows = 1_000_000

// bulkState is the bulk path's state for one Run.
type bulkState struct {
	indexes []bulkIndex // the parent's indexes, to build on each partition
	cutoff  int64       // micros: partitions ending at or before it are the bulk path's
	// limit is how many bulk partitions stay open at once (router). It
	// starts at one: time-ordered input then closes a partition as soon
	// as the next opens, and the workers start a partition's time earlier
	// than with two held. The first row for a closed partition (input out
	// of order across a boundary) raises it to maxLimit.
	limit, maxLimit int
	unit            int // rows of the largest partition sent as one unit

	ctx context.Context // for the finishing goroutines
	fin errgroup.Group

	mu    sync.Mutex
	parts map[int64]*bulkPart // by lower bound; router writes, workers read under mu
	open  []*bulkPart         // router only: open partitions, least recently used first
	times BulkTimes
}

// bulkIndex is one index of the parent, as "CREATE [UNIQUE] INDEX ON "
// + table + tail.
type bulkIndex struct{ head, tail string }

// bulkPart is one partition loaded by the bulk path.
type bulkPart struct {
	lo, hi      int64
	name, table string // partition name; quoted qualified name
	// Router only: while pending, the partition's batches are held (not
	// sent) until it closes (one unit, bulkunit.go) or outgrows
	// BulkUnitRows (split: the table is made and they go to the queue).
	pending  bool
	held     []*batch
	heldRows int
	// live: the partition was attached when this run first met it (by an
	// earlier run of the load); its batches go the live way, and it is
	// opened and closed like the others only so that batches are cut as
	// in the run that made it. Router only.
	live bool
	// guarded by bulkState.mu
	outstanding int  // batches queued and not yet committed
	closed      bool // the router sends it no more batches
	finishing   bool
	done        chan struct{} // closed once the finish ended; err is then set
	err         error
}

// BulkTimes says where a bulk load's time went besides COPY, summed over
// its partitions (wall time of each step; steps of different partitions
// overlap with each other and with the COPYs).
type BulkTimes struct {
	Partitions int           `json:"partitions"`
	Create     time.Duration `json:"create_ns"`
	Index      time.Duration `json:"index_ns"`
	Attach     time.Duration `json:"attach_ns"` // ATTACH (waiting for the lock included) and COMMIT
}

// BulkTimes returns the bulk path's timings so far; safe to call after Run.
func (l *Loader) BulkTimes() BulkTimes {
	if l.bulk == nil {
		return BulkTimes{}
	}
	l.bulk.mu.Lock()
	defer l.bulk.mu.Unlock()
	return l.bulk.times
}

// bulkStart decides whether the bulk path applies to this load and reads
// the parent's indexes. ctx is the workers' context (the finishes run on
// it). A table the path cannot serve is loaded live, with a warning.
func (l *Loader) bulkStart(ctx context.Context) error {
	t := l.target.Series
	why := ""
	switch {
	case t == nil:
		why = "it is not a series table"
	case l.cfg.Route != RouteLeaf:
		why = "--route parent"
	case t.HashColumn != "":
		why = "it has hash sub-partitions"
	}
	if why == "" {
		var err error
		if why, err = bulkRefusal(ctx, l.pool, t.Qualified()); err != nil {
			return fmt.Errorf("checking %s for the bulk path: %w", t, err)
		}
	}
	if why != "" {
		l.log.Warn("not using the bulk path: loading live", "table", l.target.String(), "reason", why)
		return nil
	}
	idx, err := parentIndexes(ctx, l.pool, t)
	if err != nil {
		return err
	}
	margin := l.cfg.BulkMargin
	switch {
	case margin == 0:
		margin = DefaultBulkMargin
	case margin < 0:
		margin = 0
	}
	start := l.cfg.Now()
	if !l.firstStart.IsZero() {
		start = l.firstStart
	}
	unit := l.cfg.BulkUnitRows
	if unit == 0 {
		unit = DefaultBulkUnitRows
	}
	l.bulk = &bulkState{indexes: idx, cutoff: start.Add(-margin).UnixMicro(), limit: 1, maxLimit: max(2, l.cfg.Workers), unit: unit, ctx: ctx, parts: map[int64]*bulkPart{}}
	return nil
}

// bulkRefusal names what keeps the bulk path from a table ("" when
// nothing does).
func bulkRefusal(ctx context.Context, db catalog.DB, table string) (string, error) {
	var unique, fkey, trig bool
	// A rollup's triggers (pgts_rollup_*) are no reason: the rows of a
	// partition attached by the bulk path are invalidated at the ATTACH.
	err := db.QueryRow(ctx, `SELECT
			EXISTS (SELECT 1 FROM pg_index WHERE indrelid = to_regclass($1) AND (indisunique OR indisexclusion)),
			EXISTS (SELECT 1 FROM pg_constraint WHERE conrelid = to_regclass($1) AND contype = 'f'),
			EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = to_regclass($1) AND NOT tgisinternal
				AND tgname NOT LIKE 'pgts\_rollup\_%')`, table).Scan(&unique, &fkey, &trig)
	switch {
	case err != nil:
		return "", err
	case unique:
		return "it has a unique or exclusion constraint (duplicates must be refused row by row, with their lines)", nil
	case fkey:
		return "it has a foreign key (ATTACH would check every row)", nil
	case trig:
		return "it has triggers (they must fire for each row)", nil
	}
	return "", nil
}

// parentIndexes reads the parent's indexes as statements to run on a
// partition: pg_get_indexdef of "CREATE INDEX name ON ONLY parent USING
// ..." keeps its tail from USING on.
func parentIndexes(ctx context.Context, db catalog.DB, t *partition.Table) ([]bulkIndex, error) {
	rows, err := db.Query(ctx, `SELECT pg_get_indexdef(i.indexrelid), quote_ident(c.relname), i.indisunique,
			quote_ident(n.nspname) || '.' || quote_ident(p.relname)
		FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_class p ON p.oid = i.indrelid
		JOIN pg_namespace n ON n.oid = p.relnamespace
		WHERE i.indrelid = to_regclass($1) ORDER BY c.oid`, t.Qualified())
	if err != nil {
		return nil, fmt.Errorf("reading the indexes of %s: %w", t, err)
	}
	defer rows.Close()
	var out []bulkIndex
	for rows.Next() {
		var def, name, parent string
		var unique bool
		if err := rows.Scan(&def, &name, &unique, &parent); err != nil {
			return nil, err
		}
		head := "CREATE INDEX"
		if unique {
			head = "CREATE UNIQUE INDEX"
		}
		prefix := head + " " + name + " ON ONLY " + parent + " USING "
		tail, ok := strings.CutPrefix(def, prefix)
		if !ok {
			return nil, fmt.Errorf("index %s of %s: unexpected definition %q", name, t, def)
		}
		out = append(out, bulkIndex{head: head + " ON ", tail: " USING " + tail})
	}
	return out, rows.Err()
}

// ensurePartition makes partition [lo, hi) of the series table ready for
// rows at micros: created as a standalone table for the bulk path when it
// takes it, else ensured (created and attached when missing) for the live
// path. Router only.
func (r *router) ensurePartition(ctx context.Context, lo, hi, micros int64) error {
	l := r.l
	if l.bulk != nil && hi <= l.bulk.cutoff {
		ok, err := r.bulkOpen(ctx, lo, hi)
		if err != nil || ok {
			return err
		}
	}
	n, err := l.mgr.Ensure(ctx, r.series, []int64{micros})
	if err != nil {
		return err
	}
	l.created.Add(int64(n))
	return nil
}

// bulkOpen opens partition [lo, hi) on the bulk path: a new standalone
// table, or the unattached table an earlier run of this load left. It
// returns false when the partition exists (attached): the live path loads
// its batches, which are still cut as the bulk path cuts them. A table
// another load holds unattached is refused. Router only.
func (r *router) bulkOpen(ctx context.Context, lo, hi int64) (bool, error) {
	l, t := r.l, r.series
	name, err := partition.Name(t.Name, t.Interval, lo)
	if err != nil {
		return false, err
	}
	leaf := pg.QuoteQualified(t.Schema, name)
	var isPart *bool
	var owner *string
	err = l.pool.QueryRow(ctx, `SELECT c.relispartition,
			(SELECT b.load_id FROM pgts.bulk_partition b WHERE b.partition_schema = $2 AND b.partition_name = $3)
		FROM pg_class c WHERE c.oid = to_regclass($1)`, leaf, t.Schema, name).Scan(&isPart, &owner)
	pending, live := false, false
	switch {
	case err == pgx.ErrNoRows:
		pending = true
	case err != nil:
		return false, fmt.Errorf("looking for partition %q of %s: %w", name, t, err)
	case *isPart:
		live = true
	case owner != nil && *owner == l.cfg.LoadID:
		// left unattached by an earlier run of this load: continue it
	case owner != nil:
		return false, &partition.BulkPendingError{Target: t.String(), Partition: name, LoadID: *owner}
	default:
		return false, fmt.Errorf("table %s exists and is not a partition of %s: rename or drop it to load rows of [%s, %s)",
			leaf, t, partition.FormatMicros(lo), partition.FormatMicros(hi))
	}
	b := l.bulk
	p := &bulkPart{lo: lo, hi: hi, name: name, table: leaf, pending: pending, live: live, done: make(chan struct{})}
	b.mu.Lock()
	b.parts[lo] = p
	b.mu.Unlock()
	l.log.Debug("bulk path: partition opened", "partition", name, "resumed", !pending && !live, "attached", live)
	for len(b.open) >= b.limit {
		if err := r.bulkClose(ctx, b.open[0]); err != nil {
			return false, err
		}
	}
	b.open = append(b.open, p)
	return !live, nil
}

// createSQL makes p a standalone table like the parent, with the CHECK
// constraint of its bounds.
func (l *Loader) createSQL(p *bulkPart) string {
	t := l.target.Series
	col := pg.QuoteIdent(t.TimeColumn)
	return fmt.Sprintf(`CREATE TABLE %s (LIKE %s INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE INCLUDING COMMENTS);
		ALTER TABLE %s ADD CONSTRAINT %s CHECK (%s IS NOT NULL AND %s >= %s AND %s < %s)`,
		p.table, t.Qualified(), p.table, boundsConstraint(p.name), col, col, partition.BoundLiteral(t.TimeType, p.lo),
		col, partition.BoundLiteral(t.TimeType, p.hi))
}

// bulkCreate makes p's table in a transaction of its own, for the split
// path, and records it as pending under this load's ID.
func (l *Loader) bulkCreate(ctx context.Context, p *bulkPart) error {
	start := time.Now()
	t := l.target.Series
	sql := l.createSQL(p) + ";\nCOMMENT ON TABLE " + p.table + " IS " + pg.QuoteLiteral(bulkMarker(l.cfg.LoadID))
	err := pgx.BeginFunc(ctx, l.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, sql, pgx.QueryExecModeSimpleProtocol); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO pgts.bulk_partition (partition_schema, partition_name, target, load_id, lower_bound, upper_bound)
			VALUES ($1, $2, $3, $4, $5, $6)`, t.Schema, p.name, t.String(), l.cfg.LoadID,
			partition.FormatMicros(p.lo), partition.FormatMicros(p.hi))
		return err
	})
	if err != nil {
		return fmt.Errorf("creating partition %q of %s for the bulk path: %w", p.name, l.target.Series, err)
	}
	l.created.Add(1)
	l.bulk.mu.Lock()
	l.bulk.times.Create += time.Since(start)
	l.bulk.mu.Unlock()
	return nil
}

// bulkHold keeps a numbered batch of a pending partition instead of
// queueing it; when the partition outgrows a unit, it is split: its table
// is made and its batches queued. Router only.
func (r *router) bulkHold(ctx context.Context, b *batch) (bool, error) {
	p := b.bulk
	if p == nil || !p.pending {
		return false, nil
	}
	p.held = append(p.held, b)
	p.heldRows += b.rows()
	if p.heldRows <= r.l.bulk.unit {
		return true, nil
	}
	if err := r.l.bulkCreate(ctx, p); err != nil {
		return true, err
	}
	p.pending = false
	held := p.held
	p.held = nil
	for i, h := range held {
		r.l.bulkQueued(h)
		select {
		case r.l.queue <- h:
		case <-ctx.Done():
			for _, x := range held[i:] {
				r.l.release(x)
			}
			return true, ctx.Err()
		}
	}
	return true, nil
}

// boundsConstraint names the CHECK that lets ATTACH skip its scan, as
// partition.Manager names it.
func boundsConstraint(name string) string {
	if len(name)+len("_bounds") > pg.MaxIdentifierBytes {
		return pg.QuoteIdent("pgts_bounds")
	}
	return pg.QuoteIdent(name + "_bounds")
}

// bulkAssign marks a new batch of partition [b.lo, b.hi) as a bulk batch
// when its partition is open on the bulk path. A batch of a partition the
// bulk path closed waits for its attach and then goes the live way.
// Router only.
func (r *router) bulkAssign(ctx context.Context, b *batch) error {
	bs := r.l.bulk
	if bs == nil {
		return nil
	}
	bs.mu.Lock()
	p := bs.parts[b.lo]
	bs.mu.Unlock()
	if p == nil {
		return nil
	}
	if p.closed {
		if bs.limit < bs.maxLimit {
			bs.limit = bs.maxLimit
			r.l.log.Debug("bulk path: a row came for a closed partition; more partitions stay open from now on",
				"partition", p.name, "open", bs.limit)
		}
		select {
		case <-p.done:
		case <-ctx.Done(): // a worker failed (the finish will not come) or the load was interrupted
			return ctx.Err()
		}
		if p.err != nil {
			return p.err
		}
		bs.mu.Lock()
		delete(bs.parts, b.lo)
		bs.mu.Unlock()
		return nil
	}
	for i, o := range bs.open { // most recently used last
		if o == p {
			bs.open = append(append(bs.open[:i:i], bs.open[i+1:]...), p)
			break
		}
	}
	if !p.live {
		b.bulk = p
	}
	return nil
}

// bulkClose sends the open batches of p and marks it closed: its finish
// starts once its last batch commits. Router only.
func (r *router) bulkClose(ctx context.Context, p *bulkPart) error {
	for i := 0; i < len(r.open); {
		if r.open[i].lo == p.lo {
			if err := r.send(ctx, i); err != nil {
				return err
			}
			continue
		}
		i++
	}
	bs := r.l.bulk
	for i, o := range bs.open {
		if o == p {
			bs.open = append(bs.open[:i:i], bs.open[i+1:]...)
			break
		}
	}
	bs.mu.Lock()
	p.closed = true
	if p.live {
		close(p.done) // nothing to finish: its batches went the live way
	} else if !p.pending {
		r.l.bulkMaybeFinish(p)
	}
	bs.mu.Unlock()
	if p.pending {
		return r.bulkSendUnit(ctx, p)
	}
	return nil
}

// bulkCloseAll closes every open bulk partition (the input ended).
func (r *router) bulkCloseAll(ctx context.Context) error {
	if r.l.bulk == nil {
		return nil
	}
	for len(r.l.bulk.open) > 0 {
		if err := r.bulkClose(ctx, r.l.bulk.open[0]); err != nil {
			return err
		}
	}
	return nil
}

// bulkQueued counts a bulk batch handed to the workers. Router only.
func (l *Loader) bulkQueued(b *batch) {
	if b.bulk == nil {
		return
	}
	l.bulk.mu.Lock()
	b.bulk.outstanding++
	l.bulk.mu.Unlock()
}

// bulkCommitted counts a bulk batch committed; the partition's finish
// starts when it was the last. Workers call it.
func (l *Loader) bulkCommitted(b *batch) {
	if b.bulk == nil {
		return
	}
	l.bulk.mu.Lock()
	b.bulk.outstanding--
	l.bulkMaybeFinish(b.bulk)
	l.bulk.mu.Unlock()
}

// bulkMaybeFinish starts p's finish when it is closed and has no batch in
// flight. l.bulk.mu is held.
func (l *Loader) bulkMaybeFinish(p *bulkPart) {
	if !p.closed || p.outstanding > 0 || p.finishing {
		return
	}
	p.finishing = true
	l.bulk.fin.Go(func() error {
		err := l.bulkFinish(l.bulk.ctx, p)
		p.err = err
		close(p.done)
		return err
	})
}

// bulkWait waits for the partitions' finishes and returns the first error.
func (l *Loader) bulkWait() error {
	if l.bulk == nil {
		return nil
	}
	return l.bulk.fin.Wait()
}

// bulkFinish builds p's indexes and attaches it, in one transaction.
func (l *Loader) bulkFinish(ctx context.Context, p *bulkPart) error {
	t := l.target.Series
	conn, err := l.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("attaching partition %q: %w", p.name, err)
	}
	defer conn.Release()
	tx, err := conn.Begin(ctx)
	if err != nil {
		return fmt.Errorf("attaching partition %q: %w", p.name, err)
	}
	defer tx.Rollback(context.Background()) //nolint:errcheck // no-op after commit
	t0 := time.Now()
	var attached bool
	if err := tx.QueryRow(ctx, `SELECT relispartition FROM pg_class WHERE oid = to_regclass($1)`, p.table).Scan(&attached); err != nil {
		return fmt.Errorf("attaching partition %q: %w", p.name, err)
	}
	if attached {
		// Made and attached live meanwhile (it was dropped and the live
		// path's retry made it again): its indexes came with the ATTACH.
		if _, err := tx.Exec(ctx, `DELETE FROM pgts.bulk_partition WHERE partition_schema = $1 AND partition_name = $2`,
			t.Schema, p.name); err != nil {
			return fmt.Errorf("attaching partition %q: %w", p.name, err)
		}
		return tx.Commit(ctx)
	}
	t1, err := l.indexAndAttach(ctx, tx, p, false)
	if err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("attaching partition %q to %s: %w", p.name, t, err)
	}
	l.attached(p, t0, t1, "split")
	return nil
}

// indexAndAttach builds p's indexes and attaches it, in tx; it returns
// when the index builds ended.
//
// With serial, the builds take no parallel helper: a unit's builds run
// while the other workers load, which keep their backends busy, and a
// helper would only compete with them for the cores, its sorted run
// written to a temporary file for the leader to merge. A split
// partition's builds come after its batches, when the workers have
// often nothing left: the server decides, as for any CREATE INDEX.
func (l *Loader) indexAndAttach(ctx context.Context, tx pgx.Tx, p *bulkPart, serial bool) (time.Time, error) {
	t := l.target.Series
	if serial {
		if _, err := tx.Exec(ctx, "SET LOCAL max_parallel_maintenance_workers = 0", pgx.QueryExecModeSimpleProtocol); err != nil {
			return time.Time{}, fmt.Errorf("building the indexes of partition %q: %w", p.name, err)
		}
	}
	for _, ix := range l.bulk.indexes {
		if _, err := tx.Exec(ctx, ix.head+p.table+ix.tail); err != nil {
			return time.Time{}, fmt.Errorf("building the indexes of partition %q: %w", p.name, err)
		}
	}
	t1 := time.Now()
	lo, hi := partition.BoundLiteral(t.TimeType, p.lo), partition.BoundLiteral(t.TimeType, p.hi)
	// Rows other writers left in the DEFAULT partition for this range
	// join the partition in this transaction: the ATTACH would refuse
	// them, and no reader sees them twice or not at all.
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, catalog.LockKey, t.String()); err != nil {
		return time.Time{}, fmt.Errorf("attaching partition %q to %s: %w", p.name, t, err)
	}
	if _, err := partition.MoveFromDefault(ctx, tx, t, p.table, p.lo, p.hi, partition.BulkShare, l.log); err != nil {
		return time.Time{}, fmt.Errorf("attaching partition %q to %s: %w", p.name, t, err)
	}
	ddl := fmt.Sprintf(`SELECT pg_advisory_xact_lock(%d, hashtext(%s));
		ALTER TABLE %s ATTACH PARTITION %s FOR VALUES FROM (%s) TO (%s);
		ALTER TABLE %s DROP CONSTRAINT %s;
		COMMENT ON TABLE %s IS NULL;
		DELETE FROM pgts.bulk_partition WHERE partition_schema = %s AND partition_name = %s;
		SELECT pgts.rollup_partition_attached(%s, %s)`,
		catalog.LockKey, pg.QuoteLiteral(t.String()), t.Qualified(), p.table, lo, hi, p.table, boundsConstraint(p.name), p.table,
		pg.QuoteLiteral(t.Schema), pg.QuoteLiteral(p.name), pg.QuoteLiteral(t.Qualified()), pg.QuoteLiteral(p.table))
	if _, err := tx.Exec(ctx, ddl, pgx.QueryExecModeSimpleProtocol); err != nil {
		return time.Time{}, fmt.Errorf("attaching partition %q to %s: %w", p.name, t, err)
	}
	return t1, nil
}

// attached records the timings of a partition attached at now whose
// index builds ran from t0 to t1.
func (l *Loader) attached(p *bulkPart, t0, t1 time.Time, how string) {
	t2 := time.Now()
	l.bulk.mu.Lock()
	l.bulk.times.Partitions++
	l.bulk.times.Index += t1.Sub(t0)
	l.bulk.times.Attach += t2.Sub(t1)
	l.bulk.mu.Unlock()
	l.log.Info("bulk path: partition attached", "partition", p.name, "as", how, "index_build", t1.Sub(t0).Round(time.Millisecond),
		"attach", t2.Sub(t1).Round(time.Millisecond))
}

// pendingAfter lists, after a run that did not complete, the partitions
// this load holds unattached, with their rows counted (a count, not an
// estimate: they are what the user is told is still to come). A failure
// to read them is logged: the run's own error says more.
func (l *Loader) pendingAfter(ctx context.Context) []PendingPartition {
	t := l.target.Series
	all, err := partition.PendingBulkPartitions(ctx, l.pool, t.String())
	if err != nil {
		l.log.Debug("listing the partitions left unattached", "err", err)
		return nil
	}
	var out []PendingPartition
	for _, p := range all {
		if p.LoadID != l.cfg.LoadID {
			continue
		}
		n := p.Rows
		if err := l.pool.QueryRow(ctx, "SELECT count(*) FROM "+pg.QuoteQualified(p.Schema, p.Name)).Scan(&n); err != nil {
			l.log.Debug("counting the rows of an unattached partition", "partition", p.Name, "err", err)
		}
		out = append(out, PendingPartition{Name: p.Name, Rows: n})
	}
	return out
}
