package rra

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// CF is a consolidation function: how an archive combines the primary
// data points of one slot. The zero value is WMean.
type CF uint8

// Consolidation functions.
const (
	// WMean is the time-weighted mean of the known PDPs, each weighted by
	// its known time.
	WMean CF = iota
	// Min is the smallest known PDP.
	Min
	// Max is the largest known PDP.
	Max
	// Last is the latest known PDP.
	Last
	// Average is the mean of the known slots of the next finer archive,
	// as whisper propagates with aggregationMethod = average (Graphite
	// consolidation only).
	Average
	// Sum is the sum of the known slots of the next finer archive, as
	// whisper's sum (Graphite consolidation only).
	Sum
	numCF
)

var cfNames = [numCF]string{"wmean", "min", "max", "last", "average", "sum"}

// String returns the CF's name as ParseCF reads it.
func (c CF) String() string {
	if c < numCF {
		return cfNames[c]
	}
	return "CF(" + strconv.Itoa(int(c)) + ")"
}

// ParseCF parses "wmean", "min", "max", "last", "average" or "sum", in
// any case. Average and Sum exist only in Graphite consolidation, wmean
// only in RRD consolidation; NewSchema checks.
func ParseCF(s string) (CF, error) {
	for c, name := range cfNames {
		if strings.EqualFold(s, name) {
			return CF(c), nil
		}
	}
	return 0, fmt.Errorf("unknown consolidation function %q (want wmean, min, max, last, average or sum)", clip(s))
}

// Limits of an archive.
const (
	// MaxSlots is the largest Size of an archive.
	MaxSlots = 100_000
	// DefaultXFF is the xff of a spec string that gives none: a slot is
	// NaN when more than half of it is unknown.
	DefaultXFF = 0.5
	// maxSpecText bounds the text ParseArchiveSpec reads.
	maxSpecText = 128
)

// ArchiveSpec describes one archive: a ring of Size slots of Step each,
// keeping the last Span of a series, consolidated with CF. The zero value
// is not valid; build one with ParseArchiveSpec or NewArchiveSpec.
type ArchiveSpec struct {
	CF CF
	// Step is the length of a slot, a whole number of seconds and a
	// multiple of the DS step of any Schema using the archive.
	Step time.Duration
	// Span is how far back the archive reaches: Size*Step.
	Span time.Duration
	// XFF is the fraction of a slot, in [0, 1), that may be unknown while
	// the slot keeps a value; with more unknown time the slot is NaN.
	XFF float64
	// Size is the number of slots, Span/Step, in [1, MaxSlots].
	Size int
}

// NewArchiveSpec returns the ArchiveSpec of cf, step, span and xff after
// validating them.
func NewArchiveSpec(cf CF, step, span time.Duration, xff float64) (ArchiveSpec, error) {
	a, err := newArchiveSpec(cf, step, span, xff)
	if err != nil {
		return ArchiveSpec{}, fmt.Errorf("archive %v: %w", a, err)
	}
	return a, nil
}

func newArchiveSpec(cf CF, step, span time.Duration, xff float64) (ArchiveSpec, error) {
	a := ArchiveSpec{CF: cf, Step: step, Span: span, XFF: xff}
	if step > 0 {
		a.Size = int(min(span/step, MaxSlots+1))
	}
	return a, a.validate()
}

// ParseArchiveSpec parses "[cf:]step:span[:xff]": an optional
// consolidation function (wmean when left out), the slot step, the span
// and an optional xff (DefaultXFF when left out). Step and span are
// ParseDuration durations. Examples: "10s:6h", "1m:7d", "1h:1y",
// "max:1h:30d:0.5".
func ParseArchiveSpec(s string) (ArchiveSpec, error) {
	a, err := parseArchiveSpec(s)
	if err != nil {
		return ArchiveSpec{}, fmt.Errorf("parsing archive %q: %w", clip(s), err)
	}
	return a, nil
}

