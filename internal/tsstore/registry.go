package tsstore

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"golang.org/x/sync/errgroup"

	"github.com/pgts/pgts/internal/catalog"
	"github.com/pgts/pgts/internal/ingest"
	"github.com/pgts/pgts/internal/rra"
)

// SegmentWidth is the number of series per segment: a row of pgts.rra_data
// or pgts.ds_state holds the values of SegmentWidth series. Series id / width
// is the segment, id % width + 1 the position in its arrays. The migration
// that creates the views has the same number.
const SegmentWidth = 200

// series is one series in memory. Its fields are guarded by its shard's
// mutex, except key and sch, which never change.
//
// A quiet series (registered, everything written) is this struct, 64
// bytes, and its DS: what it buffers hangs from buf, allocated only while
// there is something in it.
type series struct {
	key string
	sch *schemaInfo // nil: raw points only
	ds  *rra.DS     // nil when sch is nil, or evicted (evict.go)
	buf *seriesBuf  // nil while nothing is buffered
	id  int64       // 0 until registered
	// bytes is what buf and ds's pending updates account for now.
	bytes      int64
	touched    uint32 // Store.gen at its last point
	dirty      bool   // in its shard's dirty list
	stateDirty bool   // ds changed since its state was last written
	// kept: in its shard's kept list, keeping its emptied buffers (buf,
	// the DS's pending updates) for its next points; the next flush frees
	// them if none came (gather).
	kept bool
}

// seriesBuf is what a series holds until it is written.
type seriesBuf struct {
	tags []ingest.Tag // kept until registered
	held []rra.Update // closed slots taken from ds, not yet written
	raw  []rawPoint   // raw points not yet written
}

func (x *series) tags() []ingest.Tag {
	if x.buf == nil {
		return nil
	}
	return x.buf.tags
}

func (x *series) held() []rra.Update {
	if x.buf == nil {
		return nil
	}
	return x.buf.held
}

func (x *series) raw() []rawPoint {
	if x.buf == nil {
		return nil
	}
	return x.buf.raw
}

// setTags, setHeld and setRaw replace a buffer; buf is dropped when all
// of them are nil.
func (x *series) setTags(t []ingest.Tag) { x.bufFor(t != nil).tags = t; x.tidy() }

func (x *series) setHeld(h []rra.Update) { x.bufFor(h != nil).held = h; x.tidy() }

func (x *series) setRaw(r []rawPoint) { x.bufFor(r != nil).raw = r; x.tidy() }

// bufFor returns buf, allocating it when alloc is set and it is nil; a
// throwaway otherwise, so that setting nil never allocates.
func (x *series) bufFor(alloc bool) *seriesBuf {
	if x.buf == nil {
		if !alloc {
			return &seriesBuf{}
		}
		x.buf = &seriesBuf{}
	}
	return x.buf
}

func (x *series) tidy() {
	if b := x.buf; b != nil && b.tags == nil && b.held == nil && b.raw == nil {
		x.buf = nil
	}
}

type rawPoint struct {
	t int64 // micros
	v float64
}

func (s *series) seg() int64 { return s.id / SegmentWidth }
func (s *series) pos() int32 { return int32(s.id%SegmentWidth) + 1 }

// Bytes a series costs, estimated: the struct, its map entry and key, the
// DS (rra.Schema.DSBytes), and the buffers by capacity (the struct
// holding them, 16 bytes a raw point, 40 an update).
const (
	seriesBytes = 176
	bufBytes    = 80
	rawBytes    = 16
	updateBytes = 40
	tagBytes    = 48
)

// baseBytes is what the series costs whatever it buffers: its state
// counts while in memory.
func (s *series) baseBytes() int64 {
	n := int64(seriesBytes + len(s.key) + len(s.tags())*tagBytes)
	for _, t := range s.tags() {
		n += int64(len(t.Key) + len(t.Value))
	}
	if s.ds != nil {
		n += s.sch.schema.DSBytes()
	}
	return n
}

// bufBytes is what its buffers cost now.
func (s *series) bufBytes() int64 {
	n := int64(0)
	if b := s.buf; b != nil {
		n = bufBytes + int64(cap(b.raw))*rawBytes + int64(cap(b.held))*updateBytes
	}
	if s.ds != nil {
		n += int64(s.ds.PendingCap()) * updateBytes
	}
	return n
}

