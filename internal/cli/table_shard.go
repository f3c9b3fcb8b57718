package cli

import (
	"context"
	"errors"
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
		"interval", t.Spec.Interval.Human(), "buckets_function", shard.BucketsFunction(t.Name))
	return nil
}

// dropShardedTable drops name when it is a sharded table (done reports
// whether it is); table drop's other path handles the rest.
func dropShardedTable(ctx context.Context, a *app, pool *pgxpool.Pool, name string, yes bool) (done bool, err error) {
	c := shard.New(pool, a.log)
	t, err := c.Table(ctx, name)
	if errors.Is(err, shard.ErrNotSharded) {
		return false, nil
	}
	if err != nil {
		return true, err
	}
	if !yes {
		what := "this drops %s and all its data on every shard; run again with --yes"
		if t.Dropping {
			what = "%s is being dropped; run again with --yes to finish"
		}
		return true, usagef(what, t)
	}
	_, err = c.DropTable(ctx, t.Qualified())
	return true, err
}
