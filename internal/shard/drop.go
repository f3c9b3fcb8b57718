package shard

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/pgts/pgts/internal/catalog"
	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pg"
)

// DropResult says what a DropTable did.
type DropResult struct {
	Table   string
	Dropped int              // partitions dropped on their shards by this run
	Left    map[string][]int // shard → partitions still on it (the shard did not answer)
	Errs    map[string]error // shard → why
}

// DropIncompleteError is returned when some shards did not answer: the
// table is gone from the coordinator, their partitions are left, and the
// same drop run again finishes.
type DropIncompleteError struct{ Result *DropResult }

func (e *DropIncompleteError) Error() string {
	names := make([]string, 0, len(e.Result.Left))
	for s := range e.Result.Left {
		names = append(names, s)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, s := range names {
		parts[i] = fmt.Sprintf("shard %q (partitions %s): %v", s, intList(e.Result.Left[s]), e.Result.Errs[s])
	}
	return fmt.Sprintf("dropping %s: %s is gone from the coordinator, but %s; run the same drop again once %s to finish",
		e.Result.Table, e.Result.Table, strings.Join(parts, "; "), plural(len(names), "the shard answers", "the shards answer"))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func intList(ps []int) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = fmt.Sprint(p)
	}
	return strings.Join(s, ", ")
}

// DropTable drops sharded table name with all its data, in steps that a
// rerun resumes:
//
//  1. in one transaction on the coordinator: the parent (and with it its
//     foreign partitions) and the bucket function are dropped and the
//     table is marked dropping, so nothing of it is visible there from
//     then on, and neither a load nor a create of the same name starts;
//  2. on each shard, its partitions (series tables, through the shard's
//     pgts catalog), their load ledgers (load IDs ending in "/" + the
//     partition's name) and shard_member rows; each partition's
//     placement row on the coordinator is deleted once it is gone;
//  3. the table's catalog row, once no partition is left.
//
// A shard that does not answer keeps its partitions and their placement
// rows: DropTable returns a *DropIncompleteError naming it, and running
// it again finishes. Dropping a table that is being dropped resumes.
func (c *Coordinator) DropTable(ctx context.Context, name string) (*DropResult, error) {
	if err := catalog.Migrate(ctx, c.pool); err != nil {
		return nil, err
	}
	t, err := c.Table(ctx, name)
	if err != nil {
		return nil, err
	}
	res := &DropResult{Table: t.String(), Left: map[string][]int{}, Errs: map[string]error{}}
	if err := c.refuseRollups(ctx, t, "dropping"); err != nil {
		return res, err
	}
	if err := c.dropOnCoordinator(ctx, t); err != nil {
		return res, err
	}
	shards, err := c.List(ctx)
	if err != nil {
		return res, err
	}
	// a move that stopped left a copy on its peer shard: dropped first
	peers := map[string][]int{}
	moving, err := c.placements(ctx, `SELECT partition, move_peer FROM pgts.shard_placement
		WHERE table_schema = $1 AND table_name = $2 AND move_peer IS NOT NULL ORDER BY partition`, t.Schema, t.Name)
	if err != nil {
		return res, err
	}
	for _, m := range moving {
		peers[m.shard] = append(peers[m.shard], m.part)
	}
	byShard := map[string][]int{}
	for p, s := range t.Placement {
		if s != "" {
			byShard[s] = append(byShard[s], p)
		}
	}
	for _, sh := range shards {
		if parts := peers[sh.Name]; len(parts) > 0 {
			if n, err := c.dropOnShard(ctx, t, sh, parts, true); err != nil {
				res.Left[sh.Name] = parts[n:]
				res.Errs[sh.Name] = err
			}
		}
	}
	for _, sh := range shards {
		parts := byShard[sh.Name]
		if len(parts) == 0 {
			continue
		}
		delete(byShard, sh.Name)
		n, err := c.dropOnShard(ctx, t, sh, parts, false)
		res.Dropped += n
		if err != nil {
			c.log.Warn("could not drop the partitions on a shard", "table", t.String(), "shard", sh.Name, "err", err)
			res.Left[sh.Name] = append(res.Left[sh.Name], parts[n:]...)
			res.Errs[sh.Name] = err
		}
	}
	for s, parts := range byShard { // placed on a shard no longer recorded: cannot happen through pgts
		res.Left[s], res.Errs[s] = parts, errors.New("the shard is not recorded on the coordinator (pgts shard add)")
	}
	if len(res.Left) > 0 {
		return res, &DropIncompleteError{Result: res}
	}
	_, err = c.pool.Exec(ctx, `DELETE FROM pgts.sharded_table WHERE table_schema = $1 AND table_name = $2 AND dropping
		AND NOT EXISTS (SELECT 1 FROM pgts.shard_placement WHERE table_schema = $1 AND table_name = $2)`, t.Schema, t.Name)
	if err != nil {
		return res, fmt.Errorf("dropping %s: removing its catalog row: %w", t, err)
	}
	c.log.Info("dropped sharded table", "table", t.String(), "partitions_dropped", res.Dropped)
	return res, nil
}