// schemaInfo is a schema with its identity: the rule it came from, and the
// ids of its archives' bundles once registered.
type schemaInfo struct {
	ident   string // rule, step, heartbeat and archives, as text
	rule    string
	schema  *rra.Schema
	rras    []string
	bundles []int32 // set once before any series of the schema gets an id
}

type bundleKey struct {
	cf         string
	step, size int32
}

func archiveKey(a rra.ArchiveSpec) bundleKey {
	return bundleKey{cf: a.CF.String(), step: int32(a.Step / time.Second), size: int32(a.Size)}
}

// schemaFor returns the shared schemaInfo of a rule's schema.
func (s *Store) schemaFor(rule string, sch *rra.Schema) *schemaInfo {
	rras := make([]string, sch.NumArchives())
	for i := range rras {
		rras[i] = sch.Archive(i).String()
	}
	ident := fmt.Sprintf("%s\x00%d\x00%d\x00%s", rule, sch.Step()/time.Second, sch.Heartbeat()/time.Second, strings.Join(rras, " "))
	s.regMu.Lock()
	defer s.regMu.Unlock()
	if si, ok := s.schemas[ident]; ok {
		return si
	}
	si := &schemaInfo{ident: ident, rule: rule, schema: sch, rras: rras}
	s.schemas[ident] = si
	return si
}

