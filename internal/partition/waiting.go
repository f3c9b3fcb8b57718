package partition

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/pgts/pgts/internal/catalog"
	"github.com/pgts/pgts/internal/pg"
)

// The waiting partition: every series table has a DEFAULT partition,
// NAME_default, that takes the rows any SQL client writes (INSERT, COPY,
// INSERT … ON CONFLICT) for times whose partition does not exist yet. Its
// trigger refuses times outside the table's accepted window (catalog
// migration 8, pgts.refuse_outside_window), so a bogus year-2999 time is
// still refused at INSERT. The rows wait there until their partition is
// made: every partition creation moves the rows of its range in the
// transaction that attaches it (MoveFromDefault), and MoveWaiting makes the
// partitions of all waiting rows.

// DefaultName returns the name of the table's DEFAULT partition.
func DefaultName(table string) string { return table + "_default" }

// windowTrigger names the trigger of the DEFAULT partition.
const windowTrigger = "pgts_accept_window"

// microsExpr returns SQL for the value expr of the time column as numeric
// microseconds since the epoch (infinity stays infinite).
func microsExpr(tt TimeType, expr string) string {
	switch tt {
	case EpochSeconds:
		return "(" + expr + "::numeric * 1000000)"
	case EpochMillis:
		return "(" + expr + "::numeric * 1000)"
	case EpochMicros:
		return "(" + expr + "::numeric)"
	}
	// timestamp and date: the nominal seconds, i.e. read as UTC
	return "(extract(epoch FROM " + expr + ") * 1000000)"
}

// windowCondition returns SQL true when the time value expr is inside t's
// accepted window at now(), as Table.Window computes it (and
// pgts.accept_window, catalog migration 8): calendar arithmetic in UTC,
// the premade horizon aligned as Bounds aligns partitions. Only built-in
// functions of constants and now(), so per row it costs a few expression
// steps.
func windowCondition(t *Table, expr string) string {
	utc := "(now() AT TIME ZONE 'UTC')" // a timestamp: month and day arithmetic in UTC
	var lo, hi string                   // timestamps (UTC)
	past := t.AcceptPast
	if past == nil {
		past = t.Retention
	}
	if past != nil {
		lo = fmt.Sprintf("(%s - interval %s)", utc, pg.QuoteLiteral(past.String()))
	}
	switch {
	case t.AcceptFuture != nil:
		hi = fmt.Sprintf("(%s + interval %s)", utc, pg.QuoteLiteral(t.AcceptFuture.String()))
	case t.Interval.Kind() == Calendar:
		n := int64(t.Interval.Months)
		month := fmt.Sprintf("((extract(year FROM %s)::integer - 1970) * 12 + extract(month FROM %s)::integer - 1)", utc, utc)
		hi = fmt.Sprintf("(timestamp '1970-01-01' + make_interval(months => ((floor(%s::numeric / %d)::integer + %d) * %d)))", month, n, 1+t.Premake, n)
	default:
		d := int64(t.Interval.Days)*dayMicros + t.Interval.Micros
		origin := "1970-01-01"
		if d%weekMicros == 0 {
			origin = "1970-01-05"
		}
		hi = fmt.Sprintf("(date_bin(interval '%d microseconds', %s, timestamp '%s') + interval '%d microseconds')", d, utc, origin, d*int64(1+t.Premake))
	}
	var conds []string
	for _, b := range []struct {
		bound, op string
	}{{lo, ">="}, {hi, "<"}} {
		if b.bound == "" {
			continue
		}
		var v string
		switch t.TimeType {
		case Timestamptz:
			v = "(" + b.bound + " AT TIME ZONE 'UTC')"
		case Timestamp, Date:
			v = b.bound
		default: // bigint epoch: v*unit op bound ⇔ v op ceil(bound/unit)
			v = fmt.Sprintf("ceil(extract(epoch FROM %s) * %d)::bigint", b.bound, 1000000/t.TimeType.unit())
		}
		conds = append(conds, fmt.Sprintf("%s %s %s", expr, b.op, v))
	}
	if len(conds) == 0 {
		return "true"
	}
	return strings.Join(conds, " AND ")
}

