package ingest

import "fmt"

// Limits bounds what a parser accepts and how much memory it may use, so
// that no input, however hostile, makes a parser allocate more than a
// small multiple of the largest message it accepts. Sizes are in bytes.
// The zero value is not valid: start from DefaultLimits.
type Limits struct {
	// MaxLineBytes bounds one line of Graphite plaintext or StatsD,
	// without its newline. Default 64 KiB, the largest UDP datagram.
	MaxLineBytes int
	// MaxNameBytes bounds a metric name. Default 1 KiB.
	MaxNameBytes int
	// MaxTags bounds the number of tags of one point. Default 64.
	MaxTags int
	// MaxTagBytes bounds one tag key or one tag value (and a StatsD set
	// member). Default 4 KiB.
	MaxTagBytes int
	// MaxPoints bounds the points (and pickle list elements) one message
	// may produce: a pickle frame, an Influx body, a remote-write
	// request. Default 1,048,576.
	MaxPoints int
	// MaxFrameBytes bounds a Graphite pickle frame, without its 4-byte
	// length prefix. Default 1 MiB, carbon's PICKLE_RECEIVER_MAX_LENGTH.
	MaxFrameBytes int
	// MaxBodyBytes bounds an Influx request body and a compressed
	// remote-write body. Default 32 MiB.
	MaxBodyBytes int
	// MaxDecodedBytes bounds a remote-write body once decompressed; a
	// body whose snappy header announces more is refused before any
	// allocation. Default 32 MiB.
	MaxDecodedBytes int
	// MaxInternBytes bounds the memory (string bytes plus a per-entry
	// overhead estimate) each cache of a parser spends: its Interner of
	// names and tag strings and its SeriesCache of parsed series, which
	// let repeated series cost no allocation and no re-validation. A
	// full cache forgets everything and starts over. 0 disables
	// caching. Default 256 KiB.
	MaxInternBytes int
	// AllowUTF8 lets names and tag keys contain non-ASCII UTF-8 letters
	// and symbols besides printable ASCII (spaces and control characters
	// stay refused). Tag values may always hold UTF-8. Default false.
	AllowUTF8 bool
}

// limitCeiling bounds every size limit so that sums and products of
// limits cannot overflow an int, and a 4-byte pickle length can hold a
// frame size.
const limitCeiling = 1 << 30

// DefaultLimits returns the limits described on each field of Limits.
func DefaultLimits() Limits {
	return Limits{
		MaxLineBytes:    64 << 10,
		MaxNameBytes:    1 << 10,
		MaxTags:         64,
		MaxTagBytes:     4 << 10,
		MaxPoints:       1 << 20,
		MaxFrameBytes:   1 << 20,
		MaxBodyBytes:    32 << 20,
		MaxDecodedBytes: 32 << 20,
		MaxInternBytes:  256 << 10,
	}
}

// Validate reports the first limit that is out of range: every size and
// count must be at least 1 (MaxInternBytes at least 0) and at most 1 GiB.
func (l Limits) Validate() error {
	checks := []struct {
		name string
		v    int
		min  int
	}{
		{"MaxLineBytes", l.MaxLineBytes, 1},
		{"MaxNameBytes", l.MaxNameBytes, 1},
		{"MaxTags", l.MaxTags, 1},
		{"MaxTagBytes", l.MaxTagBytes, 1},
		{"MaxPoints", l.MaxPoints, 1},
		{"MaxFrameBytes", l.MaxFrameBytes, 1},
		{"MaxBodyBytes", l.MaxBodyBytes, 1},
		{"MaxDecodedBytes", l.MaxDecodedBytes, 1},
		{"MaxInternBytes", l.MaxInternBytes, 0},
	}
	for _, c := range checks {
		if c.v < c.min || c.v > limitCeiling {
			return fmt.Errorf("limits: %s is %d, want %d to %d", c.name, c.v, c.min, limitCeiling)
		}
	}
	return nil
}
