package copyload

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/pgts/pgts/internal/catalog"
)

// ledgerEntry is a committed batch of an earlier run.
type ledgerEntry struct {
	rows, rejected int64
	rejects        []Reject
}

// openLedger registers the load ID (or checks that a rerun matches the
// first run) and reads the batches already committed.
func (l *Loader) openLedger(ctx context.Context) (map[int64]ledgerEntry, error) {
	if err := catalog.Migrate(ctx, l.pool); err != nil {
		return nil, err
	}
	var target, fp string
	err := l.pool.QueryRow(ctx, `INSERT INTO pgts.load (load_id, target, fingerprint) VALUES ($1, $2, $3)
		ON CONFLICT (load_id) DO UPDATE SET load_id = EXCLUDED.load_id
		RETURNING target, fingerprint`, l.cfg.LoadID, l.target.String(), l.cfg.Fingerprint).Scan(&target, &fp)
	if err != nil {
		return nil, fmt.Errorf("registering load %q: %w", l.cfg.LoadID, err)
	}
	if target != l.target.String() || fp != l.cfg.Fingerprint {
		return nil, fmt.Errorf("load ID %q was first used for a different load (target %s, other input or batch options): "+
			"rerun it with the same command, or choose a new --load-id", l.cfg.LoadID, target)
	}
	rows, err := l.pool.Query(ctx, `SELECT batch, rows, rejected, rejects FROM pgts.load_batch WHERE load_id = $1`, l.cfg.LoadID)
	if err != nil {
		return nil, fmt.Errorf("reading the ledger of load %q: %w", l.cfg.LoadID, err)
	}
	defer rows.Close()
	done := map[int64]ledgerEntry{}
	for rows.Next() {
		var seq int64
		var e ledgerEntry
		var rj []byte
		if err := rows.Scan(&seq, &e.rows, &e.rejected, &rj); err != nil {
			return nil, err
		}
		if len(rj) > 0 {
			if err := json.Unmarshal(rj, &e.rejects); err != nil {
				return nil, fmt.Errorf("ledger of load %q, batch %d: %w", l.cfg.LoadID, seq, err)
			}
		}
		done[seq] = e
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(done) > 0 {
		l.log.Info("resuming load", "load_id", l.cfg.LoadID, "batches_already_committed", len(done))
	}
	return done, nil
}

// recordBatch writes the batch's ledger row inside its transaction.
func (l *Loader) recordBatch(ctx context.Context, tx pgx.Tx, b *batch, loaded int64, rejects []Reject) error {
	var rj []byte
	if len(rejects) > 0 {
		var err error
		if rj, err = json.Marshal(rejects); err != nil {
			return err
		}
	}
	_, err := tx.Exec(ctx, `INSERT INTO pgts.load_batch (load_id, batch, rows, rejected, rejects) VALUES ($1, $2, $3, $4, $5)`,
		l.cfg.LoadID, b.seq, loaded, int64(len(rejects)), rj)
	return err
}

// committed checks the ledger for a batch whose COMMIT had an unknown
// outcome (the connection broke while it was in flight).
func (l *Loader) committed(ctx context.Context, seq int64) (bool, error) {
	var ok bool
	err := l.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pgts.load_batch WHERE load_id = $1 AND batch = $2)`, l.cfg.LoadID, seq).Scan(&ok)
	return ok, err
}

func (l *Loader) finishLedger(ctx context.Context) error {
	_, err := l.pool.Exec(ctx, `UPDATE pgts.load SET finished_at = now() WHERE load_id = $1 AND finished_at IS NULL`, l.cfg.LoadID)
	return err
}
