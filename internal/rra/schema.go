package rra

import (
	"errors"
	"fmt"
	"iter"
	"time"
)

// The supported time range in micros: [MinTime, MaxTime) is
// 0001-01-01T00:00:00Z up to, not including, 10000-01-01T00:00:00Z, the
// range PostgreSQL prints with four-digit years.
const (
	MinTime int64 = -62_135_596_800_000_000
	MaxTime int64 = 253_402_300_800_000_000
)

// MaxArchives is the largest number of archives of a Schema.
const MaxArchives = 32

// Schema is the shape of a data source: its DS step, heartbeat and
// archives. It is immutable and safe for concurrent use; every series
// matched by the same Rule shares one.
type Schema struct {
	// graphite is Graphite (whisper) consolidation: no heartbeat, a point
	// fills the slot floor(t/step)*step of an archive, coarser archives
	// aggregate the next finer one. Otherwise RRDtool's time-weighted
	// consolidation with a heartbeat.
	graphite  bool
	step      int64 // micros
	heartbeat int64 // micros; 0 in Graphite consolidation
	specs     []ArchiveSpec
	arch      []archParams
	slots     int // the sum of the archives' Size
	minSize   int // the smallest archive Size
}

// archParams is an archive's spec in micros, for the hot path.
type archParams struct {
	step int64 // micros, a multiple of the DS step
	size int64
	// maxUnknown is the unknown time a slot may hold and still keep a
	// value: floor(xff*step), in micros.
	maxUnknown int64
	cf         CF
	// Graphite consolidation: the archive's span (micros), its xff and
	// the number of slots of the next finer archive in one of its slots
	// (0 for the finest archive).
	span  int64
	xff   float64
	ratio int64
}

// NewSchema validates and returns the Schema of a DS with the given step
// and heartbeat (positive whole seconds, at most MaxDuration) and 1 to
// MaxArchives archives, each valid, with a step that is a multiple of the
// DS step, and no two with the same CF and step. The archives keep their
// order: an Update's Archive is an index into it.
//
// A heartbeat of 0 asks for Graphite consolidation (see the package doc):
// the archives must then be in order of increasing step, each step a
// multiple of the one before, with the consolidation functions average,
// sum, min, max or last (wmean is RRD consolidation only); the CF of the
// finest archive is not used (the last value written to a slot wins).
func NewSchema(step, heartbeat time.Duration, archives []ArchiveSpec) (*Schema, error) {
	if err := checkDuration(step); err != nil {
		return nil, fmt.Errorf("step %s is %w", FormatDuration(step), err)
	}
	if heartbeat == 0 {
		return newGraphiteSchema(step, archives)
	}
	if err := checkDuration(heartbeat); err != nil {
		return nil, fmt.Errorf("heartbeat %s is %w", FormatDuration(heartbeat), err)
	}
	switch {
	case len(archives) == 0:
		return nil, errors.New("no archives")
	case len(archives) > MaxArchives:
		return nil, fmt.Errorf("%d archives exceed the limit of %d", len(archives), MaxArchives)
	}
	s := &Schema{
		step:      step.Microseconds(),
		heartbeat: heartbeat.Microseconds(),
		specs:     append([]ArchiveSpec(nil), archives...),
		arch:      make([]archParams, len(archives)),
	}
	for i, a := range archives {
		if err := a.Validate(); err != nil {
			return nil, err
		}
		if a.Step%step != 0 {
			return nil, fmt.Errorf("archive %v: step %s is not a multiple of the DS step %s",
				a, FormatDuration(a.Step), FormatDuration(step))
		}
		if a.CF == Average || a.CF == Sum {
			return nil, fmt.Errorf("archive %v: %v is a Graphite aggregation; RRD consolidation has wmean, min, max and last", a, a.CF)
		}
		for _, b := range archives[:i] {
			if a.CF == b.CF && a.Step == b.Step {
				return nil, fmt.Errorf("archives %v and %v have the same consolidation function and step", b, a)
			}
		}
		as := a.Step.Microseconds()
		s.arch[i] = archParams{
			step:       as,
			size:       int64(a.Size),
			maxUnknown: int64(a.XFF * float64(as)),
			cf:         a.CF,
		}
		s.slots += a.Size
		if i == 0 || a.Size < s.minSize {
			s.minSize = a.Size
		}
	}
	return s, nil
}

// Step returns the DS step, the length of a primary data point.
func (s *Schema) Step() time.Duration { return time.Duration(s.step) * time.Microsecond }

// Graphite reports whether the schema uses Graphite consolidation.
func (s *Schema) Graphite() bool { return s.graphite }

// Heartbeat returns the heartbeat, 0 in Graphite consolidation.
func (s *Schema) Heartbeat() time.Duration { return time.Duration(s.heartbeat) * time.Microsecond }

// NumArchives returns the number of archives.
func (s *Schema) NumArchives() int { return len(s.specs) }

// Archive returns the i-th archive, 0 <= i < NumArchives().
func (s *Schema) Archive(i int) ArchiveSpec { return s.specs[i] }

// Slots yields the slots an Update sets, in order: each slot's index in
// its ring and its time (end), in micros. u must come from a DS of s.
func (s *Schema) Slots(u Update) iter.Seq2[int, int64] {
	return func(yield func(int, int64) bool) {
		a := s.arch[u.Archive]
		slot, t := int64(u.Slot), u.Time
		for range u.Count {
			if !yield(int(slot), t) {
				return
			}
			t += a.step
			if slot++; slot == a.size {
				slot = 0
			}
		}
	}
}