// defaultOf returns the quoted, qualified DEFAULT partition of t and its
// unquoted name, or "" when t has none.
func defaultOf(ctx context.Context, db catalog.DB, t *Table) (qualified, name string, err error) {
	var schema, rel *string
	err = db.QueryRow(ctx, `SELECT n.nspname::text, c.relname::text FROM pg_partitioned_table p
		JOIN pg_class c ON c.oid = p.partdefid JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE p.partrelid = to_regclass($1)`, t.Qualified()).Scan(&schema, &rel)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", "", nil
	}
	if err != nil {
		return "", "", fmt.Errorf("looking up the default partition of %s: %w", t, err)
	}
	return pg.QuoteQualified(*schema, *rel), *rel, nil
}

// EnsureDefault gives t its DEFAULT partition and the partition's window
// trigger when it lacks them (tables made before pgts had them, adopted
// tables). The partition is built on its own and attached, which takes
// only a SHARE UPDATE EXCLUSIVE lock on the parent.
func (m *Manager) EnsureDefault(ctx context.Context, t *Table) error {
	return pgx.BeginFunc(ctx, m.db, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, catalog.LockKey, t.String()); err != nil {
			return fmt.Errorf("locking %s: %w", t, err)
		}
		def, name, err := defaultOf(ctx, tx, t)
		if err != nil {
			return err
		}
		if def == "" {
			name = DefaultName(t.Name)
			def = pg.QuoteQualified(t.Schema, name)
			ddl := fmt.Sprintf("CREATE TABLE %s (LIKE %s INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE INCLUDING COMMENTS);\n"+
				"COMMENT ON TABLE %s IS %s;\n"+
				"ALTER TABLE %s ATTACH PARTITION %s DEFAULT",
				def, t.Qualified(), def,
				pg.QuoteLiteral("Rows of "+t.String()+" whose partition does not exist yet; pgts maintain (and every pgts load) moves them into it."),
				t.Qualified(), def)
			if _, err := tx.Exec(ctx, ddl, pgx.QueryExecModeSimpleProtocol); err != nil {
				return fmt.Errorf("creating the default partition of %s: %w", t, err)
			}
		}
		// The trigger's condition spells the table's window in constant
		// expressions of now(), evaluated without a function call or a
		// catalog read per row; the comment records it, so a changed
		// window replaces the trigger.
		cond := windowCondition(t, "NEW."+pg.QuoteIdent(t.TimeColumn))
		var comment *string
		err = tx.QueryRow(ctx, `SELECT obj_description(oid, 'pg_trigger') FROM pg_trigger WHERE tgrelid = to_regclass($1) AND tgname = $2`, def, windowTrigger).Scan(&comment)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("reading the window trigger of %s: %w", name, err)
		}
		if err == nil {
			if comment != nil && *comment == cond {
				return nil
			}
			if _, err := tx.Exec(ctx, fmt.Sprintf("DROP TRIGGER %s ON %s", pg.QuoteIdent(windowTrigger), def)); err != nil {
				return fmt.Errorf("replacing the window trigger of %s: %w", name, err)
			}
		}
		trig := fmt.Sprintf("CREATE TRIGGER %s BEFORE INSERT ON %s FOR EACH ROW WHEN (NOT (%s)) "+
			"EXECUTE FUNCTION pgts.refuse_outside_window(%s, %s, %s);\nCOMMENT ON TRIGGER %s ON %s IS %s",
			pg.QuoteIdent(windowTrigger), def, cond,
			pg.QuoteLiteral(t.Schema), pg.QuoteLiteral(t.Name), pg.QuoteLiteral(t.TimeColumn),
			pg.QuoteIdent(windowTrigger), def, pg.QuoteLiteral(cond))
		if _, err := tx.Exec(ctx, trig, pgx.QueryExecModeSimpleProtocol); err != nil {
			return fmt.Errorf("creating the window trigger of %s: %w", name, err)
		}
		return nil
	})
}

