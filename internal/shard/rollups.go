package shard

import (
	"context"
	"fmt"

	"github.com/pgts/pgts/internal/pg"
)

// refuseRollups refuses to move or drop partitions of t while rollups of
// t exist (package rollup, pgts.sharded_rollup): each partition's rollup
// lives on the partition's shard and depends on it.
func (c *Coordinator) refuseRollups(ctx context.Context, t *Table, doing string) error {
	var names *string
	if err := c.pool.QueryRow(ctx, `SELECT string_agg(rollup_schema || '.' || rollup_name, ', ' ORDER BY id) FROM pgts.sharded_rollup
		WHERE table_schema = $1 AND table_name = $2`, t.Schema, t.Name).Scan(&names); err != nil {
		return fmt.Errorf("reading the rollups of %s: %w", t, err)
	}
	if names != nil {
		return &pg.UsageError{Err: fmt.Errorf("%s %s: it has rollups (%s), each kept on the shards of its partitions: drop them first (pgts rollup drop NAME --yes)", doing, t, *names)}
	}
	return nil
}
