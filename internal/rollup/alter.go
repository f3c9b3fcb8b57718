package rollup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/pgts/pgts/internal/pg"
)

// AlterSpec changes the aggregates of a rollup: Drop names aggregates
// (their view columns) to remove, Add lists aggregates to add (at the end
// of the view's columns). Drops happen first, so an aggregate can be
// dropped and added again under its name.
type AlterSpec struct {
	Add  []Agg
	Drop []string
}

// ErrAltered says a rollup's aggregates changed since its definition was
// read (a refresh that began before an alter stops rather than write
// buckets with the old aggregates).
var ErrAltered = errors.New("its aggregates were altered since its definition was read: run it again")

// checkUnaltered fails with ErrAltered when r's aggregates in the catalog
// are not the ones r was read with. Called under r's refresh lock.
func checkUnaltered(ctx context.Context, tx pgx.Tx, r *Rollup) error {
	aggs, err := json.Marshal(r.Aggs)
	if err != nil {
		return err
	}
	var same bool
	if err := tx.QueryRow(ctx, `SELECT aggs = $2::jsonb FROM pgts.rollup WHERE id = $1`, r.ID, string(aggs)).Scan(&same); err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("rollup %s was dropped", r)
		}
		return err
	}
	if !same {
		return fmt.Errorf("rollup %s: %w", r, ErrAltered)
	}
	return nil
}