// ShareLock says how an attach waits for the SHARE lock on the parent
// (see lockDefault).
type ShareLock struct {
	// Wait bounds each attempt: writers into the parent queue behind the
	// request for at most this long. 0 asks with NOWAIT: never queued,
	// never waiting.
	Wait time.Duration
	// GiveUp: after attempts for this long (a writer keeps a transaction
	// open on the parent), attach without the lock, or, with Defer, give
	// up the attach with ErrWritersBusy.
	GiveUp time.Duration
	Defer  bool
}

// Policies of the attaches: partitions loads and premake need are made
// even when a writer keeps a transaction open; moving waiting rows, whose
// range writers are likelier to be writing, waits for a later pass
// instead; the bulk path never waits for a writer's lock.
var (
	createShare = ShareLock{Wait: 200 * time.Millisecond, GiveUp: 10 * time.Second}
	moveShare   = ShareLock{Wait: 200 * time.Millisecond, GiveUp: 5 * time.Second, Defer: true}
	// BulkShare is the policy of the bulk path's attach (copyload).
	BulkShare = ShareLock{GiveUp: time.Second}
)

// ErrWritersBusy is returned when an attach gave up waiting for writers
// into the parent (ShareLock.Defer).
var ErrWritersBusy = errors.New("writers into the table kept it busy; the attach waits for the next pass")

// MoveFromDefault moves the rows of [lo, hi) waiting in t's DEFAULT
// partition into leaf (a quoted, qualified table not attached yet), in tx,
// which must hold the table's advisory lock and then attach leaf. It locks
// as lockDefault does, with the policy share, so no row of the range can
// arrive before the attach. It returns the rows moved; none when t has no
// DEFAULT partition. log may be nil.
func MoveFromDefault(ctx context.Context, tx pgx.Tx, t *Table, leaf string, lo, hi int64, share ShareLock, log *slog.Logger) (int64, error) {
	def, err := lockDefault(ctx, tx, t, share, log)
	if err != nil || def == "" {
		return 0, err
	}
	return moveRows(ctx, tx, t, def, leaf, lo, hi)
}

// moveRows moves the rows of [lo, hi) from def, locked, into leaf.
func moveRows(ctx context.Context, tx pgx.Tx, t *Table, def, leaf string, lo, hi int64) (int64, error) {
	if def == "" {
		return 0, nil
	}
	var cols string
	if err := tx.QueryRow(ctx, `SELECT coalesce(string_agg(quote_ident(attname), ', ' ORDER BY attnum), '') FROM pg_attribute
		WHERE attrelid = to_regclass($1) AND attnum > 0 AND NOT attisdropped AND attgenerated = ''`, t.Qualified()).Scan(&cols); err != nil {
		return 0, fmt.Errorf("reading the columns of %s: %w", t, err)
	}
	col := pg.QuoteIdent(t.TimeColumn)
	tag, err := tx.Exec(ctx, fmt.Sprintf(`WITH moved AS (DELETE FROM ONLY %s WHERE %s >= %s AND %s < %s RETURNING %s)
		INSERT INTO %s (%s) OVERRIDING SYSTEM VALUE SELECT %s FROM moved`,
		def, col, BoundLiteral(t.TimeType, lo), col, BoundLiteral(t.TimeType, hi), cols, leaf, cols, cols))
	if err != nil {
		return 0, fmt.Errorf("moving the waiting rows of %s to %s into %s: %w", FormatMicros(lo), FormatMicros(hi), leaf, err)
	}
	return tag.RowsAffected(), nil
}

