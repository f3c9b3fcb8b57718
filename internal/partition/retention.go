package partition

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgts/pgts/internal/catalog"
	"github.com/pgts/pgts/internal/pg"
)

// RetentionCutoff returns the time before which whole partitions may be
// dropped, and false when the table keeps everything.
func (t *Table) RetentionCutoff(now time.Time) (int64, bool) {
	if t.Retention == nil {
		return 0, false
	}
	return shift(now, *t.Retention, -1), true
}

// Expired returns the partitions whose upper bound is at or before the
// retention cutoff, read from the database's own bounds: a partition that
// still holds any time at or after the cutoff is never among them.
func (m *Manager) Expired(ctx context.Context, t *Table) ([]Partition, int64, error) {
	cutoff, ok := t.RetentionCutoff(m.now())
	if !ok {
		return nil, 0, nil
	}
	parts, err := m.Partitions(ctx, t)
	if err != nil {
		return nil, cutoff, err
	}
	var out []Partition
	for _, p := range parts {
		if p.Hi <= cutoff {
			out = append(out, p)
		}
	}
	return out, cutoff, nil
}

// LockTimeout bounds how long retention waits for a partition's lock, so a
// DROP queued behind a long query does not stall the writers queued behind
// it; the partition is retried at the next pass.
const LockTimeout = 5 * time.Second

// ApplyRetention drops (never merely detaches) the expired partitions, one
// transaction each, and deletes the rows waiting in the DEFAULT partition
// whose partition would be expired (no others). It returns those dropped; on error, the ones dropped
// before it.
func (m *Manager) ApplyRetention(ctx context.Context, t *Table) ([]Partition, error) {
	expired, _, err := m.Expired(ctx, t)
	if err != nil {
		return nil, err
	}
	if _, err := m.deleteExpiredWaiting(ctx, t); err != nil {
		return nil, err
	}
	var dropped []Partition
	for _, p := range expired {
		err := pgx.BeginFunc(ctx, m.db, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, catalog.LockKey, t.String()); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, fmt.Sprintf("SET LOCAL lock_timeout = '%dms'", LockTimeout.Milliseconds())); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, "DROP TABLE "+pg.QuoteQualified(t.Schema, p.Name))
			return err
		})
		if err != nil {
			return dropped, fmt.Errorf("dropping partition %q of %s: %w", p.Name, t, err)
		}
		m.log.Info("dropped expired partition", "table", t.String(), "partition", p.Name, "to", FormatMicros(p.Hi))
		dropped = append(dropped, p)
	}
	if len(dropped) > 0 {
		m.Forget(t)
	}
	return dropped, nil
}

// MaintainResult is the outcome of one table's maintenance.
type MaintainResult struct {
	Table    string
	Created  int // partitions made, for the premade horizon and for waiting rows
	Dropped  []Partition
	Moved    int64 // rows moved from the DEFAULT partition into their partitions
	Vacuumed int   // closed partitions vacuumed (VacuumClosed)
	Err      error
}

// Maintain gives each table its DEFAULT partition when it lacks one,
// premakes partitions, applies retention, moves the rows waiting in the
// DEFAULT partition into their partitions (MoveWaiting), and vacuums the
// closed partitions written since their last vacuum (VacuumClosed). A failure on one
// table is recorded in its result and does not stop the others.
func (m *Manager) Maintain(ctx context.Context, tables []*Table) []MaintainResult {
	out := make([]MaintainResult, 0, len(tables))
	for _, t := range tables {
		r := MaintainResult{Table: t.String()}
		r.Err = m.EnsureDefault(ctx, t)
		if r.Err == nil {
			r.Created, r.Err = m.Premake(ctx, t)
		}
		if r.Err == nil {
			r.Dropped, r.Err = m.ApplyRetention(ctx, t)
		}
		if r.Err == nil {
			var made int
			made, r.Moved, r.Err = m.MoveWaiting(ctx, t)
			r.Created += made
		}
		if r.Err == nil {
			r.Vacuumed, r.Err = m.VacuumClosed(ctx, t)
		}
		if r.Err != nil {
			m.log.Error("maintenance failed", "table", t.String(), "err", r.Err)
		}
		out = append(out, r)
		if ctx.Err() != nil {
			break
		}
	}
	return out
}