// seriesKey is a series' identity: its name, followed by its tags in
// Graphite's tagged form (name;k1=v1;k2=v2, keys sorted) when it has any.
func seriesKey(name string, tags []ingest.Tag) string {
	if len(tags) == 0 {
		return name
	}
	n := len(name)
	for _, t := range tags {
		n += 2 + len(t.Key) + len(t.Value)
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(name)
	for _, t := range tags {
		b.WriteByte(';')
		b.WriteString(t.Key)
		b.WriteByte('=')
		b.WriteString(t.Value)
	}
	return b.String()
}

// keyName returns the name part of a series key.
func keyName(key string) string {
	if i := strings.IndexByte(key, ';'); i >= 0 {
		return key[:i]
	}
	return key
}

// tagsJSON renders tags as a JSON object.
func tagsJSON(tags []ingest.Tag) string {
	if len(tags) == 0 {
		return "{}"
	}
	m := make(map[string]string, len(tags))
	for _, t := range tags {
		m[t.Key] = t.Value
	}
	b, _ := json.Marshal(m) // a map of strings always encodes
	return string(b)
}

// registerBatch is the largest number of series registered by one
// statement.
const registerBatch = 5_000

// register gives the fresh series their ids: their archives' bundles
// first, then the series themselves, in batches of one INSERT each, run
// on FlushWorkers connections at once. The ids follow the order of the
// keys (the shards hold them in hash order): siblings registered
// together, which a render request reads together, get consecutive ids
// and so share segments (one statement and whole rows per segment, see
// readArchives). For batches running at once to keep that, the ids are
// reserved first, a range for all the fresh series (reserveIDs), and
// each batch inserts its series with ids of its part of the range.
func (s *Store) register(ctx context.Context) error {
	var fresh []*series
	for i := range s.shard {
		sh := &s.shard[i]
		sh.mu.Lock()
		fresh = append(fresh, sh.fresh...)
		sh.fresh = nil
		sh.mu.Unlock()
	}
	if len(fresh) == 0 {
		return nil
	}
	sortFresh(fresh)
	err := s.registerBundles(ctx, fresh)
	var first int64
	if err == nil {
		first, err = s.reserveIDs(ctx, len(fresh))
	}
	if err != nil {
		s.giveBack(fresh)
		return err
	}
	nb := (len(fresh) + registerBatch - 1) / registerBatch
	errs := make([]error, nb)
	var next atomic.Int64
	var g errgroup.Group
	for range min(s.cfg.FlushWorkers, nb) {
		g.Go(func() error {
			conn, err := s.pool.Acquire(ctx)
			if err != nil {
				err = fmt.Errorf("registering series: %w", err)
			}
			for {
				b := int(next.Add(1) - 1)
				if b >= nb {
					break
				}
				if err != nil {
					errs[b] = err
					continue
				}
				lo := b * registerBatch
				hi := min(lo+registerBatch, len(fresh))
				errs[b] = s.registerSeries(ctx, conn.Conn(), fresh[lo:hi], first+int64(lo))
			}
			if conn != nil {
				conn.Release()
			}
			return nil
		})
	}
	_ = g.Wait() // errors are per batch
	for b, e := range errs {
		if e != nil {
			// Give the batch back for the next flush.
			s.giveBack(fresh[b*registerBatch : min((b+1)*registerBatch, len(fresh))])
		}
	}
	return errors.Join(errs...)
}

// giveBack returns series to their shards' fresh lists, to be registered
// by the next flush.
func (s *Store) giveBack(fresh []*series) {
	for _, x := range fresh {
		sh := s.shardOf(x.key)
		sh.mu.Lock()
		sh.fresh = append(sh.fresh, x)
		sh.mu.Unlock()
	}
}

// reserveIDs takes n consecutive ids from pgts.metric's sequence and
// returns the first. Every pgts process reserves under one advisory lock
// (reading the sequence and moving it on are two steps); an id drawn
// meanwhile by an INSERT that takes the column's default (an older pgts,
// a user) would make a batch using it fail on the primary key, and the
// batch is registered again at the next flush, past it.
func (s *Store) reserveIDs(ctx context.Context, n int) (int64, error) {
	var first int64
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext('pgts.metric.id'))`, catalog.LockKey); err != nil {
			return err
		}
		return tx.QueryRow(ctx, sqlReserveSeriesIDs, n).Scan(&first)
	})
	if err != nil {
		return 0, fmt.Errorf("reserving ids for %d series: %w", n, err)
	}
	return first, nil
}

// sortFresh sorts series by key, 24 bytes of the keys at a time (an MSD
// radix sort with 24-byte digits): a pass reads each key once, into the
// digit held beside its series, and compares digits, where a comparison
// sort through the series reads two scattered keys a comparison.
// BenchmarkRegisterSort (1,000,000 series in hash order): 1.5 s through
// the series, 0.4 s this way.
func sortFresh(fresh []*series) {
	ks := make([]keyedSeries, len(fresh))
	for i, x := range fresh {
		ks[i] = keyedSeries{x: x}
	}
	sortKeyed(ks, 0)
	for i := range ks {
		fresh[i] = ks[i].x
	}
}

// keyedSeries is a series with the 24 bytes of its key from the depth
// being sorted (zeros past its end), big-endian.
type keyedSeries struct {
	digit [3]uint64
	x     *series
}

func compareDigits(a, b keyedSeries) int {
	if c := cmp.Compare(a.digit[0], b.digit[0]); c != 0 {
		return c
	}
	if c := cmp.Compare(a.digit[1], b.digit[1]); c != 0 {
		return c
	}
	return cmp.Compare(a.digit[2], b.digit[2])
}

// sortKeyed sorts ks, whose keys agree on their first depth bytes, by key.
func sortKeyed(ks []keyedSeries, depth int) {
	if len(ks) < 2 {
		return
	}
	const width = 24
	longer := false // some key goes on past this digit
	for i := range ks {
		k := ks[i].x.key
		var d [width]byte
		if depth < len(k) {
			copy(d[:], k[depth:])
		}
		ks[i].digit = [3]uint64{binary.BigEndian.Uint64(d[:]), binary.BigEndian.Uint64(d[8:]), binary.BigEndian.Uint64(d[16:])}
		longer = longer || len(k) > depth+width
	}
	if !longer {
		// Equal digits are equal keys but for trailing NUL bytes.
		slices.SortFunc(ks, func(a, b keyedSeries) int {
			if c := compareDigits(a, b); c != 0 {
				return c
			}
			return strings.Compare(a.x.key, b.x.key)
		})
		return
	}
	slices.SortFunc(ks, compareDigits)
	for i := 0; i < len(ks); {
		j := i + 1
		for j < len(ks) && ks[j].digit == ks[i].digit {
			j++
		}
		sortKeyed(ks[i:j], depth+width)
		i = j
	}
}

// registerBundles makes sure every archive shape of the fresh series has a
// bundle id.
func (s *Store) registerBundles(ctx context.Context, fresh []*series) error {
	s.regMu.Lock()
	defer s.regMu.Unlock()
	var missing []*schemaInfo
	seen := map[*schemaInfo]bool{}
	for _, x := range fresh {
		if x.sch != nil && x.sch.bundles == nil && !seen[x.sch] {
			seen[x.sch] = true
			missing = append(missing, x.sch)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	var cfs []string
	var steps, sizes []int32
	for _, si := range missing {
		for i := range si.schema.NumArchives() {
			k := archiveKey(si.schema.Archive(i))
			if _, ok := s.bundles[k]; !ok {
				cfs, steps, sizes = append(cfs, k.cf), append(steps, k.step), append(sizes, k.size)
			}
		}
	}
	if len(cfs) > 0 {
		if _, err := s.pool.Exec(ctx, sqlInsertBundles, cfs, steps, sizes); err != nil {
			return fmt.Errorf("registering archive shapes: %w", err)
		}
		if err := s.readBundles(ctx); err != nil {
			return err
		}
	}
	for _, si := range missing {
		b := make([]int32, si.schema.NumArchives())
		for i := range b {
			id, ok := s.bundles[archiveKey(si.schema.Archive(i))]
			if !ok {
				return fmt.Errorf("archive shape %s has no bundle after registering it", si.rras[i])
			}
			b[i] = id
		}
		si.bundles = b
	}
	return nil
}

// readBundles reads every bundle id; regMu is held.
func (s *Store) readBundles(ctx context.Context) error {
	rows, err := s.pool.Query(ctx, `SELECT id, cf, step_s, size FROM pgts.rra_bundle`)
	if err != nil {
		return fmt.Errorf("reading archive shapes: %w", err)
	}
	var id int32
	var k bundleKey
	_, err = pgx.ForEachRow(rows, []any{&id, &k.cf, &k.step, &k.size}, func() error {
		s.bundles[k] = id
		return nil
	})
	if err != nil {
		return fmt.Errorf("reading archive shapes: %w", err)
	}
	return nil
}

// registerSeries inserts one batch of series on conn, the ith with id
// first+i unless it is registered already, and sets their ids.
func (s *Store) registerSeries(ctx context.Context, conn *pgx.Conn, batch []*series, first int64) error {
	n := len(batch)
	params := encodeSeries(batch, first)
	got := make([]bool, n)
	inserted := 0
	insert := func(st flushStmt) error {
		sd, err := conn.Prepare(ctx, st.name, st.sql)
		if err != nil {
			return err
		}
		if err := st.check(sd, params); err != nil {
			return err
		}
		rr := conn.PgConn().ExecPrepared(ctx, sd.Name, params, binaryFormats[:len(params)], binaryFormats[:1])
		for rr.NextRow() {
			v := rr.Values()[0]
			if len(v) != 8 {
				continue // Close reports what went wrong
			}
			if i := int64(binary.BigEndian.Uint64(v)) - first; i >= 0 && i < int64(n) && !got[i] {
				got[i] = true
				inserted++
			}
		}
		_, err = rr.Close()
		return err
	}
	err := insert(stmtInsertSeries)
	if pe := (*pgconn.PgError)(nil); errors.As(err, &pe) && pe.Code == "23505" { // unique_violation
		// Some are registered already (by another daemon): the
		// statement inserted none; insert the others.
		clear(got)
		inserted = 0
		err = insert(stmtInsertSeriesNew)
	}
	if err != nil {
		return fmt.Errorf("registering %d series: %w", n, err)
	}
	ids := make([]int64, n)
	for i := range ids {
		if got[i] {
			ids[i] = first + int64(i)
		}
	}
	if inserted < n {
		// Registered meanwhile by another process: read their ids.
		var known []string
		at := map[string]int{}
		for i, x := range batch {
			if !got[i] {
				known = append(known, x.key)
				at[x.key] = i
			}
		}
		rows, err := conn.Query(ctx, `SELECT id, key FROM pgts.metric WHERE key = ANY($1)`, known)
		if err != nil {
			return fmt.Errorf("reading the ids of %d series: %w", len(known), err)
		}
		var id int64
		var key string
		if _, err := pgx.ForEachRow(rows, []any{&id, &key}, func() error { ids[at[key]] = id; return nil }); err != nil {
			return fmt.Errorf("reading the ids of %d series: %w", len(known), err)
		}
	}
	for i, x := range batch {
		if ids[i] == 0 {
			return fmt.Errorf("series %q has no id after registering it", x.key)
		}
	}
	for i, x := range batch {
		sh := s.shardOf(x.key)
		sh.mu.Lock()
		before := x.baseBytes()
		x.id = ids[i]
		x.setTags(nil)
		s.mem.series.Add(x.baseBytes() - before)
		// The buffer's struct may have gone with the tags.
		b := x.bufBytes()
		s.mem.add(b - x.bytes)
		x.bytes = b
		sh.mu.Unlock()
	}
	return nil
}

// load reads the registry and the saved consolidation state.
func (s *Store) load(ctx context.Context) error {
	s.regMu.Lock()
	err := s.readBundles(ctx)
	s.regMu.Unlock()
	if err != nil {
		return err
	}
	byID := map[int64]*series{}
	rows, err := s.pool.Query(ctx, `SELECT id, key, rule, step_s, heartbeat_s, rras, bundles FROM pgts.metric`)
	if err != nil {
		return fmt.Errorf("reading the series registry: %w", err)
	}
	var (
		id        int64
		key       string
		rule      *string
		step, hb  *int32
		rras      []string
		bundleIDs []int32
	)
	_, err = pgx.ForEachRow(rows, []any{&id, &key, &rule, &step, &hb, &rras, &bundleIDs}, func() error {
		x := &series{key: key, id: id}
		if step != nil && rule != nil {
			si, err := s.savedSchema(*rule, *step, *hb, rras, bundleIDs)
			if err != nil {
				return fmt.Errorf("series %q: %w", key, err)
			}
			x.sch, x.ds = si, rra.NewDS(si.schema)
		}
		sh := s.shardOf(key)
		sh.m[key] = x
		byID[id] = x
		s.mem.series.Add(s.idx.add(key) + x.baseBytes())
		return nil
	})
	if err != nil {
		return fmt.Errorf("reading the series registry: %w", err)
	}
	s.nSeries.Store(int64(len(byID)))
	rows, err = s.pool.Query(ctx, `SELECT seg, states FROM pgts.ds_state`)
	if err != nil {
		return fmt.Errorf("reading saved series state: %w", err)
	}
	var seg int64
	var states [][]byte
	var bad, future int
	horizon := s.cfg.Now().UnixMicro() + s.cfg.FutureTolerance.Microseconds()
	_, err = pgx.ForEachRow(rows, []any{&seg, &states}, func() error {
		for i, st := range states {
			if st == nil {
				continue
			}
			x := byID[seg*SegmentWidth+int64(i)]
			if x == nil || x.ds == nil {
				continue
			}
			if err := x.ds.UnmarshalBinary(st); err != nil {
				bad++
				x.ds = rra.NewDS(x.sch.schema)
				x.stateDirty = true
				s.markDirty(x)
				continue
			}
			if t, ok := x.ds.LastUpdate(); ok && t > horizon {
				// Saved after a point far in the future (before such
				// points were refused): it would refuse every point until
				// then. Start afresh; the archives keep their slots.
				future++
				x.ds = rra.NewDS(x.sch.schema)
				x.stateDirty = true
				s.markDirty(x)
				continue
			}
			if x.ds.Pending() > 0 {
				s.markDirty(x)
			}
			b := x.bufBytes()
			s.mem.add(b)
			x.bytes = b
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("reading saved series state: %w", err)
	}
	if bad > 0 {
		s.log.Warn("saved state of series unusable; they start afresh", "series", bad)
	}
	if future > 0 {
		s.log.Warn("saved state of series dated in the future; they start afresh", "series", future)
	}
	return nil
}

// markDirty puts x in its shard's dirty list, once; its shard's lock is
// held or the store is not yet shared.
func (s *Store) markDirty(x *series) {
	if x.dirty {
		return
	}
	x.dirty = true
	sh := s.shardOf(x.key)
	sh.dirty = append(sh.dirty, x)
	s.counters.unflushed.Add(1)
}

// savedSchema rebuilds the schema a series was registered with.
func (s *Store) savedSchema(rule string, step, hb int32, rras []string, bundles []int32) (*schemaInfo, error) {
	specs := make([]rra.ArchiveSpec, len(rras))
	for i, r := range rras {
		a, err := rra.ParseArchiveSpec(r)
		if err != nil {
			return nil, fmt.Errorf("saved archive %q: %w", r, err)
		}
		specs[i] = a
	}
	sch, err := rra.NewSchema(time.Duration(step)*time.Second, time.Duration(hb)*time.Second, specs)
	if err != nil {
		return nil, fmt.Errorf("saved schema: %w", err)
	}
	if len(bundles) != len(specs) {
		return nil, errors.New("saved schema: archives and bundles differ in number")
	}
	si := s.schemaFor(rule, sch)
	s.regMu.Lock()
	if si.bundles == nil {
		si.bundles = bundles
	}
	s.regMu.Unlock()
	return si, nil
}
