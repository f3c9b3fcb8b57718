package influx

import "fmt"

// Precision is the unit of the timestamps of a request body, the
// "precision" parameter of InfluxDB's write API.
type Precision uint8

// The precisions.
const (
	Nanosecond Precision = iota
	Microsecond
	Millisecond
	Second
)

// ParsePrecision parses the precision parameter: "ns" (or "n", or the
// empty string, InfluxDB's default), "us" (or "u", "µs"), "ms" or "s".
func ParsePrecision(s string) (Precision, error) {
	switch s {
	case "", "ns", "n":
		return Nanosecond, nil
	case "us", "u", "µs":
		return Microsecond, nil
	case "ms":
		return Millisecond, nil
	case "s":
		return Second, nil
	}
	return 0, fmt.Errorf("influx precision %q: want ns, us, ms or s", s)
}

// String returns "ns", "us", "ms" or "s".
func (p Precision) String() string {
	switch p {
	case Nanosecond:
		return "ns"
	case Microsecond:
		return "us"
	case Millisecond:
		return "ms"
	case Second:
		return "s"
	}
	return fmt.Sprintf("Precision(%d)", uint8(p))
}

// toMicros converts a timestamp in precision p to micros: exactly for
// us, ms and s (false on overflow), rounded down to the microsecond for
// ns so that times before the epoch round the same way as after it.
func (p Precision) toMicros(ts int64) (int64, bool) {
	var mul int64
	switch p {
	case Nanosecond:
		q := ts / 1000
		if ts%1000 < 0 {
			q--
		}
		return q, true
	case Microsecond:
		return ts, true
	case Millisecond:
		mul = 1e3
	case Second:
		mul = 1e6
	default:
		return 0, false
	}
	if ts > (1<<63-1)/mul || ts < -(1<<63)/mul {
		return 0, false
	}
	return ts * mul, true
}

// truncMicros rounds micros down to a whole multiple of precision p.
func (p Precision) truncMicros(us int64) int64 {
	var unit int64
	switch p {
	case Millisecond:
		unit = 1e3
	case Second:
		unit = 1e6
	default:
		return us
	}
	r := us % unit
	if r < 0 {
		r += unit
	}
	return us - r
}
