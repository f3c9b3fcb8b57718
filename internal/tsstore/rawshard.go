package tsstore

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/pgts/pgts/internal/copyload"
	"github.com/pgts/pgts/internal/partition"
	scaleout "github.com/pgts/pgts/internal/shard"
)

// A sharded raw table (docs/scale-out.md, "The metrics daemon's raw
// table"): the raw points go straight into the shards' partitions, as
// pgts load does for a sharded table, each point to the partition of its
// series_id, the shard key. series_id is the one column the daemon fills
// that says which series a point is of: a series' points all land in one
// partition, so a query for one series (Fetch, pgts.raw_points WHERE
// name = ...) is pruned to one shard.
//
// Exactly once, as for a local raw table: a write is split by partition
// (the same rows in the same order give the same split), each partition's
// share loaded under the write's load ID + "/" + the partition's name with
// its ledger on its shard; a write that fails on any partition is kept
// whole and rerun at the next flush, where the ledgers skip what
// committed. Ledgers are forgotten only once every partition committed.

// rawShardColumn is the shard key a sharded raw table must have.
const rawShardColumn = "series_id"

// openRawSharded opens the writer of the raw table when it is sharded;
// ok reports whether it is.
func (s *Store) openRawSharded(ctx context.Context) (ok bool, err error) {
	rc := s.cfg.Raw
	c := scaleout.New(s.pool, s.log)
	st, err := c.Table(ctx, rc.Table)
	if errors.Is(err, scaleout.ErrNotSharded) {
		return false, nil
	}
	if err != nil {
		return true, fmt.Errorf("raw points table %q: %w", rc.Table, err)
	}
	if st.ShardColumn != rawShardColumn {
		return true, fmt.Errorf("raw points table %s is sharded by %q; the raw table must be sharded by %q (pgts table create --shard-by %s)",
			st, st.ShardColumn, rawShardColumn, rawShardColumn)
	}
	w, err := c.OpenWriter(ctx, st.Qualified(), scaleout.WriterConfig{Workers: 1, Now: s.cfg.Now, Logger: s.log})
	if err != nil {
		return true, fmt.Errorf("raw points table %q: %w", rc.Table, err)
	}
	// the coordinator's parent: its columns, and what Fetch reads
	target, err := copyload.LookupTarget(ctx, s.pool, s.mgr, st.Qualified())
	if err == nil {
		for _, col := range []string{"time", "series_id", "value"} {
			if target.ColumnIndex(col) < 0 {
				err = fmt.Errorf("raw points table %s has no column %q", st, col)
			}
		}
	}
	if err == nil {
		err = s.createRawView(ctx, st.Qualified())
	}
	if err != nil {
		w.Close()
		return true, err
	}
	s.raw, s.rawShard = target, w
	s.rawTbl = &partition.Table{Schema: st.Schema, Name: st.Name, TimeColumn: st.Spec.TimeColumn}
	return true, nil
}

// loadRawSharded writes src under load ID id into the partitions of the
// sharded raw table, every partition at once; it fails when any
// partition's share did not commit whole (a rerun of the same src and id
// completes it), and then forgets the ledgers.
func (s *Store) loadRawSharded(ctx context.Context, src *rawRows, id string) error {
	parts, err := s.rawShard.Partitions(ctx, src.ids)
	if err != nil {
		return fmt.Errorf("writing %d raw points: %w", len(src.ids), err)
	}
	split := map[int]*rawRows{}
	var order []int
	for i, p := range parts {
		r := split[p]
		if r == nil {
			r = &rawRows{}
			split[p] = r
			order = append(order, p)
		}
		r.ids = append(r.ids, src.ids[i])
		r.ts = append(r.ts, src.ts[i])
		r.vs = append(r.vs, src.vs[i])
	}
	errs := make([]error, len(order))
	var wg sync.WaitGroup
	for i, p := range order {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := split[p]
			sum, err := s.rawShard.Load(ctx, p, &copyload.GenSource{Name: "metrics cache", Gen: r}, s.rawLoadConfig(id, len(r.ids)))
			s.counters.rawStored.Add(sum.Loaded)
			s.counters.rawRefused.Add(sum.Rejected)
			errs[i] = err
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("writing %d raw points (kept for the next flush): %w", len(src.ids), err)
	}
	for _, p := range order {
		if err := s.rawShard.Forget(ctx, p, id); err != nil {
			s.log.Warn("forgetting the ledger of a raw points write", "load_id", s.rawShard.LoadID(id, p), "shard", s.rawShard.Shard(p), "err", err)
		}
	}
	return nil
}

// maintainSharded premakes and applies retention on the shards holding
// the raw table's partitions.
func (s *Store) maintainSharded(ctx context.Context) {
	for _, r := range s.rawShard.Maintain(ctx) {
		if r.Err != nil {
			s.log.Warn("maintaining the raw points table on a shard", "shard", r.Shard, "err", r.Err)
		}
		for _, tr := range r.Results {
			if tr.Err != nil {
				s.log.Warn("maintaining the raw points table", "shard", r.Shard, "table", tr.Table, "err", tr.Err)
			}
		}
	}
}
