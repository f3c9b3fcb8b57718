package copyload

import (
	"io"
	"sync"

	"github.com/pgts/pgts/internal/records"
)

// maxRawRecord bounds what one reject reads back from its input: a record
// longer than this (the reader's own limit is lower by default) is
// written re-serialised instead.
const maxRawRecord = 64 << 20

// RawInput is an input that can be read again at an offset: a regular,
// uncompressed file. A reject of one of its records then holds the
// record as it was written (records.Record's Offset and End), rather
// than its fields re-serialised as CSV. Safe for concurrent use when At
// is (an *os.File is: ReadAt does not move the file's offset).
type RawInput struct {
	At io.ReaderAt
	// From is the reader whose record offsets index At; it tells whether
	// a byte-order mark was dropped before the first record.
	From *records.Reader
}

// text returns the input's bytes [off, end) as a string; ok false when
// they cannot be read (ri nil, an unknown span, a read error).
func (ri *RawInput) text(off, end int64) (string, bool) {
	if ri == nil || ri.At == nil || off < 0 || end < off || end-off > maxRawRecord {
		return "", false
	}
	if ri.From != nil && ri.From.BOMDropped() {
		off, end = off+3, end+3
	}
	buf := make([]byte, end-off)
	if n, err := ri.At.ReadAt(buf, off); n != len(buf) && err != nil {
		return "", false
	}
	return string(buf), true
}

// inputSpan is where a row's record lies in its input: [off, end), line
// end excluded. off is -1 for a row that has no record (a generator's).
type inputSpan struct {
	off int64
	n   int32
}

// noSpan is the span of a row that was not read from an input.
var noSpan = inputSpan{off: -1}

func spanOf(off, end int64) inputSpan {
	if off < 0 || end < off || end-off > maxRawRecord {
		return noSpan
	}
	return inputSpan{off: off, n: int32(end - off)}
}

// rawInputs holds the loader's re-readable inputs by source index
// (batch.srcs). The router adds one per input as it starts reading it
// while workers look them up, so it takes a lock.
type rawInputs struct {
	mu sync.Mutex
	m  map[int32]*RawInput
}

func (r *rawInputs) add(src int32, ri *RawInput) {
	if ri == nil || ri.At == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[int32]*RawInput{}
	}
	r.m[src] = ri
}

func (r *rawInputs) get(src int32) *RawInput {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.m[src]
}

// inputRecord is row i of b as it was written in its input, or the row
// re-serialised as CSV (rowRecord) when its input cannot be read again:
// stdin, a pipe, a compressed file, a generator. form is FormInput or
// FormCSV.
func (l *Loader) inputRecord(b *batch, i int) (text, form string) {
	if s, ok := l.inputText(b, i); ok {
		return s, FormInput
	}
	return l.rowRecord(b, i), FormCSV
}

// inputText is row i of b as it was written in its input; ok false when
// the input cannot be read again.
func (l *Loader) inputText(b *batch, i int) (string, bool) {
	sp, ok := b.inputSpan(i)
	if !ok {
		return "", false
	}
	return l.raws.get(b.srcs[i]).text(sp.off, sp.off+int64(sp.n))
}

// inputSpan is where row i of b lies in its input; ok false for a row
// that was not read from one (a generator's).
func (b *batch) inputSpan(i int) (sp inputSpan, ok bool) {
	if i >= len(b.spans) || i >= len(b.srcs) || b.spans[i].off < 0 {
		return inputSpan{}, false
	}
	return b.spans[i], true
}

// maxBatchText bounds the input read at once for the records of a batch's
// refused rows (batchText).
const maxBatchText = 8 << 20

// batchText holds the input bytes under the rows of one batch, read with
// one ReadAt, so that refusing many of its rows (a reload into a table
// with a primary key) costs one read rather than one per row. Owned by one
// goroutine.
type batchText struct {
	l    *Loader
	b    *batch
	buf  string // the input's bytes [base, base+len(buf)) (offsets as RawInput.text's)
	base int64
	read bool // the read was tried
}

// text is row i's record as written, ok false when its input cannot be
// read again. The first call reads the span of all the batch's rows when
// they are of one input and lie within maxBatchText bytes; rows outside
// it are read one by one.
func (t *batchText) text(i int) (string, bool) {
	b := t.b
	sp, ok := b.inputSpan(i)
	if !ok {
		return "", false
	}
	if !t.read {
		t.read = true
		lo, hi, src := int64(-1), int64(-1), b.srcs[0]
		for k, sp := range b.spans {
			if sp.off < 0 || b.srcs[k] != src {
				lo = -1
				break
			}
			if lo < 0 || sp.off < lo {
				lo = sp.off
			}
			hi = max(hi, sp.off+int64(sp.n))
		}
		if lo >= 0 && hi-lo <= maxBatchText {
			if s, ok := t.l.raws.get(src).text(lo, hi); ok {
				t.buf, t.base = s, lo
			}
		}
	}
	if t.buf != "" && sp.off >= t.base && sp.off+int64(sp.n) <= t.base+int64(len(t.buf)) {
		return t.buf[sp.off-t.base : sp.off-t.base+int64(sp.n)], true
	}
	return t.l.inputText(b, i)
}

// RecordText is what a reject of rec holds (Reject.Record and
// RecordForm): the record as written when raw can read it again
// (FormInput), else its fields re-serialised as CSV (FormCSV). raw may be
// nil.
func RecordText(raw *RawInput, rec records.Record) (text, form string) {
	if s, ok := raw.text(rec.Offset, rec.End); ok {
		return s, FormInput
	}
	return encodeRecord(rec.Fields, rec.Null), FormCSV
}

// ErrorText is what a reject of a record the reader refused holds: the
// record as written when raw can read it again (FormInput), else nothing
// (its fields are not known). raw may be nil.
func ErrorText(raw *RawInput, rerr *records.RecordError) (text, form string) {
	if s, ok := raw.text(rerr.Offset, rerr.End); ok {
		return s, FormInput
	}
	return "", ""
}