// lockDefault prepares tx to attach a partition to t when t has a DEFAULT
// partition, which it returns ("" when none): a SHARE lock on the parent
// (with the policy share), then an ACCESS EXCLUSIVE lock on the DEFAULT
// partition.
//
// The SHARE lock (which INSERT and COPY into the parent wait for; COPY
// into a partition, as pgts load does, and readers do not) is what makes
// the attach safe for any writer: a statement that routed a row to the
// DEFAULT partition with the partitions it saw before the attach, and then
// waited for the DEFAULT partition's lock, fails once the attach commits
// ("new row for relation NAME_default violates partition constraint",
// PostgreSQL re-checks a row routed to the default partition). Holding
// SHARE from before the attach to the commit makes such a statement wait
// before it routes, so it sees the new partition. It is asked for in
// attempts bounded by share.Wait, so that a writer's open transaction
// queues the other writers behind the request for no longer than that.
// Locks are taken parent first, as writers take them.
func lockDefault(ctx context.Context, tx pgx.Tx, t *Table, share ShareLock, log *slog.Logger) (string, error) {
	def, _, err := defaultOf(ctx, tx, t)
	if err != nil || def == "" {
		return "", err
	}
	lock := "LOCK TABLE ONLY " + t.Qualified() + " IN SHARE MODE NOWAIT"
	if share.Wait > 0 {
		lock = fmt.Sprintf("SET LOCAL lock_timeout = '%dms'; LOCK TABLE ONLY %s IN SHARE MODE; SET LOCAL lock_timeout TO DEFAULT", share.Wait.Milliseconds(), t.Qualified())
	}
	deadline := time.Now().Add(share.GiveUp)
	for attempt := 0; ; attempt++ {
		if _, err := tx.Exec(ctx, "SAVEPOINT pgts_share"); err != nil {
			return "", fmt.Errorf("locking %s: %w", t, err)
		}
		_, err := tx.Exec(ctx, lock, pgx.QueryExecModeSimpleProtocol)
		if err == nil {
			if _, err := tx.Exec(ctx, "RELEASE SAVEPOINT pgts_share"); err != nil {
				return "", fmt.Errorf("locking %s: %w", t, err)
			}
			break
		}
		if pg.SQLState(err) != "55P03" { // lock_not_available
			return "", fmt.Errorf("locking %s: %w", t, err)
		}
		if _, err := tx.Exec(ctx, "ROLLBACK TO SAVEPOINT pgts_share"); err != nil {
			return "", fmt.Errorf("locking %s: %w", t, err)
		}
		if time.Now().After(deadline) {
			if share.Defer {
				return "", fmt.Errorf("attaching a partition to %s: %w", t, ErrWritersBusy)
			}
			if log != nil {
				log.Warn("attaching a partition while a transaction writing into the parent stays open: an INSERT of a row of the new partition's range racing the attach may fail",
					"table", t.String(), "waited", share.GiveUp)
			}
			break
		}
		pause := time.NewTimer(min(10*time.Millisecond<<min(attempt, 5), 200*time.Millisecond))
		select {
		case <-ctx.Done():
			pause.Stop()
			return "", ctx.Err()
		case <-pause.C:
		}
	}
	if _, err := tx.Exec(ctx, "LOCK TABLE "+def+" IN ACCESS EXCLUSIVE MODE"); err != nil {
		return "", fmt.Errorf("locking %s: %w", def, err)
	}
	return def, nil
}

// Waiting counts the rows of t waiting in its DEFAULT partition for their
// partition to be made (0 when it has no DEFAULT partition).
func (m *Manager) Waiting(ctx context.Context, t *Table) (int64, error) {
	def, _, err := defaultOf(ctx, m.db, t)
	if err != nil || def == "" {
		return 0, err
	}
	var n int64
	if err := m.db.QueryRow(ctx, "SELECT count(*) FROM ONLY "+def).Scan(&n); err != nil {
		return 0, fmt.Errorf("counting the rows waiting in %s: %w", def, err)
	}
	return n, nil
}

