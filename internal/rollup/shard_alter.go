package rollup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/pgts/pgts/internal/pg"
	"github.com/pgts/pgts/internal/shard"
)

// Alter adds and drops aggregates of a sharded rollup, keeping its
// buckets: Rollups.Alter on the rollup of each partition on its shard
// (whose stored buckets read NULL for an added aggregate until
// rewritten), with its states view made again; then on the coordinator,
// in one transaction, the foreign tables and the view made again and the
// definition recorded. Between the shards' alters and that transaction,
// queries of the coordinator's view may fail (a dropped column, a states
// view being made again). A shard that is down fails the alter naming
// it; the same alter again completes it (partitions already altered are
// kept as they are).
func (s *Sharded) Alter(ctx context.Context, sr *ShardedRollup, spec AlterSpec) (*ShardedRollup, error) {
	if len(spec.Add) == 0 && len(spec.Drop) == 0 {
		return nil, errors.New("alter: give aggregates to add or to drop")
	}
	var newAggs []Agg
	for _, a := range sr.Aggs {
		if !slices.Contains(spec.Drop, a.Name) {
			newAggs = append(newAggs, a)
		}
	}
	for _, d := range spec.Drop {
		if !slices.ContainsFunc(sr.Aggs, func(a Agg) bool { return a.Name == d }) {
			return nil, fmt.Errorf("--drop-agg: rollup %s has no aggregate %q (pgts rollup show %s)", sr, d, sr)
		}
	}
	newAggs = append(newAggs, spec.Add...)
	if len(newAggs) == 0 {
		return nil, fmt.Errorf("--drop-agg: rollup %s would have no aggregate left", sr)
	}
	probe := &Rollup{Schema: sr.Schema, Name: sr.Name, GroupBy: sr.GroupBy, Aggs: newAggs}
	if err := probe.checkNames(); err != nil {
		return nil, fmt.Errorf("--add-agg: %w", err)
	}
	if sr.Parent != nil {
		for _, a := range spec.Add {
			if _, err := parentAgg(a, sr.Parent.Aggs); err != nil {
				return nil, fmt.Errorf("--add-agg: %w", err)
			}
		}
	}
	children, err := s.List(ctx)
	if err != nil {
		return nil, err
	}
	for _, child := range children {
		if child.Parent == nil || child.Parent.ID != sr.ID {
			continue
		}
		for _, a := range child.Aggs {
			if _, err := parentAgg(a, newAggs); err != nil {
				return nil, fmt.Errorf("--drop-agg: rollup %s is built on %s and combines its %s: drop it there first", child, sr, a)
			}
		}
	}
	t, err := s.table(ctx, sr)
	if err != nil {
		return nil, err
	}
	var cols, types []string
	err = s.onShards(ctx, t, false, func(sh shard.Shard, pool *pgxpool.Pool, srs *Rollups, parts []int) error {
		for _, p := range parts {
			r, err := srs.Get(ctx, pg.QuoteQualified(sr.Schema, sr.PartitionRollup(p)))
			if err != nil {
				return err
			}
			if !slices.Equal(r.Aggs, newAggs) { // a retry skips those altered
				var ps AlterSpec
				for _, d := range spec.Drop {
					if slices.ContainsFunc(r.Aggs, func(a Agg) bool { return a.Name == d }) {
						ps.Drop = append(ps.Drop, d)
					}
				}
				for _, a := range spec.Add {
					if !slices.ContainsFunc(r.Aggs, func(b Agg) bool { return b.Name == a.Name }) {
						ps.Add = append(ps.Add, a)
					}
				}
				if len(ps.Drop) > 0 {
					// it shows the columns dropped
					if _, err := pool.Exec(ctx, "DROP VIEW IF EXISTS "+sr.states(p)); err != nil {
						return err
					}
				}
				if r, err = srs.Alter(ctx, r, ps); err != nil {
					return err
				}
			}
			if err := sr.makeStates(ctx, pool, r, p, &cols, &types); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("altering sharded rollup %s (run the same alter again once every shard answers): %w", sr, err)
	}
	aggs, err := json.Marshal(newAggs)
	if err != nil {
		return nil, err
	}
	nsr := *sr
	nsr.Aggs = newAggs
	err = pgx.BeginFunc(ctx, s.rs.cfg.DB, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, LockKey, "sharded "+sr.String()); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, "DROP VIEW IF EXISTS "+sr.view()); err != nil {
			return fmt.Errorf("dropping the view %s to make it again (a view of yours built on it must be dropped first): %w", sr.view(), err)
		}
		for p := range t.Partitions {
			if _, err := tx.Exec(ctx, "DROP FOREIGN TABLE IF EXISTS "+sr.states(p)); err != nil {
				return err
			}
		}
		if err := makeCoordinatorView(ctx, tx, &nsr, t, cols, types); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `UPDATE pgts.sharded_rollup SET aggs = $2::jsonb WHERE id = $1`, sr.ID, string(aggs))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("altering sharded rollup %s on the coordinator: %w", sr, err)
	}
	return s.Get(ctx, sr.String())
}
