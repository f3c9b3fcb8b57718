package shard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"

	"github.com/pgts/pgts/internal/copyenc"
	"github.com/pgts/pgts/internal/copyload"
	"github.com/pgts/pgts/internal/gen"
	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pg"
	"github.com/pgts/pgts/internal/records"
)

// Input is one input of a sharded load.
type Input struct {
	Name   string // for rejects and messages
	Reader *records.Reader
	// Raw is the input as stored when it can be read again (see
	// copyload.Input.Raw): rejects then hold records as written.
	Raw io.ReaderAt
}

// LoadConfig tunes a sharded load.
type LoadConfig struct {
	// Load is the configuration of each partition's loader: Workers is
	// per partition (each holds its own connections to its shard); with
	// LoadID, each partition's ledger on its shard is kept under
	// LoadID + "/" + the partition's name. MaxRejects bounds the rejects
	// of the whole load (every partition's and the rows refused before
	// routing), as it does a plain load.
	Load copyload.Config
	// Columns names the target column of each input field, in order; it
	// must include the shard column and the time column.
	Columns []string
	// Zones reads dates and times (nil: UTC).
	Zones *copyenc.Zones
	// ChunkRows is how many records go to a partition's loader at once
	// (0: 512).
	ChunkRows int
	Now       func() time.Time
	Logger    *slog.Logger
}

// LoadSummary adds up the partitions' summaries. Read = Loaded + Rejected
// + Skipped + NotLoaded holds as for one loader.
type LoadSummary struct {
	copyload.Summary
	RowsByShard map[string]int64 `json:"rows_by_shard"`
}

// maxCachedKeys bounds the shard-key → partition cache.
const maxCachedKeys = 1 << 20

// partitioner maps a shard key's text to its hash partition exactly as
// the coordinator's server does: it asks the server
// (satisfies_hash_partition) once per distinct key and caches the
// answer. Used from one goroutine.
type partitioner struct {
	pool    *pgxpool.Pool
	table   string // quoted parent
	n       int
	keyType string // format_type of the shard column, spliced from the catalog
	cache   map[string]int
	null    int // partition of NULL, -1 until asked
}

func newPartitioner(ctx context.Context, pool *pgxpool.Pool, t *Table) (*partitioner, error) {
	p := &partitioner{pool: pool, table: t.Qualified(), n: t.Partitions, cache: map[string]int{}, null: -1}
	err := pool.QueryRow(ctx, `SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = $1::regclass AND attname = $2 AND NOT attisdropped`,
		t.Qualified(), t.ShardColumn).Scan(&p.keyType)
	if err != nil {
		return nil, fmt.Errorf("reading the shard column of %s: %w", t, err)
	}
	return p, nil
}

// partition returns the partition of a key, or a reason to reject the
// row (a key the column's type refuses), or an error.
func (p *partitioner) partition(ctx context.Context, key []byte, null bool) (int, string, error) {
	if null {
		if p.null >= 0 {
			return p.null, "", nil
		}
	} else if v, ok := p.cache[string(key)]; ok {
		return v, "", nil
	}
	var arg any
	if !null {
		arg = string(key)
	}
	var part int
	err := p.pool.QueryRow(ctx, `SELECT r FROM generate_series(0, $2::int - 1) r
		WHERE satisfies_hash_partition($1::regclass, $2::int, r, CAST($3::text AS `+p.keyType+`))`, p.table, p.n, arg).Scan(&part)
	if err != nil {
		if pg.DataError(err) {
			return 0, err.Error(), nil
		}
		return 0, "", fmt.Errorf("finding the partition of a shard key: %w", err)
	}
	if null {
		p.null = part
	} else if len(p.cache) < maxCachedKeys {
		p.cache[string(key)] = part
	}
	return part, "", nil
}

// feed is one partition's loader and the channel that feeds it.
type feed struct {
	part    int
	shard   string
	ch      chan []copyload.Record
	pending []copyload.Record
	loader  *copyload.Loader
	sum     copyload.Summary
}