// Alter adds and drops aggregates of r, keeping its materialized buckets:
// in one transaction, under r's refresh lock, it adds the new aggregates'
// state columns to the data table (NULL in every stored row), drops the
// dropped ones' columns, records the new definition and remakes the view.
// Stored buckets read NULL for an added aggregate until they are
// rewritten: by a write to their bucket and group key, or by refresh
// --from --to; buckets materialized later have every aggregate. Rollups
// built on r are unaffected, and an aggregate one of them uses cannot be
// dropped.
//
// Locks: ACCESS EXCLUSIVE on the data table (and its partitions) and the
// view, for the length of the transaction (no row is rewritten: the
// columns are added without a default); the source is only read, so its
// writers never wait.
func (rs *Rollups) Alter(ctx context.Context, r *Rollup, s AlterSpec) (*Rollup, error) {
	if len(s.Add) == 0 && len(s.Drop) == 0 {
		return nil, errors.New("alter: give aggregates to add or to drop")
	}
	// The rollup it is built on may have been altered since r was read.
	cur, err := rs.byID(ctx, r.ID)
	if err != nil {
		return nil, fmt.Errorf("altering rollup %s: %w", r, err)
	}
	if !slices.Equal(cur.Aggs, r.Aggs) {
		return nil, fmt.Errorf("altering rollup %s: %w", r, ErrAltered)
	}
	r = cur
	var newAggs []Agg
	var dropped []Agg
	for _, a := range r.Aggs {
		if slices.Contains(s.Drop, a.Name) {
			dropped = append(dropped, a)
			continue
		}
		newAggs = append(newAggs, a)
	}
	for _, d := range s.Drop {
		if !slices.ContainsFunc(dropped, func(a Agg) bool { return a.Name == d }) {
			return nil, fmt.Errorf("--drop-agg: rollup %s has no aggregate %q (pgts rollup show %s)", r, d, r)
		}
	}
	newAggs = append(newAggs, s.Add...)
	if len(newAggs) == 0 {
		return nil, fmt.Errorf("--drop-agg: rollup %s would have no aggregate left", r)
	}
	nr := *r
	nr.Aggs = newAggs
	if err := nr.checkNames(); err != nil {
		return nil, fmt.Errorf("--add-agg: %w", err)
	}
	if r.Parent != nil {
		for _, a := range s.Add {
			if _, err := parentAgg(a, r.Parent.Aggs); err != nil {
				return nil, fmt.Errorf("--add-agg: %w", err)
			}
		}
	}
	if err := rs.checkChildren(ctx, r, newAggs); err != nil {
		return nil, err
	}
	var aggs []byte
	aggs, err = json.Marshal(newAggs)
	if err != nil {
		return nil, err
	}
	err = pgx.BeginFunc(ctx, rs.cfg.DB, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, $2)`, LockKey, r.ID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `SELECT 1 FROM pgts.rollup WHERE id = $1 FOR UPDATE`, r.ID); err != nil {
			return err
		}
		if err := checkUnaltered(ctx, tx, r); err != nil {
			return err
		}
		if len(dropped) > 0 {
			// The view shows the dropped columns: it is made again.
			if _, err := tx.Exec(ctx, "DROP VIEW "+r.view()); err != nil {
				return fmt.Errorf("dropping the view of rollup %s to make it again (a view of yours built on it must be dropped first): %w", r, err)
			}
			var cols []string
			for _, a := range dropped {
				for _, c := range stateColumns(a) {
					cols = append(cols, "DROP COLUMN "+pg.QuoteIdent(c))
				}
			}
			if _, err := tx.Exec(ctx, "ALTER TABLE "+r.data()+" "+strings.Join(cols, ", ")); err != nil {
				return fmt.Errorf("altering %s: %w", r.data(), err)
			}
		}
		if len(s.Add) > 0 {
			add := *r
			add.Aggs = s.Add
			types, err := stateTypes(ctx, tx, &add)
			if err != nil {
				return fmt.Errorf("--add-agg: %w", err)
			}
			var cols []string
			for _, a := range s.Add {
				for _, c := range stateColumns(a) {
					cols = append(cols, "ADD COLUMN "+pg.QuoteIdent(c)+" "+types[c])
				}
			}
			if _, err := tx.Exec(ctx, "ALTER TABLE "+r.data()+" "+strings.Join(cols, ", ")); err != nil {
				return fmt.Errorf("altering %s: %w", r.data(), err)
			}
		}
		if _, err := tx.Exec(ctx, `UPDATE pgts.rollup SET aggs = $2::jsonb WHERE id = $1`, r.ID, string(aggs)); err != nil {
			return err
		}
		return makeView(ctx, tx, &nr)
	})
	if err != nil {
		return nil, fmt.Errorf("altering rollup %s: %w", r, err)
	}
	return rs.Get(ctx, pg.QuoteQualified(r.Schema, r.Name))
}

// checkChildren refuses aggregates that would take away what a rollup
// built on r combines.
func (rs *Rollups) checkChildren(ctx context.Context, r *Rollup, aggs []Agg) error {
	rows, err := rs.cfg.DB.Query(ctx, `SELECT id FROM pgts.rollup WHERE source_rollup = $1 ORDER BY id`, r.ID)
	if err != nil {
		return err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int])
	if err != nil {
		return err
	}
	for _, id := range ids {
		child, err := rs.byID(ctx, id)
		if err != nil {
			return err
		}
		for _, a := range child.Aggs {
			if _, err := parentAgg(a, aggs); err != nil {
				return fmt.Errorf("--drop-agg: rollup %s is built on %s and combines its %s: drop it there first", child, r, a)
			}
		}
	}
	return nil
}

// stateTypes reads the SQL types of r's state columns, as its aggregate
// query over the source gives them.
func stateTypes(ctx context.Context, tx pgx.Tx, r *Rollup) (map[string]string, error) {
	rows, err := tx.Query(ctx, r.aggSelect(r.source()+" r", "false"))
	if err != nil {
		return nil, err
	}
	fields := rows.FieldDescriptions()
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, f := range fields {
		var typ string
		if err := tx.QueryRow(ctx, `SELECT format_type($1, nullif($2, -1))`, f.DataTypeOID, f.TypeModifier).Scan(&typ); err != nil {
			return nil, err
		}
		out[f.Name] = typ
	}
	return out, nil
}
