package ingest

// Tag is one key=value pair qualifying a metric name.
type Tag struct{ Key, Value string }

// Point is one sample.
//
// Name and the tag strings own their bytes and may be kept. Tags is
// sorted by key with unique keys; parsers reuse its backing array (see
// the package documentation), so copy the slice to keep it beyond the
// next parser call that appends to the same []Point.
type Point struct {
	Name  string
	Tags  []Tag
	Value float64
	// Time is micros since the Unix epoch (UTC), in [MinTime, MaxTime).
	Time int64
}

// The supported time range in micros: [MinTime, MaxTime) is
// 0001-01-01T00:00:00Z up to, not including, 10000-01-01T00:00:00Z, the
// range PostgreSQL and the partition math accept. Parsers refuse times
// outside it with ErrTimestamp.
const (
	MinTime int64 = -62_135_596_800_000_000
	MaxTime int64 = 253_402_300_800_000_000
)

// AppendPoint extends dst by one Point and returns the new slice and a
// pointer to the new last element. When dst has spare capacity the
// element is reused: its Tags keep their backing array with length 0 and
// its other fields keep stale values that the caller overwrites.
func AppendPoint(dst []Point) ([]Point, *Point) {
	if len(dst) < cap(dst) {
		dst = dst[:len(dst)+1]
	} else {
		dst = append(dst, Point{})
	}
	p := &dst[len(dst)-1]
	p.Tags = p.Tags[:0]
	return dst, p
}

// SecondsToMicros converts whole seconds since the epoch to micros,
// refusing results outside [MinTime, MaxTime) (which also excludes any
// overflow).
func SecondsToMicros(s int64) (int64, bool) {
	if s < MinTime/1e6 || s >= MaxTime/1e6 {
		return 0, false
	}
	return s * 1e6, true
}

// MillisToMicros converts milliseconds since the epoch to micros,
// refusing results outside [MinTime, MaxTime).
func MillisToMicros(ms int64) (int64, bool) {
	if ms < MinTime/1e3 || ms >= MaxTime/1e3 {
		return 0, false
	}
	return ms * 1e3, true
}

// InRange reports whether micros is within [MinTime, MaxTime).
func InRange(micros int64) bool {
	return micros >= MinTime && micros < MaxTime
}
