package tsstore

import (
	"encoding/binary"
	"math"
)

// Archive rows are packed (catalog migration 13): a row of pgts.rra_data
// holds, for the SegmentWidth positions of its segment, times and vals as
// bytea of 8 bytes a position, big-endian (PostgreSQL's own byte order
// for int8send and float8send, so SQL reads them with a bit-string cast):
//
//	times[8(p-1) : 8p]  the stored slot time of position p, Unix seconds;
//	                    packedNoTime where the position holds nothing
//	vals[8(p-1) : 8p]   the IEEE 754 bits of its value, as they are (NaN
//	                    payloads, ±Inf, -0); packedNull for NULL
//
// The server sends and stores a row as it is, where arrays cost it a
// conversion per element (array_send, array_recv), and the flush
// replaces runs of positions with byte copies (pgts.rra_put).

const (
	// packedNoTime marks a position that holds nothing: the minimum
	// int8, older than every archive span, so every reader of times
	// (by equality with a slot's time, or by age) passes over it.
	packedNoTime int64 = math.MinInt64
	// packedNull marks a NULL value: a signalling NaN, which arithmetic
	// never yields (it yields quiet NaNs). The flush never writes NULL;
	// rows converted from arrays can hold it.
	packedNull uint64 = 0x7FF0000000000001
	// packedNoTimeHex and packedNullHex spell them in hexadecimal for
	// the SQL statements (a test checks they agree).
	packedNoTimeHex = "8000000000000000"
	packedNullHex   = "7ff0000000000001"
)

// packedAt returns the 8 bytes of position pos (1-based) of a packed
// column as an unsigned integer.
func packedAt(b []byte, pos int) uint64 {
	return binary.BigEndian.Uint64(b[8*(pos-1):])
}

// packedValue is the value of packed bits v, and whether it is not NULL.
func packedValue(v uint64) (float64, bool) {
	return math.Float64frombits(v), v != packedNull
}
