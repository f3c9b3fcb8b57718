// Package gen makes deterministic rows for loading and benchmarking: the
// same Options give the same rows, byte for byte, in every run and on
// every machine. The rows reach the bulk loader in-process, field by field
// through a copyenc.FieldWriter (no text round trip), and `pgts gen`
// writes them as COPY text (WriteText).
//
// Glossary:
//
//	kind        a generator's name: conditions, iibench or events
//	row index   0-based position of a row in the whole output of New(kind, opts)
//	range       a contiguous run of row indexes [lo, hi); Split cuts the
//	            output into ranges that can be generated in parallel
//	micros      microseconds since 1970-01-01 00:00:00 UTC
//	stream      the random numbers of one row: a math/rand/v2 PCG whose
//	            state is a hash of (seed, kind, row index)
//
// Determinism and Split. Every random number of a row comes from the row's
// own stream, seeded from the row index, never from the rows before it.
// A generator can therefore start at any row index, and the generators of
// Split together produce exactly the rows of the unsplit one:
//
//	state(row) = (mix(key ^ row), mix(key + row·γ))   key = mix(seed ^ mix(salt))
//
// where mix is the SplitMix64 finalizer (a bijection of uint64), γ the
// 64-bit golden ratio and salt a constant per kind and purpose (events
// draws its payload from a second stream, so that Next need not build
// it). conditions uses no randomness at all: each row is a
// closed formula of its index, as in the study it reproduces.
//
// Speed. Next and Encode allocate nothing; conditions costs tens of
// nanoseconds a row, far below what PostgreSQL needs to store it (see
// bench_test.go for the figures and the command that measures them).
package gen
