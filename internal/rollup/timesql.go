package rollup

import (
	"fmt"
	"strconv"

	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/pg"
)

// timeSQL writes the SQL expressions a rollup needs for its time type and
// bucket width. Every expression gives the same answer in every session
// (time zone, DateStyle): buckets of timestamptz are on UTC's clock, as
// pgts.time_bucket's are without a zone.
type timeSQL struct {
	tt    partition.TimeType
	width partition.Interval
	units int64 // the width in the column's own unit, for the epoch types
}

const (
	dayMicros    = 86_400_000_000
	secondMicros = 1_000_000
)

// unitMicros is how many micros one step of an epoch column is.
func unitMicros(tt partition.TimeType) int64 {
	switch tt {
	case partition.EpochSeconds:
		return secondMicros
	case partition.EpochMillis:
		return 1000
	}
	return 1
}

func isEpoch(tt partition.TimeType) bool {
	return tt == partition.EpochSeconds || tt == partition.EpochMillis || tt == partition.EpochMicros
}

func newTimeSQL(tt partition.TimeType, width partition.Interval) (timeSQL, error) {
	ts := timeSQL{tt: tt, width: width}
	if width.Months < 0 || width.Days < 0 || width.Micros < 0 || width == (partition.Interval{}) {
		return ts, fmt.Errorf("bucket width %q must be positive", width.Human())
	}
	switch {
	case isEpoch(tt):
		if width.Months != 0 {
			return ts, fmt.Errorf("a %s column cannot have buckets of months or years (%q): give days, hours, minutes or seconds", tt, width.Human())
		}
		d := int64(width.Days)*dayMicros + width.Micros
		if d%unitMicros(tt) != 0 {
			return ts, fmt.Errorf("bucket width %q is not a whole number of the column's units (%s)", width.Human(), tt)
		}
		ts.units = d / unitMicros(tt)
	case tt == partition.Date:
		if width.Micros != 0 {
			return ts, fmt.Errorf("a date column takes buckets of whole days, weeks, months or years, not %q", width.Human())
		}
	case tt == partition.Timestamptz || tt == partition.Timestamp:
	default:
		return ts, fmt.Errorf("unsupported time type %v", tt)
	}
	return ts, nil
}

func (ts timeSQL) widthLit() string { return pg.QuoteLiteral(ts.width.String()) + "::interval" }

// bucket is the start of the bucket holding x, in x's type.
func (ts timeSQL) bucket(x string) string {
	if isEpoch(ts.tt) {
		return fmt.Sprintf("pgts.time_bucket(%d::bigint, %s)", ts.units, x)
	}
	return fmt.Sprintf("pgts.time_bucket(%s, %s)", ts.widthLit(), x)
}

// us converts x, of the time type, to micros since the epoch (bigint).
func (ts timeSQL) us(x string) string {
	switch ts.tt {
	case partition.Timestamptz, partition.Timestamp:
		return fmt.Sprintf("(extract(epoch FROM %s) * 1000000)::bigint", x)
	case partition.Date:
		return fmt.Sprintf("((%s - date '1970-01-01')::bigint * %d)", x, int64(dayMicros))
	}
	return fmt.Sprintf("(%s::bigint * %d)", x, unitMicros(ts.tt))
}

// from converts p, a bigint of micros since the epoch, to the time type.
func (ts timeSQL) from(p string) string {
	switch ts.tt {
	case partition.Timestamptz:
		return fmt.Sprintf("(timestamptz '1970-01-01 00:00:00+00' + (%s)::bigint * interval '1 microsecond')", p)
	case partition.Timestamp:
		return fmt.Sprintf("(timestamp '1970-01-01 00:00:00' + (%s)::bigint * interval '1 microsecond')", p)
	case partition.Date:
		return fmt.Sprintf("(date '1970-01-01' + ((%s)::bigint / %d)::integer)", p, int64(dayMicros))
	}
	return fmt.Sprintf("((%s)::bigint / %d)", p, unitMicros(ts.tt))
}

// step is x plus k bucket widths (the end of x's bucket for k = 1), in
// x's type; months are added on UTC's calendar.
func (ts timeSQL) step(x string, k int) string {
	switch ts.tt {
	case partition.Timestamptz:
		return fmt.Sprintf("((%s AT TIME ZONE 'UTC') + %s * %d) AT TIME ZONE 'UTC'", x, ts.widthLit(), k)
	case partition.Timestamp:
		return fmt.Sprintf("(%s + %s * %d)", x, ts.widthLit(), k)
	case partition.Date:
		return fmt.Sprintf("(%s + %s * %d)::date", x, ts.widthLit(), k)
	}
	return fmt.Sprintf("(%s + %s)", x, strconv.FormatInt(ts.units*int64(k), 10))
}

// timeTypeNames spell the time types in pgts.rollup.time_type.
var timeTypeNames = map[partition.TimeType]string{
	partition.Timestamptz: "timestamptz", partition.Timestamp: "timestamp", partition.Date: "date",
	partition.EpochSeconds: "epoch_s", partition.EpochMillis: "epoch_ms", partition.EpochMicros: "epoch_us",
}

func parseTimeType(s string) (partition.TimeType, error) {
	for tt, n := range timeTypeNames {
		if n == s {
			return tt, nil
		}
	}
	return 0, fmt.Errorf("unknown time type %q in pgts.rollup", s)
}
