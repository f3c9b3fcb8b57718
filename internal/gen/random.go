package gen

import (
	"math/bits"
	"math/rand/v2"
)

// golden is 2^64 divided by the golden ratio, the SplitMix64 increment.
const golden = 0x9e3779b97f4a7c15

// mix is the SplitMix64 finalizer: a bijection of uint64 whose outputs
// for neighbouring inputs look independent.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// streamKey derives the key of a generator's row streams from the seed
// and a per-purpose salt, so that two generators (or two purposes within
// one) with the same seed draw unrelated numbers.
func streamKey(seed, salt uint64) uint64 { return mix(seed ^ mix(salt)) }

// stream is the random number source of one row. The zero value is ready
// for reset. Not safe for concurrent use.
type stream struct {
	pcg rand.PCG
}

// reset positions the stream at the start of row's numbers.
func (s *stream) reset(key uint64, row int64) {
	r := uint64(row)
	s.pcg.Seed(mix(key^r), mix(key+r*golden))
}

// uint64 returns 64 uniformly random bits.
func (s *stream) uint64() uint64 { return s.pcg.Uint64() }

// intn returns a number in [0, n), n > 0, by Lemire's multiply-shift;
// the bias, under n/2^64, is far below anything a benchmark could see,
// and the result depends only on the stream, so it is deterministic.
func (s *stream) intn(n uint64) uint64 {
	hi, _ := bits.Mul64(s.pcg.Uint64(), n)
	return hi
}

// rangeIn returns a number in [lo, hi], lo <= hi.
func (s *stream) rangeIn(lo, hi int64) int64 {
	return lo + int64(s.intn(uint64(hi-lo)+1))
}

// alnum is the alphabet of random identifiers.
const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// fillAlnum fills b with random letters and digits, eight characters
// (6 bits each, from the high bits of repeated multiplications) per
// 64-bit draw.
func (s *stream) fillAlnum(b []byte) {
	var x uint64
	for i := range b {
		if i%8 == 0 {
			x = s.pcg.Uint64()
		}
		var c uint64
		c, x = bits.Mul64(x, uint64(len(alnum)))
		b[i] = alnum[c]
	}
}

// hexDigits spells nibbles.
const hexDigits = "0123456789abcdef"

// appendHex appends n (at most 16) random lower-case hex digits.
func (s *stream) appendHex(dst []byte, n int) []byte {
	x := s.pcg.Uint64()
	for i := 0; i < n; i++ {
		dst = append(dst, hexDigits[x&15])
		x >>= 4
	}
	return dst
}
