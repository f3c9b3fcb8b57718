package tsstore

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

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

// register gives the fresh series their ids, in batches: their archives'
// bundles first, then the series themselves with one INSERT per batch.
// The ids follow the order of the keys (the shards hold them in hash
// order): siblings registered together, which a render request reads
// together, get consecutive ids and so share segments (one statement and
// whole rows per segment, see readArchives).
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
	for len(fresh) > 0 && err == nil {
		n := min(len(fresh), registerBatch)
		err = s.registerSeries(ctx, fresh[:n])
		fresh = fresh[n:]
	}
	if len(fresh) > 0 {
		// Give the rest back for the next flush.
		for _, x := range fresh {
			sh := s.shardOf(x.key)
			sh.mu.Lock()
			sh.fresh = append(sh.fresh, x)
			sh.mu.Unlock()
		}
	}
	return err
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

// registerSeries inserts one batch of series and sets their ids.
func (s *Store) registerSeries(ctx context.Context, batch []*series) error {
	n := len(batch)
	keys, names, tags := make([]string, n), make([]string, n), make([]string, n)
	rules, rras, bundles := make([]*string, n), make([]*string, n), make([]*string, n)
	steps, hbs := make([]*int32, n), make([]*int32, n)
	for i, x := range batch {
		keys[i], names[i], tags[i] = x.key, keyName(x.key), tagsJSON(x.tags())
		if si := x.sch; si != nil {
			rule, rr := si.rule, strings.Join(si.rras, " ")
			st, hb := int32(si.schema.Step()/time.Second), int32(si.schema.Heartbeat()/time.Second)
			bs := make([]string, len(si.bundles))
			for j, b := range si.bundles {
				bs[j] = strconv.Itoa(int(b))
			}
			bj := strings.Join(bs, " ")
			rules[i], rras[i], steps[i], hbs[i], bundles[i] = &rule, &rr, &st, &hb, &bj
		}
	}
	ids := make(map[string]int64, n)
	rows, err := s.pool.Query(ctx, sqlInsertSeries, keys, names, tags, rules, steps, hbs, rras, bundles)
	if err != nil {
		return fmt.Errorf("registering %d series: %w", n, err)
	}
	var id int64
	var key string
	if _, err := pgx.ForEachRow(rows, []any{&id, &key}, func() error { ids[key] = id; return nil }); err != nil {
		return fmt.Errorf("registering %d series: %w", n, err)
	}
	if len(ids) < n {
		// Registered meanwhile by another process: read their ids.
		var known []string
		for _, k := range keys {
			if _, ok := ids[k]; !ok {
				known = append(known, k)
			}
		}
		rows, err := s.pool.Query(ctx, `SELECT id, key FROM pgts.metric WHERE key = ANY($1)`, known)
		if err != nil {
			return fmt.Errorf("reading the ids of %d series: %w", len(known), err)
		}
		if _, err := pgx.ForEachRow(rows, []any{&id, &key}, func() error { ids[key] = id; return nil }); err != nil {
			return fmt.Errorf("reading the ids of %d series: %w", len(known), err)
		}
	}
	for _, x := range batch {
		id, ok := ids[x.key]
		if !ok {
			return fmt.Errorf("series %q has no id after registering it", x.key)
		}
		sh := s.shardOf(x.key)
		sh.mu.Lock()
		before := x.baseBytes()
		x.id = id
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
