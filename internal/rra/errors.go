package rra

import (
	"errors"
	"strconv"
	"time"
)

// Reasons a point is rejected by DS.AddPoint. A rejection is wrapped in a
// *PointError; test the reason with errors.Is, for example to count
// rejections by reason.
var (
	// ErrOutOfOrder: the point is older than the DS's last update.
	ErrOutOfOrder = errors.New("point older than the last update")
	// ErrDuplicate: the point has the same time as the previous point.
	ErrDuplicate = errors.New("point at the time of the previous point")
	// ErrTime: the point's time is outside [MinTime, MaxTime).
	ErrTime = errors.New("time out of range")
	// ErrValue: the point's value is ±Inf.
	ErrValue = errors.New("value is infinite")
)

// Reasons DS.UnmarshalBinary refuses a state.
var (
	// ErrSchemaMismatch: the state was saved under a different DS step or
	// different archives (CF, step or size) than the DS's schema; the
	// caller decides whether to start the series afresh.
	ErrSchemaMismatch = errors.New("state does not match the schema")
	// ErrCorrupt: the bytes are not a valid state.
	ErrCorrupt = errors.New("malformed state")
)

// PointError is a point rejected by DS.AddPoint. Err is one of
// ErrOutOfOrder, ErrDuplicate, ErrTime and ErrValue.
type PointError struct {
	// Time and Value are the rejected point's.
	Time  int64
	Value float64
	// LastUpdate is the DS's last update time, in micros; for
	// ErrOutOfOrder it is the time the point had to reach.
	LastUpdate int64
	Err        error
}

func (e *PointError) Error() string {
	s := "rejecting point at " + formatMicros(e.Time) + ": " + e.Err.Error()
	if e.Err == ErrOutOfOrder || e.Err == ErrDuplicate {
		s += " " + formatMicros(e.LastUpdate)
	}
	return s
}

func (e *PointError) Unwrap() error { return e.Err }

// formatMicros renders t as RFC 3339 in UTC when it is in the supported
// range, as a plain integer otherwise.
func formatMicros(t int64) string {
	if t < MinTime || t >= MaxTime {
		return strconv.FormatInt(t, 10) + "µs"
	}
	return time.UnixMicro(t).UTC().Format(time.RFC3339Nano)
}