// oldestWaiting returns the earliest time waiting in t's DEFAULT
// partition, and false when none waits.
func (m *Manager) oldestWaiting(ctx context.Context, t *Table) (int64, bool, error) {
	def, _, err := defaultOf(ctx, m.db, t)
	if err != nil || def == "" {
		return 0, false, err
	}
	var v *string
	q := fmt.Sprintf("SELECT %s::text FROM (SELECT min(%s) AS t FROM ONLY %s) x", microsExpr(t.TimeType, "x.t"), pg.QuoteIdent(t.TimeColumn), def)
	if err := m.db.QueryRow(ctx, q).Scan(&v); err != nil {
		return 0, false, fmt.Errorf("reading the oldest row waiting in %s: %w", def, err)
	}
	if v == nil {
		return 0, false, nil
	}
	s := *v
	if i := strings.IndexByte(s, '.'); i >= 0 {
		s = s[:i] // sub-microsecond digits of a numeric: the time's partition is the same
	}
	var micros int64
	if _, err := fmt.Sscan(s, &micros); err != nil {
		return 0, false, fmt.Errorf("the oldest row waiting in %s has time %s (µs since the epoch), which pgts cannot place: %w", def, *v, ErrOutOfRange)
	}
	return micros, true, nil
}

// MoveWaiting makes the partitions of the rows waiting in t's DEFAULT
// partition, oldest first, each creation moving its range's rows in the
// transaction that attaches it, until none waits. It returns the
// partitions created and the rows moved.
func (m *Manager) MoveWaiting(ctx context.Context, t *Table) (created int, moved int64, err error) {
	start := time.Now()
	prev, stuck := MinMicros-1, false
	for {
		ts, ok, err := m.oldestWaiting(ctx, t)
		if err != nil || !ok {
			if moved > 0 {
				m.log.Info("moved waiting rows into their partitions", "table", t.String(), "rows", moved, "partitions", created, "took", time.Since(start).Round(time.Millisecond))
			}
			return created, moved, err
		}
		lo, _, err := Bounds(t.Interval, ts)
		if err != nil {
			return created, moved, fmt.Errorf("moving the waiting rows of %s: %w", t, err)
		}
		// Writers may add older rows while this runs: the oldest is
		// looked up again after each partition. The same partition twice
		// with nothing done means its rows wait though it exists, which
		// PostgreSQL does not allow: stop rather than loop.
		if lo == prev && stuck {
			return created, moved, fmt.Errorf("moving the waiting rows of %s: rows of %s still wait, but their partition exists", t, FormatMicros(lo))
		}
		made, n, err := m.create(ctx, t, lo, moveShare)
		if errors.Is(err, ErrWritersBusy) {
			m.log.Warn("moving waiting rows deferred to the next pass", "table", t.String(), "partition_from", FormatMicros(lo), "err", err)
			return created, moved, nil
		}
		if err != nil {
			return created, moved, err
		}
		stuck = lo == prev || (!made && n == 0)
		prev = lo
		m.markKnown(t, lo)
		if made {
			created++
		}
		moved += n
	}
}

// markKnown records that the partition starting at lo exists.
func (m *Manager) markKnown(t *Table, lo int64) {
	key := t.String()
	m.mu.Lock()
	if m.known[key] != nil {
		m.known[key][lo] = true
	}
	m.mu.Unlock()
}

// deleteExpiredWaiting deletes the rows waiting in t's DEFAULT partition
// whose partition would end at or before the retention cutoff: the rows
// retention drops from partitions that exist. It returns how many.
func (m *Manager) deleteExpiredWaiting(ctx context.Context, t *Table) (int64, error) {
	cutoff, ok := t.RetentionCutoff(m.now())
	if !ok {
		return 0, nil
	}
	def, _, err := defaultOf(ctx, m.db, t)
	if err != nil || def == "" {
		return 0, err
	}
	// A partition holding the cutoff is not expired; those before it are.
	lo, _, err := Bounds(t.Interval, min(max(cutoff, MinMicros), MaxMicros-1))
	if err != nil {
		return 0, err
	}
	tag, err := m.db.Exec(ctx, fmt.Sprintf("DELETE FROM ONLY %s WHERE %s < %s", def, pg.QuoteIdent(t.TimeColumn), BoundLiteral(t.TimeType, lo)))
	if err != nil {
		return 0, fmt.Errorf("deleting expired waiting rows of %s: %w", t, err)
	}
	if n := tag.RowsAffected(); n > 0 {
		m.log.Info("deleted expired waiting rows", "table", t.String(), "rows", n, "before", FormatMicros(lo))
	}
	return tag.RowsAffected(), nil
}
