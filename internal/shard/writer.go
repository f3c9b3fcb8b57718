package shard

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgts/pgts/internal/copyload"
	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pg"
)

// Writer writes rows of one sharded table straight into its partitions on
// the shards, for a caller that routes its rows itself and keeps writing
// over a long time (the metrics daemon's raw points): it maps integer
// shard keys to partitions (asking the coordinator, cached) and runs a
// copyload.Loader on a partition's shard, exactly once with a load ID,
// the partition's ledger being on its shard as in Load.
//
// A shard that does not answer fails the writes of its partitions only:
// connections are opened on first use and again after a failure, so a
// Writer outlives a shard's outage. Safe for concurrent use (writes of
// different partitions run at once); Close releases the connections.
type Writer struct {
	c       *Coordinator
	t       *Table
	log     *slog.Logger
	now     func() time.Time
	workers int

	mu        sync.Mutex
	placement []string // shard per partition, reread after a failed write (a move)
	shards    map[string]Shard
	pools     map[string]*pgxpool.Pool
	targets   map[int]*writerPart
	keyType   string
	cache     map[int64]int // shard key → partition, at most maxCachedKeys
	closed    bool
}

// writerPart is a partition's loader target on its shard.
type writerPart struct {
	mgr    *partition.Manager
	target *copyload.Target
}

// WriterConfig tunes a Writer.
type WriterConfig struct {
	// Workers is the connections each partition's write uses (0: 1).
	Workers int
	Now     func() time.Time // the tables' accepted time window
	Logger  *slog.Logger
}

// ErrNotReady is returned for a sharded table whose creation did not
// complete.
var ErrNotReady = errors.New("the sharded table is not completely created: run pgts table create again with the same options")

// OpenWriter returns a Writer for sharded table name. The table must be
// ready; its shards need not answer yet. The coordinator must answer.
func (c *Coordinator) OpenWriter(ctx context.Context, name string, cfg WriterConfig) (*Writer, error) {
	t, err := c.Table(ctx, name)
	if err != nil {
		return nil, err
	}
	if !t.Ready {
		return nil, fmt.Errorf("%s: %w", t, ErrNotReady)
	}
	shards, err := c.List(ctx)
	if err != nil {
		return nil, err
	}
	w := &Writer{c: c, t: t, log: cfg.Logger, now: cfg.Now, workers: max(cfg.Workers, 1), placement: append([]string(nil), t.Placement...),
		shards: map[string]Shard{}, pools: map[string]*pgxpool.Pool{}, targets: map[int]*writerPart{}, cache: map[int64]int{}}
	if w.log == nil {
		w.log = c.log
	}
	if w.now == nil {
		w.now = time.Now
	}
	for _, sh := range shards {
		w.shards[sh.Name] = sh
	}
	for p, s := range t.Placement {
		if _, ok := w.shards[s]; !ok {
			return nil, fmt.Errorf("partition %d of %s is on shard %q, which is not recorded", p, t, s)
		}
	}
	err = c.pool.QueryRow(ctx, `SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = $1::regclass AND attname = $2 AND NOT attisdropped`,
		t.Qualified(), t.ShardColumn).Scan(&w.keyType)
	if err != nil {
		return nil, fmt.Errorf("reading the shard column of %s: %w", t, err)
	}
	return w, nil
}

// Table is the sharded table written.
func (w *Writer) Table() *Table { return w.t }

// Shard names the shard holding partition p.
func (w *Writer) Shard(p int) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.placement[p]
}

// refresh rereads the placement after a failed write: a partition moved
// (pgts shard move) is written on its new shard from then on, where its
// ledger moved with its rows.
func (w *Writer) refresh(ctx context.Context) {
	t, err := w.c.Table(ctx, w.t.Qualified())
	if err != nil || len(t.Placement) != len(w.placement) {
		return
	}
	shards, err := w.c.List(ctx)
	if err != nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, sh := range shards {
		w.shards[sh.Name] = sh
	}
	for p, s := range t.Placement {
		if s != w.placement[p] && s != "" {
			w.log.Info("a partition moved; writing it on its new shard", "table", w.t.String(), "partition", p, "from", w.placement[p], "to", s)
			w.placement[p] = s
			delete(w.targets, p)
		}
	}
}