// Load reads inputs once and loads each row into the partition of its
// shard key, COPYing straight into the shards (not through the
// coordinator): one copyload.Loader per partition, all running at once,
// each with its own ledger on its shard when cfg.Load.LoadID is set, so
// that a batch's ledger row commits in the batch's transaction on the
// shard that holds it. A rerun with the same load ID and input skips
// exactly what committed, shard by shard.
//
// Rows whose shard key the column's type refuses are rejected here, with
// their line; the partitions' loaders reject the others as copyload does.
func (c *Coordinator) Load(ctx context.Context, table string, inputs []Input, cfg LoadConfig) (LoadSummary, error) {
	start := time.Now()
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.ChunkRows <= 0 {
		cfg.ChunkRows = 512
	}
	log := cfg.Logger
	if log == nil {
		log = c.log
	}
	t, err := c.Table(ctx, table)
	if err != nil {
		return LoadSummary{}, err
	}
	if !t.Ready {
		return LoadSummary{}, fmt.Errorf("sharded table %s is not completely created: run pgts table create again with the same options", t)
	}
	keyField := -1
	for i, name := range cfg.Columns {
		if name == t.ShardColumn {
			keyField = i
		}
	}
	if keyField < 0 {
		return LoadSummary{}, &pg.UsageError{Err: fmt.Errorf("the input has no %q column, the shard key of %s", t.ShardColumn, t)}
	}
	parter, err := newPartitioner(ctx, c.pool, t)
	if err != nil {
		return LoadSummary{}, err
	}
	shards, err := c.List(ctx)
	if err != nil {
		return LoadSummary{}, err
	}
	perShard := map[string]int{}
	for _, s := range t.Placement {
		perShard[s]++
	}
	pools := map[string]*pgxpool.Pool{}
	defer func() {
		for _, p := range pools {
			p.Close()
		}
	}()
	workers := max(cfg.Load.Workers, 1)
	for _, sh := range shards {
		if n := perShard[sh.Name]; n > 0 {
			p, err := openShard(ctx, sh, int32(n*(workers+1)+2))
			if err != nil {
				return LoadSummary{}, err
			}
			pools[sh.Name] = p
		}
	}
	total := &totalRejects{inner: cfg.Load.Rejects, max: cfg.Load.MaxRejects}
	feeds := make([]*feed, t.Partitions)
	for p, shardName := range t.Placement {
		pool := pools[shardName]
		if pool == nil {
			return LoadSummary{}, fmt.Errorf("partition %d of %s is on shard %q, which is not recorded", p, t, shardName)
		}
		m := partition.NewManager(pool, log, cfg.Now)
		name := pg.QuoteQualified(t.Schema, PartitionName(t.Name, p))
		target, err := copyload.LookupTarget(ctx, pool, m, name)
		if err != nil {
			return LoadSummary{}, fmt.Errorf("shard %q: %w", shardName, err)
		}
		if target.Series == nil {
			return LoadSummary{}, fmt.Errorf("shard %q: %s is not a series table", shardName, name)
		}
		if cfg.Zones != nil {
			target.UseZones(cfg.Zones)
		}
		lcfg := cfg.Load
		lcfg.Rejects, lcfg.MaxRejects = total, -1 // the total is enforced by total
		lcfg.Workers = workers
		lcfg.Logger = log.With("shard", shardName, "partition", p)
		lcfg.Now = cfg.Now
		if lcfg.LoadID != "" {
			lcfg.LoadID = cfg.Load.LoadID + "/" + PartitionName(t.Name, p)
		}
		loader, err := copyload.New(pool, m, target, lcfg)
		if err != nil {
			return LoadSummary{}, err
		}
		feeds[p] = &feed{part: p, shard: shardName, ch: make(chan []copyload.Record, 4), loader: loader}
	}
	colIdx, err := fieldIndexes(feeds, cfg.Columns)
	if err != nil {
		return LoadSummary{}, err
	}

	raws := map[string]*copyload.RawInput{}
	for _, in := range inputs {
		if ri := rawInput(in); ri != nil {
			raws[in.Name] = ri
		}
	}
	var ended atomic.Bool
	g, gctx := errgroup.WithContext(ctx)
	for _, f := range feeds {
		src := &copyload.RecordSource{Columns: colIdx[f.part], In: f.ch, Ended: ended.Load, Raw: raws}
		g.Go(func() error {
			s, err := f.loader.Run(ctx, src)
			f.sum = s
			if err != nil && !errors.Is(err, copyload.ErrFeedStopped) {
				err = fmt.Errorf("shard %q, partition %d: %w", f.shard, f.part, err)
				if errors.Is(err, context.Canceled) {
					return err
				}
				if me := c.movedAway(ctx, t, f.part, f.shard, cfg.Load.LoadID, err); me != nil {
					return me
				}
			}
			return err
		})
	}
	sp := &splitter{cfg: cfg, parter: parter, feeds: feeds, keyField: keyField, rejects: total}
	splitErr := sp.run(gctx, inputs)
	if splitErr == nil {
		for _, f := range feeds {
			if err := sp.send(gctx, f); err != nil {
				splitErr = err
				break
			}
		}
	}
	ended.Store(splitErr == nil)
	for _, f := range feeds {
		close(f.ch)
	}
	loadErr := g.Wait()

	sum := LoadSummary{RowsByShard: map[string]int64{}}
	sum.Read, sum.Rejected = sp.read, sp.rejected
	complete := splitErr == nil && loadErr == nil
	for _, f := range feeds {
		s := f.sum
		sum.Read += s.Read
		sum.Loaded += s.Loaded
		sum.Rejected += s.Rejected
		sum.Skipped += s.Skipped
		sum.Batches += s.Batches
		sum.SkippedB += s.SkippedB
		sum.Bytes += s.Bytes
		sum.Partitions += s.Partitions
		sum.Created += s.Created
		sum.Retries += s.Retries
		sum.Splits += s.Splits
		sum.Inserted += s.Inserted
		sum.Updated += s.Updated
		sum.Kept += s.Kept
		sum.Format, sum.Route = s.Format, "shard"
		sum.RowsByShard[f.shard] += s.Loaded
	}
	sum.NotLoaded = sum.Read - sum.Loaded - sum.Rejected - sum.Skipped
	sum.Elapsed = time.Since(start)
	sum.Seconds = sum.Elapsed.Seconds()
	if sum.Seconds > 0 {
		sum.RowsPerSec = float64(sum.Loaded) / sum.Seconds
	}
	sum.Complete = complete
	switch {
	case loadErr != nil && !errors.Is(loadErr, copyload.ErrFeedStopped) && !errors.Is(loadErr, context.Canceled):
		return sum, loadErr
	case ctx.Err() != nil:
		sum.Interrupted = true
		return sum, fmt.Errorf("load interrupted: %w", context.Canceled)
	case splitErr != nil && !errors.Is(splitErr, context.Canceled):
		return sum, splitErr
	case loadErr != nil:
		return sum, loadErr
	}
	return sum, nil
}

