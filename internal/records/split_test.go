package records

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// TestSplitBOM: the byte-order mark is dropped at the start of the input
// only; a chunk that starts with one keeps it as data.
func TestSplitBOM(t *testing.T) {
	res := variants(t, "\ufeffa,b\n\ufeffc,d\n\ufeffe,f\n", DefaultOptions(CSV))
	want := []string{`1-1 "a" "b"`, `2-2 "\ufeffc" "d"`, `3-3 "\ufeffe" "f"`}
	if d := cmp.Diff(want, res.Records); d != "" {
		t.Fatalf("(-want +got):\n%s", d)
	}
	if d := cmp.Diff([]int64{0, 4, 11}, res.Offsets); d != "" {
		t.Fatalf("offsets count from after the mark (-want +got):\n%s", d)
	}
	o := DefaultOptions(CSV)
	o.Header = true
	if res := variants(t, "\ufefftime,v\n1,2\n", o); len(res.Header) != 2 || res.Header[0] != "time" {
		t.Fatalf("header %q", res.Header)
	}
}

// TestSplitSourceErrors: a source error or a source that stops making
// progress ends a split read where it ends a whole one, after the same
// records.
func TestSplitSourceErrors(t *testing.T) {
	sources := map[string]func() io.Reader{
		"error after data": func() io.Reader {
			return io.MultiReader(strings.NewReader("a,b\nc,\"d\ne\"\nf,"), iotest.ErrReader(errBroken))
		},
		"error after a whole record": func() io.Reader {
			return io.MultiReader(strings.NewReader("a,b\nc,d\n"), iotest.ErrReader(errBroken))
		},
		"no progress":   func() io.Reader { return io.MultiReader(strings.NewReader("a,b\nc,d\ne"), emptyReader{}) },
		"invalid count": func() io.Reader { return io.MultiReader(strings.NewReader("a,b\n"), negativeReader{}) },
	}
	for name, src := range sources {
		t.Run(name, func(t *testing.T) {
			r, err := NewReader(src(), DefaultOptions(CSV))
			if err != nil {
				t.Fatal(err)
			}
			want := readAll(t, r, 100)
			if want.Err == "" {
				t.Fatal("the whole read did not fail")
			}
			for _, size := range []int{1, 5, 1 << 20} {
				for peek := range 2 {
					if got := readSplit(t, src(), DefaultOptions(CSV), size, peek); !cmp.Equal(want, got) {
						t.Fatalf("chunks of %d after %d records (-whole +split):\n%s", size, peek, cmp.Diff(want, got))
					}
				}
			}
		})
	}
}

// TestSplitLongRecord: a record longer than the chunk size plus
// MaxRecordBytes (an unterminated quote here) makes the rest one tail
// chunk, read like a whole input; a long record within the limit is cut
// around.
func TestSplitLongRecord(t *testing.T) {
	o := DefaultOptions(CSV)
	o.MaxRecordBytes = 16
	long := strings.Repeat("x", 40)
	input := "a,b\n" + long + ",y\nc,d\n\"" + long + "\n" + long + "\ne,f\n"
	r, err := newReader(strings.NewReader(input), o, windowSize)
	if err != nil {
		t.Fatal(err)
	}
	want := readAll(t, r, len(input))
	r, err = newReader(strings.NewReader(input), o, windowSize)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := r.Split(4)
	if err != nil {
		t.Fatal(err)
	}
	tails := 0
	for {
		c, err := sp.Next()
		if err == io.EOF {
			break
		}
		if c.Tail() {
			tails++
			if c.Offset() != int64(strings.Index(input, "\"")) {
				t.Errorf("the tail starts at %d, want the unterminated quote's record at %d", c.Offset(), strings.Index(input, "\""))
			}
		}
	}
	if tails != 1 {
		t.Fatalf("%d tail chunks, want 1", tails)
	}
	if got := readSplit(t, strings.NewReader(input), o, 4, 0); !cmp.Equal(want, got) {
		t.Fatalf("(-whole +split):\n%s", cmp.Diff(want, got))
	}
}

// negativeReader returns a count that is invalid whatever the buffer.
type negativeReader struct{}

func (negativeReader) Read([]byte) (int, error) { return -1, nil }
