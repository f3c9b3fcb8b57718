package records

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestByteSetIndex compares the word-at-a-time search with a plain loop,
// on bytes chosen to stress borrows (0x00, 0x01, 0x80, 0xff and the
// members' neighbours).
func TestByteSetIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	sets := [][]byte{{','}, {',', '"', '\n', '\r'}, {'\t', '\\', '\n', '\r'}, {0, 0xff}, {0x80, 0x7f, 1}}
	for _, members := range sets {
		s := newByteSet(members...)
		alphabet := []byte{0, 1, 0x7f, 0x80, 0x81, 0xfe, 0xff, 'a'}
		for _, m := range members {
			alphabet = append(alphabet, m, m-1, m+1)
		}
		for range 20000 {
			b := make([]byte, rng.IntN(40))
			for i := range b {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			}
			want := len(b)
			for i, c := range b {
				if bytes.IndexByte(members, c) >= 0 {
					want = i
					break
				}
			}
			if got := s.index(b); got != want {
				t.Fatalf("set %q: index(%q) = %d, want %d", members, b, got, want)
			}
		}
	}
}