// dropOnCoordinator drops the parent and the bucket function and marks
// the table dropping, in one transaction (done once; a rerun skips it).
func (c *Coordinator) dropOnCoordinator(ctx context.Context, t *Table) error {
	key := t.Schema + "." + t.Name
	return pgx.BeginFunc(ctx, c.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, catalog.LockKey, key); err != nil {
			return err
		}
		var dropping bool
		if err := tx.QueryRow(ctx, `SELECT dropping FROM pgts.sharded_table WHERE table_schema = $1 AND table_name = $2`, t.Schema, t.Name).Scan(&dropping); err != nil {
			return fmt.Errorf("dropping %s: %w", t, err)
		}
		if dropping {
			return nil
		}
		fn := pg.QuoteQualified(t.Schema, BucketsFunction(t.Name))
		for _, stmt := range []string{
			"DROP FUNCTION IF EXISTS " + fn + "(text, interval, timestamptz, timestamptz, timestamptz)",
			// foreign partitions go with their parent; a view on it refuses the drop
			"DROP TABLE IF EXISTS " + t.Qualified(),
		} {
			if _, err := tx.Exec(ctx, stmt); err != nil {
				return fmt.Errorf("dropping %s on the coordinator: %w", t, err)
			}
		}
		_, err := tx.Exec(ctx, `UPDATE pgts.sharded_table SET dropping = true, ready = false WHERE table_schema = $1 AND table_name = $2`, t.Schema, t.Name)
		return err
	})
}

// dropOnShard drops partitions parts of t on shard sh, in order, each
// with its shard_member row, then its placement row on the coordinator
// (peer: only the placement's move_peer, sh holding the copy of a move
// that stopped). It returns how many it dropped before an error.
func (c *Coordinator) dropOnShard(ctx context.Context, t *Table, sh Shard, parts []int, peer bool) (int, error) {
	pool, err := openShard(ctx, sh, 2)
	if err != nil {
		return 0, err
	}
	defer pool.Close()
	if err := catalog.Migrate(ctx, pool); err != nil {
		return 0, fmt.Errorf("shard %q: %w", sh.Name, err)
	}
	m := partition.NewManager(pool, c.log.With("shard", sh.Name), nil)
	for i, p := range parts {
		name := PartitionName(t.Name, p)
		st, err := m.Table(ctx, pg.QuoteQualified(t.Schema, name))
		var nf *partition.TableNotFoundError
		switch {
		case err == nil:
			if err := m.Drop(ctx, st); err != nil {
				return i, fmt.Errorf("shard %q: %w", sh.Name, err)
			}
		case errors.As(err, &nf):
			// dropped by an earlier run, or never made (a create that stopped)
		default:
			return i, fmt.Errorf("shard %q: %w", sh.Name, err)
		}
		// the partition's load ledgers (LOAD_ID/NAME_pN): a new table of
		// the same name must not take their batches as loaded
		suffix := "/" + name
		if _, err := pool.Exec(ctx, `DELETE FROM pgts.load WHERE right(load_id, $2) = $1`, suffix, len(suffix)); err != nil {
			return i, fmt.Errorf("shard %q: %w", sh.Name, err)
		}
		if _, err := pool.Exec(ctx, `DELETE FROM pgts.shard_member WHERE table_schema = $1 AND table_name = $2`, t.Schema, name); err != nil {
			return i, fmt.Errorf("shard %q: %w", sh.Name, err)
		}
		q := `DELETE FROM pgts.shard_placement WHERE table_schema = $1 AND table_name = $2 AND partition = $3`
		if peer {
			q = `UPDATE pgts.shard_placement SET move_peer = NULL WHERE table_schema = $1 AND table_name = $2 AND partition = $3`
		}
		if _, err := c.pool.Exec(ctx, q, t.Schema, t.Name, p); err != nil {
			return i, err
		}
	}
	return len(parts), nil
}