// movedAway returns a *MovedError when partition part of t, which a load
// wrote to on shard from and failed, has been moved meanwhile: the load's
// failure is then the move's doing, whatever the old shard said (a table
// gone, a partition that cannot be made). A move drops the old copy only
// after switching the placement, so a load failing for that reason
// always sees the new placement.
func (c *Coordinator) movedAway(ctx context.Context, t *Table, part int, from, loadID string, err error) *MovedError {
	var cur string
	if c.pool.QueryRow(context.WithoutCancel(ctx), `SELECT shard FROM pgts.shard_placement WHERE table_schema = $1 AND table_name = $2 AND partition = $3`,
		t.Schema, t.Name, part).Scan(&cur) != nil {
		return nil
	}
	if cur == from {
		return nil
	}
	return &MovedError{Table: t.String(), Partition: part, From: from, To: cur, LoadID: loadID, Err: err}
}

// fieldIndexes maps the input's column names to each partition target's
// column indexes.
func fieldIndexes(feeds []*feed, names []string) ([][]int, error) {
	out := make([][]int, len(feeds))
	for p, f := range feeds {
		t := f.loader.Target()
		idx := make([]int, len(names))
		for i, n := range names {
			ci := t.ColumnIndex(n)
			if ci < 0 {
				return nil, &pg.UsageError{Err: fmt.Errorf("column %q is not in %s", n, t)}
			}
			idx[i] = ci
		}
		out[p] = idx
	}
	return out, nil
}

// splitter reads the inputs and hands each record to its partition's
// loader. It runs on Load's goroutine.
type splitter struct {
	cfg      LoadConfig
	parter   *partitioner
	feeds    []*feed
	keyField int
	rejects  *totalRejects
	read     int64 // records refused before routing
	rejected int64
}

func (s *splitter) reject(r copyload.Reject) error {
	s.read++
	s.rejected++
	return s.rejects.Reject(r)
}

// totalRejects is the reject sink of every loader of a sharded load and
// of its splitter: it passes rejects on to the load's sink and enforces
// MaxRejects over their total (the loaders' own limit is off), so that
// --max-rejects means for a sharded load what it means for a plain one.
// Safe for concurrent use when the inner sink is (loaders call it from
// their workers).
type totalRejects struct {
	inner copyload.RejectSink // nil: only counted
	max   int64               // negative: no limit
	n     atomic.Int64
}

func (t *totalRejects) Reject(r copyload.Reject) error {
	if t.inner != nil {
		if err := t.inner.Reject(r); err != nil {
			return err
		}
	}
	return t.count([]copyload.Reject{r})
}

