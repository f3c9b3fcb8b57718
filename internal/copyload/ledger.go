package copyload

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgts/pgts/internal/catalog"
)

// ledgerEntry is a committed batch of an earlier run.
type ledgerEntry struct {
	rows, rejected int64
	rejects        []Reject
	digest         []byte // nil for batches committed before digests were kept
	first, last    int64  // input lines of its first and last row
}

// ErrLoadRunning is returned when another run holds the load ID's lock.
var ErrLoadRunning = errors.New("the load is running")

// fingerprint describes what decides the batch boundaries of a load: a
// resume must cut its input into the same batches to compare them with
// the ledger. Names, sizes and times of the inputs are not part of it: a
// resume is checked against the content of the batches (their digests).
func (l *Loader) fingerprint() string {
	names := make([]string, len(l.cols))
	for i, c := range l.cols {
		names[i] = c.Name
	}
	format := "text"
	if l.binary {
		format = "binary"
	}
	route := "parent"
	if l.cfg.Route == RouteLeaf {
		route = "leaf"
	}
	fp := fmt.Sprintf("target=%s columns=%s copy=%s route=%s batch_rows=%d batch_bytes=%d open_batches=%d input=%s",
		l.target, strings.Join(names, ","), format, route, l.cfg.BatchRows, l.cfg.BatchBytes, l.cfg.MaxOpenBatches, l.cfg.Fingerprint)
	if l.cfg.OnConflict != ConflictReject {
		fp += " on_conflict=" + l.cfg.OnConflict.String()
	}
	if l.cfg.Bulk {
		// The bulk path also cuts a batch when its partition closes
		// (bulk.go). Not written otherwise, so that the ledgers of loads
		// made before it was written still match.
		fp += fmt.Sprintf(" bulk=on bulk_margin=%s", l.cfg.BulkMargin)
	}
	return fp
}

