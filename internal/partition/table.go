package partition

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/pgts/pgts/internal/catalog"
	"github.com/pgts/pgts/internal/pg"
)

// Table is a series table as recorded in pgts.series_table.
type Table struct {
	Schema, Name   string
	TimeColumn     string
	TimeType       TimeType
	Interval       Interval
	HashColumn     string // "" when not hash sub-partitioned
	HashPartitions int
	Premake        int
	Retention      *Interval // nil: keep everything
	AcceptFuture   *Interval // nil: up to the end of the premade partitions
	AcceptPast     *Interval // nil: the retention, or unlimited
	CreatedAt      time.Time
}

// Qualified returns the quoted schema.name.
func (t *Table) Qualified() string { return pg.QuoteQualified(t.Schema, t.Name) }

// String returns schema.name unquoted, for messages.
func (t *Table) String() string { return t.Schema + "." + t.Name }

// ErrOutsideWindow is wrapped by errors for times outside a table's
// accepted window.
var ErrOutsideWindow = errors.New("outside the table's accepted time window")

// Window returns the accepted times [lo, hi) at now, in micros. Rows
// outside it are rejected by the loader with a reason, and never create a
// partition: a single bogus year-2999 timestamp must not create thousands.
func (t *Table) Window(now time.Time) (lo, hi int64) {
	lo, hi = MinMicros, MaxMicros
	past := t.AcceptPast
	if past == nil {
		past = t.Retention
	}
	if past != nil {
		lo = max(lo, shift(now, *past, -1))
	}
	if t.AcceptFuture != nil {
		hi = min(hi, shift(now, *t.AcceptFuture, 1))
	} else if _, h, err := Bounds(t.Interval, now.UnixMicro()); err == nil {
		for i := 0; i < t.Premake; i++ {
			h = Next(t.Interval, h)
		}
		hi = min(hi, h)
	}
	return lo, hi
}

// CheckTime returns an error wrapping ErrOutsideWindow when micros is not
// accepted at now.
func (t *Table) CheckTime(micros int64, now time.Time) error {
	lo, hi := t.Window(now)
	if micros < lo {
		return fmt.Errorf("time %s is before %s, the oldest accepted (%w)", FormatMicros(micros), FormatMicros(lo), ErrOutsideWindow)
	}
	if micros >= hi {
		return fmt.Errorf("time %s is at or after %s, the newest accepted (%w)", FormatMicros(micros), FormatMicros(hi), ErrOutsideWindow)
	}
	return nil
}

// FormatMicros renders micros as an RFC 3339 UTC time for messages.
func FormatMicros(m int64) string {
	return time.UnixMicro(m).UTC().Format("2006-01-02T15:04:05.999999Z")
}

// shift adds sign*iv to now, calendar-aware for months, clamped to range.
func shift(now time.Time, iv Interval, sign int) int64 {
	years := int(iv.Months) / 12
	if years > 10000 {
		if sign < 0 {
			return MinMicros
		}
		return MaxMicros
	}
	t := now.UTC().AddDate(0, sign*int(iv.Months), sign*int(iv.Days))
	m := t.UnixMicro() + int64(sign)*iv.Micros
	return min(max(m, MinMicros), MaxMicros)
}

// NotSeriesTableError says a table is not a pgts series table. Stale is
// set when the catalog listed it but the table no longer matched (the
// entry has been removed).
type NotSeriesTableError struct {
	Schema, Name string
	Stale        *StaleEntry
}

func (e *NotSeriesTableError) Error() string {
	if e.Stale != nil {
		return fmt.Sprintf("%s.%s is not a pgts series table: it %s; %s", e.Schema, e.Name, e.Stale.Reason, staleNote(e.Stale))
	}
	return fmt.Sprintf("%s.%s is not a pgts series table (see pgts table list)", e.Schema, e.Name)
}

// scanTable scans the columns of tableColumns, then into extra.
func scanTable(row pgx.Row, extra ...any) (*Table, error) {
	var t Table
	var timeType string
	var hashCol *string
	var hashParts *int32
	var premake int32
	var ret, fut, past pgtype.Interval
	dest := []any{&t.Schema, &t.Name, &t.TimeColumn, &timeType, &t.Interval.Months, &t.Interval.Days, &t.Interval.Micros,
		&hashCol, &hashParts, &premake, &ret, &fut, &past, &t.CreatedAt}
	err := row.Scan(append(dest, extra...)...)
	if err != nil {
		return nil, err
	}
	tt, err := timeTypeFromCatalog(timeType)
	if err != nil {
		return nil, fmt.Errorf("series table %s.%s: %w", t.Schema, t.Name, err)
	}
	t.TimeType = tt
	if hashCol != nil && hashParts != nil {
		t.HashColumn, t.HashPartitions = *hashCol, int(*hashParts)
	}
	t.Premake = int(premake)
	t.Retention, t.AcceptFuture, t.AcceptPast = fromPG(ret), fromPG(fut), fromPG(past)
	return &t, nil
}

func fromPG(iv pgtype.Interval) *Interval {
	if !iv.Valid {
		return nil
	}
	return &Interval{Months: iv.Months, Days: iv.Days, Micros: iv.Microseconds}
}

func toPG(iv *Interval) pgtype.Interval {
	if iv == nil {
		return pgtype.Interval{}
	}
	return pgtype.Interval{Months: iv.Months, Days: iv.Days, Microseconds: iv.Micros, Valid: true}
}

// catalogNames spell TimeType values in pgts.series_table.time_type.
var catalogNames = map[TimeType]string{
	Timestamptz:  "timestamptz",
	Timestamp:    "timestamp",
	Date:         "date",
	EpochSeconds: "epoch_s",
	EpochMillis:  "epoch_ms",
	EpochMicros:  "epoch_us",
}

func timeTypeToCatalog(tt TimeType) string { return catalogNames[tt] }

func timeTypeFromCatalog(s string) (TimeType, error) {
	for tt, n := range catalogNames {
		if n == s {
			return tt, nil
		}
	}
	return 0, fmt.Errorf("unknown time type %q in the catalog", s)
}

// ParseInterval asks the server to parse an interval, so that every
// spelling PostgreSQL accepts is accepted, and nonsense gets a clear error.
func ParseInterval(ctx context.Context, db catalog.DB, text string) (Interval, error) {
	var iv pgtype.Interval
	if err := db.QueryRow(ctx, `SELECT $1::text::interval`, text).Scan(&iv); err != nil {
		if pg.SQLState(err) != "" {
			return Interval{}, fmt.Errorf("%q is not a PostgreSQL interval (examples: \"1 hour\", \"1 day\", \"1 week\", \"1 month\", \"90 days\")", text)
		}
		return Interval{}, fmt.Errorf("parsing interval %q: %w", text, err)
	}
	return Interval{Months: iv.Months, Days: iv.Days, Micros: iv.Microseconds}, nil
}