func parseArchiveSpec(s string) (ArchiveSpec, error) {
	if len(s) > maxSpecText {
		return ArchiveSpec{}, fmt.Errorf("longer than %d bytes", maxSpecText)
	}
	parts := strings.Split(s, ":")
	if len(parts) > 4 {
		return ArchiveSpec{}, errors.New("too many fields: want [cf:]step:span[:xff]")
	}
	cf := WMean
	if p := parts[0]; p != "" && (p[0] < '0' || p[0] > '9') {
		var err error
		if cf, err = ParseCF(p); err != nil {
			return ArchiveSpec{}, err
		}
		parts = parts[1:]
	}
	if len(parts) < 2 || len(parts) > 3 {
		return ArchiveSpec{}, errors.New("want [cf:]step:span[:xff]")
	}
	step, err := ParseDuration(parts[0])
	if err != nil {
		return ArchiveSpec{}, fmt.Errorf("step: %w", err)
	}
	span, err := ParseDuration(parts[1])
	if err != nil {
		return ArchiveSpec{}, fmt.Errorf("span: %w", err)
	}
	xff := DefaultXFF
	if len(parts) == 3 {
		if xff, err = strconv.ParseFloat(parts[2], 64); err != nil {
			return ArchiveSpec{}, fmt.Errorf("xff %q is not a number", parts[2])
		}
	}
	a, err := newArchiveSpec(cf, step, span, xff)
	if err != nil {
		return ArchiveSpec{}, err
	}
	return a, nil
}

// Validate reports what is wrong with a, or nil. It does not know the DS
// step, which NewSchema checks.
func (a ArchiveSpec) Validate() error {
	if err := a.validate(); err != nil {
		return fmt.Errorf("archive %v: %w", a, err)
	}
	return nil
}

func (a ArchiveSpec) validate() error {
	if a.CF >= numCF {
		return errors.New("unknown consolidation function")
	}
	if err := checkDuration(a.Step); err != nil {
		return fmt.Errorf("step %s is %w", FormatDuration(a.Step), err)
	}
	if err := checkDuration(a.Span); err != nil {
		return fmt.Errorf("span %s is %w", FormatDuration(a.Span), err)
	}
	if a.Span%a.Step != 0 {
		return fmt.Errorf("span %s is not a multiple of step %s", FormatDuration(a.Span), FormatDuration(a.Step))
	}
	if n := a.Span / a.Step; n > MaxSlots {
		return fmt.Errorf("span/step is %d slots, over the limit of %d", n, MaxSlots)
	}
	if int64(a.Size) != int64(a.Span/a.Step) {
		return fmt.Errorf("size %d is not span/step %d", a.Size, a.Span/a.Step)
	}
	if !(a.XFF >= 0 && a.XFF < 1) {
		return fmt.Errorf("xff %v is outside [0, 1)", a.XFF)
	}
	return nil
}

// String returns a in ParseArchiveSpec's syntax with every field given,
// as in "wmean:10s:6h:0.5".
func (a ArchiveSpec) String() string {
	return a.CF.String() + ":" + FormatDuration(a.Step) + ":" + FormatDuration(a.Span) + ":" +
		strconv.FormatFloat(a.XFF, 'g', -1, 64)
}

// SlotIndex returns the index in a's ring of the slot whose time (end) is
// t: (t/step) mod Size, floored so that it is in [0, Size) for times
// before 1970 too. a must be valid.
func (a ArchiveSpec) SlotIndex(t int64) int {
	return int(floorMod(floorDiv(t, a.Step.Microseconds()), int64(a.Size)))
}

// SlotTime returns the time of the slot that holds time t: the end T of
// the step interval (T-step, T] containing t. a must be valid and t in
// [MinTime, MaxTime).
func (a ArchiveSpec) SlotTime(t int64) int64 {
	step := a.Step.Microseconds()
	return floorDiv(t-1, step)*step + step
}

// clip cuts bad input quoted in an error message to 64 bytes.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// floorDiv returns a/b rounded toward negative infinity; b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

// floorMod returns a mod b in [0, b); b > 0.
func floorMod(a, b int64) int64 {
	m := a % b
	if m < 0 {
		m += b
	}
	return m
}
