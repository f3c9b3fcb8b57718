package sqlfn_test

// An independent model of TimescaleDB's documented time_bucket, in Go,
// that the differential tests compare the SQL with. Times are
// microseconds since 2000-01-01 00:00 (PostgreSQL's own epoch): a UTC
// instant for timestamptz, a wall-clock reading for timestamp.

import (
	"time"
)

const (
	usPerSec = int64(1_000_000)
	usPerDay = 86_400 * usPerSec
)

var pgEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// width is an interval as PostgreSQL stores it.
type width struct {
	months, days int32
	us           int64
}

func (w width) period() int64 { return int64(w.days)*usPerDay + w.us }

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// toTime and fromTime go through Unix microseconds: a time.Duration
// spans only 292 years.
func toTime(us int64) time.Time { return time.UnixMicro(us + pgEpoch.UnixMicro()).UTC() }

func fromTime(t time.Time) int64 { return t.UnixMicro() - pgEpoch.UnixMicro() }

// monthIndex: months since January 2000 of the calendar month of us.
func monthIndex(us int64) int64 {
	t := toTime(us)
	return int64(t.Year()-2000)*12 + int64(t.Month()) - 1
}

// refBucket buckets a wall-clock time (or a UTC instant read as one).
// origin < 0 || hasOrigin false means the default origin.
func refBucket(w width, ts int64, origin int64, hasOrigin bool) int64 {
	if w.months != 0 {
		o := int64(0)
		if hasOrigin {
			o = monthIndex(origin)
		}
		k := o + floorDiv(monthIndex(ts)-o, int64(w.months))*int64(w.months)
		y := 2000 + floorDiv(k, 12)
		m := k - floorDiv(k, 12)*12
		return fromTime(time.Date(int(y), time.Month(m+1), 1, 0, 0, 0, 0, time.UTC))
	}
	if !hasOrigin {
		origin = 2 * usPerDay // Monday 2000-01-03
	}
	p := w.period()
	return origin + floorDiv(ts-origin, p)*p
}

// addInterval is timestamp + interval as PostgreSQL computes it: months
// first (the day clamped to the length of the month), then days, then
// microseconds.
func addInterval(ts int64, months, days int32, us int64) int64 {
	if months != 0 {
		t := toTime(ts)
		y, m, d := t.Date()
		first := time.Date(y, m+time.Month(months), 1, 0, 0, 0, 0, time.UTC)
		last := first.AddDate(0, 1, -1).Day()
		if d > last {
			d = last
		}
		day := time.Date(first.Year(), first.Month(), d, 0, 0, 0, 0, time.UTC)
		ts = fromTime(day) + (ts - fromTime(time.Date(y, m, t.Day(), 0, 0, 0, 0, time.UTC)))
	}
	ts += int64(days) * usPerDay
	return ts + us
}

// toLocal reads the instant us (UTC) on the wall clock of loc.
func toLocal(us int64, loc *time.Location) int64 {
	t := toTime(us)
	_, off := t.In(loc).Zone()
	return us + int64(off)*usPerSec
}

// fromLocal is the instant PostgreSQL gives a wall-clock reading in loc
// (timestamp AT TIME ZONE): in a transition, a skipped reading takes the
// offset from before it and a repeated one the offset from after it
// (DetermineTimeZoneOffsetInternal in PostgreSQL's datetime.c).
func fromLocal(local int64, loc *time.Location) int64 {
	sec := floorDiv(local, usPerSec)
	frac := local - sec*usPerSec
	unix := sec + pgEpoch.Unix()
	prev := time.Unix(unix-86_400, 0).In(loc)
	_, before := prev.Zone()
	_, end := prev.ZoneBounds()
	var utc int64
	if end.IsZero() {
		utc = unix - int64(before)
	} else {
		boundary := end.Unix()
		_, after := end.In(loc).Zone()
		bt, at := unix-int64(before), unix-int64(after)
		switch {
		case bt < boundary && at < boundary:
			utc = bt
		case bt > boundary && at >= boundary:
			utc = at
		case bt > at:
			utc = bt
		default:
			utc = at
		}
	}
	return (utc-pgEpoch.Unix())*usPerSec + frac
}

// refInt is TimescaleDB's integer time_bucket: the offset is first
// reduced modulo the width (C's truncating %).
func refInt(w, ts, offset int64) int64 {
	offset %= w
	return floorDiv(ts-offset, w)*w + offset
}