// RejectBatch passes a batch's rejects on in one write when the inner
// sink takes batches.
func (t *totalRejects) RejectBatch(rs []copyload.Reject) error {
	if bs, ok := t.inner.(copyload.BatchRejectSink); ok {
		if err := bs.RejectBatch(rs); err != nil {
			return err
		}
	} else if t.inner != nil {
		for _, r := range rs {
			if err := t.inner.Reject(r); err != nil {
				return err
			}
		}
	}
	return t.count(rs)
}

func (t *totalRejects) count(rs []copyload.Reject) error {
	n := t.n.Add(int64(len(rs)))
	if t.max >= 0 && n > t.max && len(rs) > 0 {
		r := rs[len(rs)-1]
		return fmt.Errorf("%w: more than %d in all partitions (the last: %s line %d: %s)", copyload.ErrTooManyRejects, t.max, r.Source, r.Line, r.Reason)
	}
	return nil
}

// rawInput is in's input as stored, nil when it cannot be read again.
func rawInput(in Input) *copyload.RawInput {
	if in.Raw == nil {
		return nil
	}
	return &copyload.RawInput{At: in.Raw, From: in.Reader}
}

func (s *splitter) run(ctx context.Context, inputs []Input) error {
	for _, in := range inputs {
		raw := rawInput(in)
		for n := 0; ; n++ {
			if n&1023 == 0 && ctx.Err() != nil {
				return ctx.Err()
			}
			rec, err := in.Reader.Next()
			if err == io.EOF {
				break
			}
			var rerr *records.RecordError
			if errors.As(err, &rerr) {
				col := ""
				if rerr.Column > 0 && rerr.Column <= len(s.cfg.Columns) {
					col = s.cfg.Columns[rerr.Column-1]
				}
				r := copyload.Reject{Source: in.Name, Line: rerr.Line, Column: col, Reason: rerr.Reason}
				r.Record, r.RecordForm = copyload.ErrorText(raw, rerr)
				if err := s.reject(r); err != nil {
					return err
				}
				continue
			}
			if err != nil {
				return fmt.Errorf("reading %s: %w", in.Name, err)
			}
			if len(rec.Fields) != len(s.cfg.Columns) {
				// the partition's loader rejects it with the same reason
				if err := s.route(ctx, in.Name, 0, rec); err != nil {
					return err
				}
				continue
			}
			part, reason, err := s.parter.partition(ctx, rec.Fields[s.keyField], rec.Null[s.keyField])
			if err != nil {
				return err
			}
			if reason != "" {
				r := copyload.Reject{Source: in.Name, Line: rec.Line, Column: s.cfg.Columns[s.keyField], Reason: reason}
				r.Record, r.RecordForm = copyload.RecordText(raw, rec)
				if err := s.reject(r); err != nil {
					return err
				}
				continue
			}
			if err := s.route(ctx, in.Name, part, rec); err != nil {
				return err
			}
		}
	}
	return nil
}

// route copies rec (the reader reuses its buffers) into partition part's
// pending chunk and sends the chunk when full.
func (s *splitter) route(ctx context.Context, name string, part int, rec records.Record) error {
	size := 0
	for _, f := range rec.Fields {
		size += len(f)
	}
	buf := make([]byte, 0, size)
	fields := make([][]byte, len(rec.Fields))
	for i, f := range rec.Fields {
		start := len(buf)
		buf = append(buf, f...)
		fields[i] = buf[start:len(buf):len(buf)]
	}
	cp := rec
	cp.Fields, cp.Null = fields, append([]bool(nil), rec.Null...)
	f := s.feeds[part]
	f.pending = append(f.pending, copyload.Record{Source: name, Rec: cp})
	if len(f.pending) >= s.cfg.ChunkRows {
		return s.send(ctx, f)
	}
	return nil
}

func (s *splitter) send(ctx context.Context, f *feed) error {
	if len(f.pending) == 0 {
		return nil
	}
	select {
	case f.ch <- f.pending:
		f.pending = make([]copyload.Record, 0, s.cfg.ChunkRows)
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// GeneratorInput turns a generator into an Input of COPY text rows. The
// generator runs on a goroutine owned by the returned stop function,
// which the caller must call (it waits for the goroutine).
func GeneratorInput(ctx context.Context, name string, g gen.Generator) (Input, func(), error) {
	pr, pw := io.Pipe()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		pw.CloseWithError(gen.WriteText(ctx, pw, g))
	}()
	rd, err := records.NewReader(pr, records.DefaultOptions(records.Text))
	stop := func() {
		pr.CloseWithError(errors.New("load stopped"))
		wg.Wait()
	}
	if err != nil {
		stop()
		return Input{}, nil, err
	}
	return Input{Name: name, Reader: rd}, stop, nil
}