// openLedger takes the load ID's lock (one run at a time), registers the
// load (or checks that a rerun cuts its input into the same batches) and
// reads the batches already committed.
func (l *Loader) openLedger(ctx context.Context) (map[int64]ledgerEntry, error) {
	if err := catalog.Migrate(ctx, l.pool); err != nil {
		return nil, err
	}
	if err := l.lockLoad(ctx); err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	fp := l.fingerprint()
	var oldFP string
	err := l.pool.QueryRow(ctx, `INSERT INTO pgts.load AS l (load_id, target, fingerprint, run_pid, run_host, run_started_at)
		VALUES ($1, $2, $3, $4, $5, now())
		ON CONFLICT (load_id) DO UPDATE SET run_pid = EXCLUDED.run_pid, run_host = EXCLUDED.run_host, run_started_at = now()
		RETURNING l.fingerprint, l.started_at`, l.cfg.LoadID, l.target.String(), fp, os.Getpid(), host).Scan(&oldFP, &l.firstStart)
	if err != nil {
		return nil, fmt.Errorf("registering load %q: %w", l.cfg.LoadID, err)
	}
	if oldFP != fp {
		return nil, fmt.Errorf("load ID %q was first used with other batch options, so its batches cannot be matched:\n  first run: %s\n  this run:  %s\n"+
			"rerun with the first run's table, columns, format and batch options; a new --load-id would load everything again, "+
			"including the rows the first run committed", l.cfg.LoadID, oldFP, fp)
	}
	rows, err := l.pool.Query(ctx, `SELECT batch, rows, rejected, rejects, digest, coalesce(first_line, 0), coalesce(last_line, 0)
		FROM pgts.load_batch WHERE load_id = $1`, l.cfg.LoadID)
	if err != nil {
		return nil, fmt.Errorf("reading the ledger of load %q: %w", l.cfg.LoadID, err)
	}
	defer rows.Close()
	done := map[int64]ledgerEntry{}
	for rows.Next() {
		var seq int64
		var e ledgerEntry
		var rj []byte
		if err := rows.Scan(&seq, &e.rows, &e.rejected, &rj, &e.digest, &e.first, &e.last); err != nil {
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

// lockLoad takes the load ID's session advisory lock on a connection of
// its own (outside the pool, so that the workers keep theirs), held until
// unlockLoad. A run that finds it taken reports where the holder runs.
func (l *Loader) lockLoad(ctx context.Context) error {
	conn, err := pgx.ConnectConfig(ctx, l.pool.Config().ConnConfig.Copy())
	if err != nil {
		return fmt.Errorf("connecting to lock load %q: %w", l.cfg.LoadID, err)
	}
	try := func() (bool, error) {
		var ok bool
		err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1, hashtext($2))`, catalog.LoadLockKey, l.cfg.LoadID).Scan(&ok)
		return ok, err
	}
	ok, err := try()
	var pid *int32
	var host *string
	var since *time.Time
	if err == nil && !ok {
		_ = l.pool.QueryRow(ctx, `SELECT run_pid, run_host, run_started_at FROM pgts.load WHERE load_id = $1`, l.cfg.LoadID).Scan(&pid, &host, &since)
		// A run killed on this host a moment ago still holds the lock
		// until the server notices its closed socket and ends its
		// session: wait for that (bounded) rather than refuse a rerun.
		for deadline := time.Now().Add(15 * time.Second); err == nil && !ok && holderGone(pid, host) && time.Now().Before(deadline); {
			select {
			case <-ctx.Done():
				err = ctx.Err()
			case <-time.After(50 * time.Millisecond):
				ok, err = try()
			}
		}
	}
	if err != nil {
		conn.Close(context.Background()) //nolint:errcheck // reporting the first error
		return fmt.Errorf("locking load %q: %w", l.cfg.LoadID, err)
	}
	if !ok {
		conn.Close(context.Background()) //nolint:errcheck // nothing held
		where := "in another process"
		if pid != nil && host != nil && since != nil {
			where = fmt.Sprintf("as pid %d on host %s since %s", *pid, *host, since.UTC().Format(time.RFC3339))
		}
		return fmt.Errorf("load %q: %w %s: wait for it to end (or stop it), then rerun to resume", l.cfg.LoadID, ErrLoadRunning, where)
	}
	l.lockConn = conn
	return nil
}

// holderGone reports that the run recorded as holding a load's lock ran
// on this host as a process that no longer exists.
func holderGone(pid *int32, host *string) bool {
	if pid == nil || host == nil || *pid <= 0 {
		return false
	}
	me, err := os.Hostname()
	if err != nil || me != *host {
		return false
	}
	return syscall.Kill(int(*pid), 0) == syscall.ESRCH
}

// unlockLoad releases the lock, then ends its session. The explicit
// unlock is done when it returns; a closed session's locks are released
// only when its server process has exited, after Close has returned, and a
// rerun started at once could find the lock still held.
func (l *Loader) unlockLoad() {
	if l.lockConn != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		//nolint:errcheck // on failure, closing the session releases the lock
		l.lockConn.Exec(ctx, `SELECT pg_advisory_unlock($1, hashtext($2))`, catalog.LoadLockKey, l.cfg.LoadID)
		l.lockConn.Close(ctx) //nolint:errcheck // the lock is released either way
		l.lockConn = nil
	}
}

// batchDigest is the SHA-256 of what the batch sends: its target table
// and its encoded rows. Computed only for loads with a load ID, by the
// worker (in parallel, not on the router's goroutine), or by the router
// for a batch it skips; BenchmarkBatchDigest measures it.
func batchDigest(b *batch) []byte {
	h := sha256.New()
	h.Write([]byte(b.table))
	h.Write([]byte{0})
	h.Write(b.enc.Bytes())
	return h.Sum(nil)
}

// checkSkipped compares batch b of this run with the committed entry e of
// the same number: a resume must read the same rows.
func (l *Loader) checkSkipped(b *batch, e ledgerEntry) error {
	same := int64(b.rows()) == e.rows+e.rejected
	if same && e.digest != nil {
		same = bytes.Equal(batchDigest(b), e.digest)
	}
	if same {
		return nil
	}
	was := ""
	if e.first > 0 {
		was = fmt.Sprintf("lines %d-%d, ", e.first, e.last)
	}
	return fmt.Errorf("load %q: batch %d (%s) differs from the batch committed under this load ID (%s%d rows): "+
		"the input is not the one the load started with; a load resumes only from the same rows in the same order. "+
		"Load other data under a new --load-id", l.cfg.LoadID, b.seq, l.batchLines(b), was, e.rows+e.rejected)
}

// batchLines names the input lines of a batch: "stdin lines 1-10".
func (l *Loader) batchLines(b *batch) string {
	if len(b.lines) == 0 {
		return "no rows"
	}
	src := ""
	if int(b.srcs[0]) < len(l.sources) {
		src = l.sources[b.srcs[0]] + " "
	}
	return fmt.Sprintf("%slines %d-%d", src, b.lines[0], b.lines[len(b.lines)-1])
}

// recordBatch writes the batch's ledger row inside its transaction.
func (l *Loader) recordBatch(ctx context.Context, tx pgx.Tx, b *batch, loaded int64, rejects []Reject) error {
	args, err := l.ledgerRow(b, loaded, rejects)
	if err != nil {
		return err
	}
	_, err = tx.Exec(ctx, insertLedgerRow, args...)
	return err
}

// recordUnit records the ledger rows of a bulk unit's batches, all
// loaded, in one round trip.
func (l *Loader) recordUnit(ctx context.Context, tx pgx.Tx, batches []*batch) error {
	var q pgx.Batch
	for _, b := range batches {
		args, err := l.ledgerRow(b, int64(b.rows()), nil)
		if err != nil {
			return err
		}
		q.Queue(insertLedgerRow, args...)
	}
	return tx.SendBatch(ctx, &q).Close()
}

const insertLedgerRow = `INSERT INTO pgts.load_batch (load_id, batch, rows, rejected, rejects, digest, first_line, last_line)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`

// ledgerRow is the arguments of insertLedgerRow for batch b.
func (l *Loader) ledgerRow(b *batch, loaded int64, rejects []Reject) ([]any, error) {
	var rj []byte
	if len(rejects) > 0 {
		var err error
		if rj, err = json.Marshal(rejects); err != nil {
			return nil, err
		}
	}
	var first, last int64
	if n := len(b.lines); n > 0 {
		first, last = b.lines[0], b.lines[n-1]
	}
	return []any{l.cfg.LoadID, b.seq, loaded, int64(len(rejects)), rj, b.digest, first, last}, nil
}

// committed checks the ledger for a batch whose COMMIT had an unknown
// outcome (the connection broke while it was in flight).
func (l *Loader) committed(ctx context.Context, seq int64) (bool, error) {
	var ok bool
	err := l.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pgts.load_batch WHERE load_id = $1 AND batch = $2)`, l.cfg.LoadID, seq).Scan(&ok)
	return ok, err
}

func (l *Loader) finishLedger(ctx context.Context, forget bool) error {
	if forget {
		// A made-up ID no one will rerun: the ledger served its run.
		_, err := l.pool.Exec(ctx, `DELETE FROM pgts.load WHERE load_id = $1`, l.cfg.LoadID)
		return err
	}
	_, err := l.pool.Exec(ctx, `UPDATE pgts.load SET finished_at = now() WHERE load_id = $1 AND finished_at IS NULL`, l.cfg.LoadID)
	return err
}
