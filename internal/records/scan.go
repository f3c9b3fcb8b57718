package records

import (
	"encoding/binary"
	"math/bits"
)

// byteSet is a set of at most four bytes, searched for eight bytes at a
// time: the special bytes of a parser state.
type byteSet struct {
	has   [256]bool
	words [4]uint64 // each member repeated in the eight bytes of a word
}

const (
	lows  = 0x0101010101010101
	highs = 0x8080808080808080
)

// newByteSet returns the set of bs (one to four bytes).
func newByteSet(bs ...byte) byteSet {
	var s byteSet
	for i := range s.words {
		c := bs[min(i, len(bs)-1)]
		s.has[c] = true
		s.words[i] = lows * uint64(c)
	}
	return s
}

// index returns the index of the first byte of b in s, or len(b).
func (s *byteSet) index(b []byte) int {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		// A zero byte of w^word is a member; zeroBytes flags exactly the
		// lowest one (flags above it may be false), which is all we need.
		m := zeroBytes(w^s.words[0]) | zeroBytes(w^s.words[1]) | zeroBytes(w^s.words[2]) | zeroBytes(w^s.words[3])
		if m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(b); i++ {
		if s.has[b[i]] {
			return i
		}
	}
	return len(b)
}

// zeroBytes sets the high bit of the lowest zero byte of x (and maybe of
// higher bytes), and of no byte below it.
func zeroBytes(x uint64) uint64 { return (x - lows) &^ x & highs }
