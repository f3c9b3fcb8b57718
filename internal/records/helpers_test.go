package records

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// The zstd decoder runs goroutines: Close must stop them.
	goleak.VerifyTestMain(m)
}

// render writes a record as `LINE-ENDLINE "field" NULL ...`, or an error
// as `ERR message`, for exact comparisons.
func render(rec Record, err error) string {
	if err != nil {
		return "ERR " + err.Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d-%d", rec.Line, rec.EndLine)
	for i, f := range rec.Fields {
		if rec.Null[i] {
			b.WriteString(" NULL")
		} else {
			fmt.Fprintf(&b, " %q", f)
		}
	}
	return b.String()
}

// result is what reading a whole input gives.
type result struct {
	Records []string // render of each record or record error
	Offsets []int64  // Offset of each record or record error
	Ends    []int64  // End of each record or record error
	Header  []string
	Marker  bool
	Err     string // the error that ended the input, "" for io.EOF
}

// readAll reads r to its end, checking the invariants every input must
// keep: Next ends (at most len(input)+2 calls), offsets strictly increase,
// lines never go back, and the error after the end sticks.
func readAll(t testing.TB, r *Reader, inputLen int) result {
	t.Helper()
	var res result
	lastOff, lastLine := int64(-1), int64(0)
	for calls := 0; ; calls++ {
		if calls > inputLen+2 {
			t.Fatalf("more than %d calls to Next for %d bytes of input", calls, inputLen)
		}
		rec, err := r.Next()
		if err != nil && !IsRecordError(err) {
			if err != io.EOF {
				res.Err = err.Error()
			}
			if _, err2 := r.Next(); err2 == nil || err2.Error() != err.Error() {
				t.Fatalf("Next after %v = %v, want the same error", err, err2)
			}
			break
		}
		off, line, end, stop := rec.Offset, rec.Line, rec.EndLine, rec.End
		var re *RecordError
		if errors.As(err, &re) {
			off, line, end, stop = re.Offset, re.Line, re.EndLine, re.End
		} else if len(rec.Fields) != len(rec.Null) || len(rec.Fields) == 0 {
			t.Fatalf("record with %d fields and %d nulls", len(rec.Fields), len(rec.Null))
		}
		if off <= lastOff || line < lastLine || end < line {
			t.Fatalf("record %q after offset %d line %d: offset %d lines %d-%d", render(rec, err), lastOff, lastLine, off, line, end)
		}
		lastOff, lastLine = off, line
		res.Records = append(res.Records, render(rec, err))
		if re == nil && (stop < off || stop > int64(inputLen)) {
			t.Fatalf("record %q at offset %d ends at %d, outside [offset, %d]", render(rec, err), off, stop, inputLen)
		}
		res.Offsets = append(res.Offsets, off)
		res.Ends = append(res.Ends, stop)
	}
	res.Header = r.Header()
	res.Marker = r.EndMarker()
	return res
}

// variants reads input through the whole window, one byte per Read, and
// windows of 4 to 7 bytes, and fails unless all agree; it returns the
// result.
// checkEnds: each record read from input ends (End) where its line end
// or the input does, so input[Offset:End] is the record as written.
func checkEnds(t testing.TB, input string, res result) {
	t.Helper()
	base := int64(0)
	if strings.HasPrefix(input, "\xef\xbb\xbf") {
		base = 3 // offsets count from after the dropped mark
	}
	for i, rec := range res.Records {
		if strings.HasPrefix(rec, "ERR ") {
			continue
		}
		e := base + res.Ends[i]
		// (or where a text end marker follows it on its line)
		if e != int64(len(input)) && input[e] != '\n' && input[e] != '\r' && !strings.HasPrefix(input[e:], `\.`) {
			t.Fatalf("input %q: record %s at %d ends at %d, not at a line end: %q", input, rec, res.Offsets[i], res.Ends[i], input[base+res.Offsets[i]:e])
		}
	}
}

func variants(t testing.TB, input string, opts Options) result {
	t.Helper()
	type variant struct {
		name string
		src  func() io.Reader
		size int
	}
	vs := []variant{
		{"whole", func() io.Reader { return strings.NewReader(input) }, windowSize},
		{"one byte per read", func() io.Reader { return iotest.OneByteReader(strings.NewReader(input)) }, windowSize},
		{"data with EOF", func() io.Reader { return iotest.DataErrReader(strings.NewReader(input)) }, windowSize},
	}
	for size := 4; size <= 7; size++ {
		vs = append(vs, variant{fmt.Sprintf("window %d", size), func() io.Reader { return iotest.HalfReader(strings.NewReader(input)) }, size})
	}
	var first result
	for i, v := range vs {
		r, err := newReader(v.src(), opts, v.size)
		if err != nil {
			t.Fatalf("newReader: %v", err)
		}
		res := readAll(t, r, len(input))
		if i == 0 {
			first = res
			checkEnds(t, input, res)
			continue
		}
		if d := cmp.Diff(first, res); d != "" {
			t.Fatalf("input %q: %s differs from %s (-%[3]s +%[2]s):\n%s", input, v.name, vs[0].name, d)
		}
	}
	splits := []struct {
		size, peek int
		src        func() io.Reader
	}{
		{1, 0, func() io.Reader { return strings.NewReader(input) }},
		{1, 1, func() io.Reader { return iotest.OneByteReader(strings.NewReader(input)) }},
		{3, 2, func() io.Reader { return iotest.HalfReader(strings.NewReader(input)) }},
		{7, 0, func() io.Reader { return iotest.DataErrReader(strings.NewReader(input)) }},
		{1 << 20, 0, func() io.Reader { return strings.NewReader(input) }},
	}
	for _, sv := range splits {
		res := readSplit(t, sv.src(), opts, sv.size, sv.peek)
		if d := cmp.Diff(first, res); d != "" {
			t.Fatalf("input %q: split into chunks of %d after %d records differs from %s (-%[4]s +split):\n%[5]s", input, sv.size, sv.peek, vs[0].name, d)
		}
	}
	return first
}

// csvOpts returns the CSV defaults changed by f.
func csvOpts(f func(*Options)) Options {
	o := DefaultOptions(CSV)
	if f != nil {
		f(&o)
	}
	return o
}

func textOpts(f func(*Options)) Options {
	o := DefaultOptions(Text)
	if f != nil {
		f(&o)
	}
	return o
}

func tsvOpts(f func(*Options)) Options {
	o := DefaultOptions(TSV)
	if f != nil {
		f(&o)
	}
	return o
}

// formatCase is one table-driven case: input, options, and the rendered
// records it must give.
type formatCase struct {
	name   string
	opts   Options
	input  string
	want   []string
	marker bool // the data ends at an end-of-data marker
}

func runCases(t *testing.T, cases []formatCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := variants(t, c.input, c.opts)
			if res.Err != "" {
				t.Fatalf("input ended with %s", res.Err)
			}
			if d := cmp.Diff(c.want, res.Records); d != "" {
				t.Errorf("input %q (-want +got):\n%s", c.input, d)
			}
			if res.Marker != c.marker {
				t.Errorf("EndMarker() = %v, want %v", res.Marker, c.marker)
			}
			if !c.opts.Strict && !c.opts.Header {
				differential(t, []byte(c.input), c.opts)
			}
		})
	}
}

