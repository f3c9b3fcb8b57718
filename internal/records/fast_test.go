package records

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestSplitAgrees: the fast path's split cuts lines of every length
// (across its 8-byte words) where bytes.Split does,
// marks NULLs, and refuses more than MaxFields fields.
func TestSplitAgrees(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	for _, null := range []string{"", "NA"} {
		o := DefaultOptions(CSV)
		o.Null = null
		r, err := NewReader(bytes.NewReader(nil), o)
		if err != nil {
			t.Fatal(err)
		}
		for range 20000 {
			n := rnd.IntN(300)
			line := make([]byte, n)
			for i := range line {
				switch rnd.IntN(6) {
				case 0:
					line[i] = ','
				case 1:
					line[i] = 'N'
				case 2:
					line[i] = 'A'
				default:
					line[i] = byte('a' + rnd.IntN(26))
				}
			}
			want := bytes.Split(line, []byte{','})
			r.opts.MaxFields = len(want) + rnd.IntN(3) - 1
			fields, nulls, ok := r.split(line, nil, nil)
			if len(want) > r.opts.MaxFields {
				if ok {
					t.Fatalf("%q: %d fields accepted, limit %d", line, len(fields), r.opts.MaxFields)
				}
				continue
			}
			if !ok || len(fields) != len(want) {
				t.Fatalf("%q: %d fields (ok %v), want %d", line, len(fields), ok, len(want))
			}
			for i, w := range want {
				isNull := string(w) == null
				if nulls[i] != isNull || !isNull && !bytes.Equal(fields[i], w) || isNull && len(fields[i]) != 0 {
					t.Fatalf("%q field %d: %q null %v, want %q null %v", line, i, fields[i], nulls[i], w, isNull)
				}
			}
		}
	}
}
