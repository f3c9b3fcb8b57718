package shard

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgts/pgts/internal/partition"
)

// ShardMaintenance is the outcome of maintaining one shard: a result per
// partition it holds, or Err when the shard could not be reached or read.
type ShardMaintenance struct {
	Shard   string
	Results []partition.MaintainResult
	Err     error
}

// Failed reports whether the shard or any of its tables failed.
func (s ShardMaintenance) Failed() bool {
	if s.Err != nil {
		return true
	}
	for _, r := range s.Results {
		if r.Err != nil {
			return true
		}
	}
	return false
}

// Maintain runs pgts' maintenance (premake, then retention) on every
// shard, on the series tables each holds as partitions of sharded tables
// (its pgts.shard_member). Shards are maintained one after the other; one
// that is down is reported and the others are still maintained, so a
// retried maintain completes the rest. Every step is idempotent.
func (c *Coordinator) Maintain(ctx context.Context, now func() time.Time) ([]ShardMaintenance, error) {
	shards, err := c.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]ShardMaintenance, 0, len(shards))
	for _, sh := range shards {
		res := ShardMaintenance{Shard: sh.Name}
		res.Results, res.Err = c.maintainShard(ctx, sh, now)
		if res.Err != nil {
			c.log.Error("shard maintenance failed", "shard", sh.Name, "err", res.Err)
		}
		out = append(out, res)
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
	}
	return out, nil
}

func (c *Coordinator) maintainShard(ctx context.Context, sh Shard, now func() time.Time) ([]partition.MaintainResult, error) {
	pool, err := openShard(ctx, sh, 2)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	rows, err := pool.Query(ctx, `SELECT table_schema, table_name FROM pgts.shard_member ORDER BY 1, 2`)
	if err != nil {
		return nil, fmt.Errorf("reading what shard %q holds: %w", sh.Name, err)
	}
	members, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) ([2]string, error) {
		var m [2]string
		err := r.Scan(&m[0], &m[1])
		return m, err
	})
	if err != nil {
		return nil, err
	}
	m := partition.NewManager(pool, c.log.With("shard", sh.Name), now)
	all, err := m.Tables(ctx)
	if err != nil {
		return nil, err
	}
	held := map[[2]string]bool{}
	for _, mb := range members {
		held[mb] = true
	}
	var tables []*partition.Table
	for _, t := range all {
		if held[[2]string{t.Schema, t.Name}] {
			tables = append(tables, t)
		}
	}
	return m.Maintain(ctx, tables), nil
}