// Partitions returns the partition of each key, in order: the keys not
// cached are asked of the coordinator in one statement
// (satisfies_hash_partition with each key cast to the shard column's
// type), so a row goes where a query on the coordinator looks for it.
func (w *Writer) Partitions(ctx context.Context, keys []int64) ([]int, error) {
	w.mu.Lock()
	var ask []int64
	seen := map[int64]bool{}
	for _, k := range keys {
		if _, ok := w.cache[k]; !ok && !seen[k] {
			seen[k] = true
			ask = append(ask, k)
		}
	}
	w.mu.Unlock()
	found := map[int64]int{}
	if len(ask) > 0 {
		rows, err := w.c.pool.Query(ctx, `SELECT k, r FROM unnest($3::int8[]) k, generate_series(0, $2::int - 1) r
			WHERE satisfies_hash_partition($1::regclass, $2::int, r, CAST(k AS `+w.keyType+`))`, w.t.Qualified(), w.t.Partitions, ask)
		if err != nil {
			return nil, fmt.Errorf("finding the partitions of %d shard keys of %s: %w", len(ask), w.t, err)
		}
		for rows.Next() {
			var k int64
			var r int
			if err := rows.Scan(&k, &r); err != nil {
				rows.Close()
				return nil, err
			}
			found[k] = r
		}
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("finding the partitions of %d shard keys of %s: %w", len(ask), w.t, err)
		}
		if len(found) != len(ask) {
			return nil, fmt.Errorf("finding the partitions of shard keys of %s: %d of %d keys have none", w.t, len(ask)-len(found), len(ask))
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for k, r := range found {
		if len(w.cache) < maxCachedKeys {
			w.cache[k] = r
		}
	}
	out := make([]int, len(keys))
	for i, k := range keys {
		r, ok := w.cache[k]
		if !ok {
			r = found[k]
		}
		out[i] = r
	}
	return out, nil
}

// part returns partition p's pool and target, connecting to its shard
// and reading the target on first use.
func (w *Writer) part(ctx context.Context, p int) (*pgxpool.Pool, *writerPart, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	shardName := w.placement[p]
	pool, err := w.poolLocked(ctx, shardName)
	if err != nil {
		return nil, nil, err
	}
	if wp := w.targets[p]; wp != nil {
		return pool, wp, nil
	}
	m := partition.NewManager(pool, w.log.With("shard", shardName), w.now)
	name := pg.QuoteQualified(w.t.Schema, PartitionName(w.t.Name, p))
	target, err := copyload.LookupTarget(ctx, pool, m, name)
	if err != nil {
		return nil, nil, fmt.Errorf("shard %q: %w", shardName, err)
	}
	if target.Series == nil {
		return nil, nil, fmt.Errorf("shard %q: %s is not a series table", shardName, name)
	}
	wp := &writerPart{mgr: m, target: target}
	w.targets[p] = wp
	return pool, wp, nil
}

// poolLocked returns the pool of a shard, opened on first use; w.mu held.
func (w *Writer) poolLocked(ctx context.Context, shardName string) (*pgxpool.Pool, error) {
	if w.closed {
		return nil, errors.New("shard writer closed")
	}
	if pool := w.pools[shardName]; pool != nil {
		return pool, nil
	}
	n := 0
	for _, s := range w.placement {
		if s == shardName {
			n++
		}
	}
	// per partition: its workers, the load's lock and the manager's
	pool, err := openShard(ctx, w.shards[shardName], int32(n*(w.workers+2)+2))
	if err != nil {
		return nil, err
	}
	w.pools[shardName] = pool
	return pool, nil
}

// Load writes src into partition p on its shard with cfg (Workers is
// replaced by the Writer's; with cfg.LoadID, the ledger on the shard is
// kept under LoadID + "/" + the partition's name, see LoadID). Every row
// of src must belong to partition p: the caller routes with Partitions.
func (w *Writer) Load(ctx context.Context, p int, src copyload.Source, cfg copyload.Config) (copyload.Summary, error) {
	if p < 0 || p >= w.t.Partitions {
		return copyload.Summary{}, fmt.Errorf("partition %d of %s: out of range", p, w.t)
	}
	pool, wp, err := w.part(ctx, p)
	if err != nil {
		return copyload.Summary{}, err
	}
	cfg.Workers = w.workers
	cfg.Now = w.now
	if cfg.Logger == nil {
		cfg.Logger = w.log
	}
	cfg.Logger = cfg.Logger.With("shard", w.Shard(p), "partition", p)
	if cfg.LoadID != "" {
		cfg.LoadID = w.LoadID(cfg.LoadID, p)
	}
	ld, err := copyload.New(pool, wp.mgr, wp.target, cfg)
	if err != nil {
		return copyload.Summary{}, err
	}
	sum, err := ld.Run(ctx, src)
	if err != nil {
		shardName := w.Shard(p)
		w.reset(shardName)
		w.refresh(ctx)
		return sum, fmt.Errorf("shard %q, partition %d: %w", shardName, p, err)
	}
	return sum, nil
}

// reset closes the idle connections to a shard after a failed write: a
// shard that restarted left them broken, and the pool would hand them
// out again before noticing.
func (w *Writer) reset(shardName string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if pool := w.pools[shardName]; pool != nil {
		pool.Reset()
	}
}

// LoadID is the ledger's load ID of partition p for the write id.
func (w *Writer) LoadID(id string, p int) string { return id + "/" + PartitionName(w.t.Name, p) }

// Forget deletes the ledger of write id on partition p's shard (the write
// is complete on every partition, so no rerun will need it).
func (w *Writer) Forget(ctx context.Context, p int, id string) error {
	shardName := w.Shard(p)
	w.mu.Lock()
	pool, err := w.poolLocked(ctx, shardName)
	w.mu.Unlock()
	if err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		// committed durably whatever the shard's synchronous_commit: a
		// crash must not bring back a forgotten ledger
		err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SET LOCAL synchronous_commit = on`); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `DELETE FROM pgts.load WHERE load_id = $1`, w.LoadID(id, p))
			return err
		})
		if err == nil || attempt == 1 || !pg.Retryable(err) {
			return err
		}
		pool.Reset()
	}
}

// Maintain premakes and applies retention to the table's partitions on
// their shards, shard by shard; a shard that fails is reported and the
// others are maintained.
func (w *Writer) Maintain(ctx context.Context) []ShardMaintenance {
	byShard := map[string][]int{}
	var order []string
	w.mu.Lock()
	placement := append([]string(nil), w.placement...)
	w.mu.Unlock()
	for p, s := range placement {
		if byShard[s] == nil {
			order = append(order, s)
		}
		byShard[s] = append(byShard[s], p)
	}
	var out []ShardMaintenance
	for _, s := range order {
		res := ShardMaintenance{Shard: s}
		var tables []*partition.Table
		for _, p := range byShard[s] {
			_, wp, err := w.part(ctx, p)
			if err != nil {
				res.Err = err
				break
			}
			tbl, err := wp.mgr.Table(ctx, pg.QuoteQualified(w.t.Schema, PartitionName(w.t.Name, p)))
			if err != nil {
				res.Err = fmt.Errorf("shard %q: %w", s, err)
				break
			}
			tables = append(tables, tbl)
		}
		if res.Err == nil {
			w.mu.Lock()
			pool := w.pools[s]
			w.mu.Unlock()
			res.Results = partition.NewManager(pool, w.log.With("shard", s), w.now).Maintain(ctx, tables)
		}
		out = append(out, res)
	}
	return out
}

// Close closes the connections to the shards. Writes under way must have
// returned.
func (w *Writer) Close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range w.pools {
		p.Close()
	}
	w.pools, w.closed = nil, true
}
