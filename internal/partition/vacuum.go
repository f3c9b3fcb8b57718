package partition

import (
	"context"
	"fmt"
	"slices"

	"github.com/pgts/pgts/internal/pg"
)

// VacuumPerPass bounds how many partitions of one table VacuumClosed
// vacuums in one call, newest first, so that the first maintain pass over
// a long history stays short; the rest wait for the next passes.
const VacuumPerPass = 8

// VacuumClosed runs VACUUM on the closed partitions of t (whose upper
// bound is at or before now: no more writes expected) that were written
// since their last vacuum or never vacuumed, with ANALYZE when they were
// modified since their last analyze. Rows written by INSERT (any SQL
// client, the metrics daemon, the rows moved out of the DEFAULT partition)
// leave their pages not all-visible until a vacuum, so an index-only scan
// of a covering index still reads the heap for them; autovacuum's insert
// threshold leaves the last writes of a partition unvacuumed once writing
// stops. Partitions that a load wrote with COPY FREEZE are all-visible
// already: their vacuum skips every page. A partition locked by someone
// else is skipped (SKIP_LOCKED) until the next pass. It returns how many
// partitions it vacuumed.
func (m *Manager) VacuumClosed(ctx context.Context, t *Table) (int, error) {
	parts, err := m.Partitions(ctx, t)
	if err != nil {
		return 0, err
	}
	now := m.now().UnixMicro()
	var closed []string
	for _, p := range slices.Backward(parts) {
		if p.Hi <= now {
			closed = append(closed, p.Name)
		}
	}
	if len(closed) == 0 {
		return 0, nil
	}
	// Statistics of the leaves (a hash sub-partitioned partition has
	// several); a leaf the statistics do not know yet counts as never
	// vacuumed.
	rows, err := m.db.Query(ctx, `SELECT c.name,
			bool_or(coalesce(s.n_ins_since_vacuum, 0) > 0 OR coalesce(s.n_dead_tup, 0) > 0 OR (s.last_vacuum IS NULL AND s.last_autovacuum IS NULL)),
			bool_or(coalesce(s.n_mod_since_analyze, 0) > 0 OR (s.last_analyze IS NULL AND s.last_autoanalyze IS NULL))
		FROM unnest($2::text[]) WITH ORDINALITY AS c(name, n)
		CROSS JOIN LATERAL pg_partition_tree(to_regclass(quote_ident($1) || '.' || quote_ident(c.name))) AS p
		LEFT JOIN pg_stat_user_tables s ON s.relid = p.relid
		WHERE p.isleaf
		GROUP BY c.name, c.n ORDER BY c.n`, t.Schema, closed)
	if err != nil {
		return 0, fmt.Errorf("reading the vacuum statistics of %s: %w", t, err)
	}
	type job struct {
		name    string
		analyze bool
	}
	var jobs []job
	for rows.Next() {
		var j job
		var vacuum bool
		if err := rows.Scan(&j.name, &vacuum, &j.analyze); err != nil {
			rows.Close()
			return 0, fmt.Errorf("reading the vacuum statistics of %s: %w", t, err)
		}
		if vacuum || j.analyze {
			jobs = append(jobs, j)
		}
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("reading the vacuum statistics of %s: %w", t, err)
	}
	done := 0
	for _, j := range jobs {
		if done == VacuumPerPass {
			m.log.Info("closed partitions left to vacuum at the next pass", "table", t.String(), "partitions", len(jobs)-done)
			break
		}
		opts := "SKIP_LOCKED"
		if j.analyze {
			opts += ", ANALYZE"
		}
		if _, err := m.db.Exec(ctx, "VACUUM ("+opts+") "+pg.QuoteQualified(t.Schema, j.name)); err != nil {
			return done, fmt.Errorf("vacuuming partition %q of %s: %w", j.name, t, err)
		}
		done++
	}
	if done > 0 {
		m.log.Info("vacuumed closed partitions", "table", t.String(), "partitions", done)
	}
	return done, nil
}