// readSplit reads input as the parallel loader does: peek records
// sequentially (Next, then Unread and Next again for the first), Split the
// rest into chunks of about size bytes and read each chunk with a chunk
// reader, in order.
func readSplit(t testing.TB, src io.Reader, opts Options, size, peek int) result {
	t.Helper()
	var res result
	r, err := newReader(src, opts, windowSize)
	if err != nil {
		t.Fatalf("newReader: %v", err)
	}
	add := func(rec Record, err error) {
		off, stop := rec.Offset, rec.End
		var re *RecordError
		if errors.As(err, &re) {
			off, stop = re.Offset, re.End
		}
		res.Records = append(res.Records, render(rec, err))
		res.Offsets = append(res.Offsets, off)
		res.Ends = append(res.Ends, stop)
	}
	for i := 0; i < peek; i++ {
		rec, err := r.Next()
		if i == 0 {
			r.Unread()
		}
		for r.HasUnread() {
			rec, err = r.Next()
		}
		if err != nil && !IsRecordError(err) {
			if err != io.EOF {
				res.Err = err.Error()
			}
			res.Header, res.Marker = r.Header(), r.EndMarker()
			return res
		}
		add(rec, err)
	}
	sp, err := r.Split(size)
	res.Header, res.Marker = r.Header(), r.EndMarker()
	if err != nil {
		res.Err = err.Error()
		return res
	}
	cr, err := NewChunkReader(opts)
	if err != nil {
		t.Fatalf("NewChunkReader: %v", err)
	}
	for {
		c, err := sp.Next()
		if err == io.EOF {
			return res
		}
		if err != nil {
			t.Fatalf("Splitter.Next: %v", err)
		}
		if c.Len() > size && !c.Tail() && c.at.eol == eolLF && size < 1<<10 && strings.Count(string(c.data), "\n") > 1 &&
			!strings.Contains(string(c.data), "\"") && !strings.Contains(string(c.data), "'") {
			// A chunk of simple lines stops at the first line end after size.
			first := strings.IndexByte(string(c.data[max(size-1, 0):]), '\n')
			if first >= 0 && first+max(size-1, 0)+1 < c.Len() && !strings.Contains(string(c.data), `\`) && !strings.Contains(string(c.data), "\r") {
				t.Fatalf("chunk %q of size aim %d goes on past a line end", c.data, size)
			}
		}
		cr.Reset(c)
		for {
			rec, err := cr.Next()
			if err == io.EOF {
				break
			}
			if err != nil && !IsRecordError(err) {
				res.Err = err.Error()
				return res
			}
			add(rec, err)
		}
		if cr.EndMarker() {
			res.Marker = true
			return res
		}
		sp.Recycle(c)
	}
}
