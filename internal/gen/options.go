package gen

import (
	"errors"
	"fmt"
	"time"
)

// Limits of Options. They keep every generated time within the years 1 to
// 9999 and every count within what the formulas compute exactly.
const (
	MaxRows         = 1 << 40       // rows of one generator (about 1.1 × 10^12)
	MaxBatches      = 1 << 31 / 60  // conditions: batch 0 to MaxBatches-1 stay within the C int seconds
	MaxBatchRows    = 1 << 21       // conditions: rows per batch; see below
	MaxWidth        = 1600 - 2      // conditions: data columns (PostgreSQL's 1,600 columns minus time and device)
	MaxDevices      = 1<<31 - 1     // conditions: devices (an integer column)
	MaxSplit        = 1 << 16       // parts of one Split
	MaxPayloadBytes = 1 << 20       // events: mean payload size
	maxSeconds      = 1<<31 - 1     // conditions: the C generator's int seconds
	defaultStart    = 1735689600000 // iibench and events: 2025-01-01 00:00:00 UTC, in milliseconds
)

// The C generator computes a row's second as the double
// 60·i + 60.0·j/B truncated to an int, the integer formula exactly as long
// as a fraction of 1/B survives the rounding of a sum near 2^31 (half an
// ulp there is 2^-22): hence MaxBatchRows = 2^21.

// ErrUnknownKind is wrapped by the errors of New, Split and DefaultOptions
// for a kind that Kinds does not list.
var ErrUnknownKind = errors.New("unknown generator kind")

// Options configure a generator. A zero field means the generator's
// default (DefaultOptions spells them out); fields a kind does not use are
// ignored.
type Options struct {
	// Seed selects the random rows of iibench and events (conditions has
	// no randomness). Same seed, same rows.
	Seed uint64
	// Rows is the number of rows; for conditions it overrides
	// Batches × BatchRows (the last batch may then be partial).
	Rows int64
	// Batches is the number of conditions batches: each has BatchRows
	// rows and covers 60 s of the series' time.
	Batches int64
	// BatchRows is the number of rows of a conditions batch (the C
	// generator's --rows), 10,000 by default.
	BatchRows int
	// Width is the number of conditions data columns, data1..dataWidth.
	Width int
	// Devices is the number of conditions devices, numbered from 1.
	Devices int
	// Start is the time of the first row (truncated to the microsecond).
	// conditions: batch 0 starts at Start and every row is moved by the
	// offset from 1970-01-01 00:00:00 UTC to Start (its 28/336-day
	// calendar stays anchored at 1970); the zero Time is 1970-01-01, as in
	// the study. iibench and events: the zero Time is 2025-01-01 UTC.
	Start time.Time
	// Step is the events' spacing of created_at (jitter aside), at least
	// 1 µs; 0 means 1 ms.
	Step time.Duration
	// PayloadBytes is the events' mean payload size in bytes, sizes
	// spread ±12.5% around it (at most MaxPayloadBytes); 0 means 1,800
	// to 2,300 bytes. Below about 1.3 kB the payload has no message.
	PayloadBytes int
}

// DefaultOptions returns the defaults of kind, every field spelled out.
func DefaultOptions(kind string) (Options, error) {
	switch kind {
	case kindConditions:
		return Options{Seed: 1, Batches: 100, BatchRows: 10000, Width: 5, Devices: 1000,
			Start: time.Unix(0, 0).UTC()}, nil
	case kindIIBench:
		return Options{Seed: 1, Rows: 1_000_000, Start: time.UnixMilli(defaultStart).UTC()}, nil
	case kindEvents:
		return Options{Seed: 1, Rows: 100_000, Start: time.UnixMilli(defaultStart).UTC()}, nil
	}
	return Options{}, unknownKind(kind)
}

func unknownKind(kind string) error {
	return fmt.Errorf("%w %q", ErrUnknownKind, kind)
}

// Validate checks the fields every kind shares the limits of. New checks
// the rest (e.g. that the last row's time exists), because that depends
// on the kind.
func (o Options) Validate() error {
	if err := checkRange("rows", o.Rows, 0, MaxRows); err != nil {
		return err
	}
	if err := checkRange("batches", o.Batches, 0, MaxBatches); err != nil {
		return err
	}
	if err := checkRange("batch rows", int64(o.BatchRows), 0, MaxBatchRows); err != nil {
		return err
	}
	if err := checkRange("width", int64(o.Width), 0, MaxWidth); err != nil {
		return err
	}
	if err := checkRange("devices", int64(o.Devices), 0, MaxDevices); err != nil {
		return err
	}
	if err := checkRange("payload bytes", int64(o.PayloadBytes), 0, MaxPayloadBytes); err != nil {
		return err
	}
	if o.Step < 0 || o.Step > 0 && o.Step < time.Microsecond {
		return fmt.Errorf("step %s: must be at least 1µs", o.Step)
	}
	if !o.Start.IsZero() {
		if y := o.Start.UTC().Year(); y < 1 || y > 9999 {
			return fmt.Errorf("start %q: must be within the years 1 to 9999", o.Start.UTC().Format(time.RFC3339))
		}
	}
	return nil
}

func checkRange(name string, v, lo, hi int64) error {
	if v < lo || v > hi {
		return fmt.Errorf("%s %d: must be between %d and %d", name, v, lo, hi)
	}
	return nil
}

// withDefaults validates o and fills its zero fields from kind's defaults.
func (o Options) withDefaults(kind string) (Options, error) {
	d, err := DefaultOptions(kind)
	if err != nil {
		return Options{}, err
	}
	if err := o.Validate(); err != nil {
		return Options{}, err
	}
	if o.Rows == 0 && kind != kindConditions {
		o.Rows = d.Rows
	}
	if o.Batches == 0 {
		o.Batches = d.Batches
	}
	if o.BatchRows == 0 {
		o.BatchRows = d.BatchRows
	}
	if o.Width == 0 {
		o.Width = d.Width
	}
	if o.Devices == 0 {
		o.Devices = d.Devices
	}
	if o.Start.IsZero() {
		o.Start = d.Start
	}
	return o, nil
}

// checkTimes reports an error unless the times from first to last micros
// all have four-digit years.
func checkTimes(kind string, first, last int64) error {
	if first < minMicros || last >= endMicros {
		return fmt.Errorf("%s: rows from %s to %s leave the years 1 to 9999; choose an earlier start or fewer rows",
			kind, formatMicros(first), formatMicros(last))
	}
	return nil
}

func formatMicros(m int64) string {
	return time.UnixMicro(m).UTC().Format(time.RFC3339)
}
