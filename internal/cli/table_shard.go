package cli

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pg"
	"github.com/pgts/pgts/internal/shard"
)

// createShardedTable makes a series table sharded by shardBy over the
// coordinator's shards (table create --shard-by).
func createShardedTable(ctx context.Context, a *app, pool *pgxpool.Pool, spec partition.CreateSpec, shardBy string, parts int) error {
	if shardBy == "" {
		return usagef("--shards goes with --shard-by COLUMN")
	}
	col, err := pg.ColumnName(shardBy)
	if err != nil {
		return usagef("--shard-by: %v", err)
	}
	t, err := shard.New(pool, a.log).CreateTable(ctx, shard.TableSpec{Series: spec, ShardColumn: col, Partitions: parts}, time.Now)
	if err != nil {
		return err
	}
	a.log.Info("created sharded series table", "table", t.String(), "shard_by", t.ShardColumn, "partitions", t.Partitions,
		"interval", t.Spec.Interval.String(), "buckets_function", shard.BucketsFunction(t.Name))
	return nil
}
