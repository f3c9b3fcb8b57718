package records

import (
	"bytes"
	"encoding/binary"
	"math/bits"
)

// lineSplitter splits simple lines: it finds the delimiters of eight
// bytes at once.
type lineSplitter struct {
	delim uint64 // the delimiter in every byte
	// stop holds the bytes that need the general parser (none in TSV).
	stop    [2]byte
	hasStop bool
	// skip counts the records to leave to the general parser before the
	// next try, and backoff how many it was last time: input that is
	// mostly quoted or escaped does not pay for failed tries.
	skip, backoff int
}

// maxFastBackoff bounds the records read by the general parser between
// two tries of the fast path.
const maxFastBackoff = 64

func newLineSplitter(o Options) lineSplitter {
	s := lineSplitter{delim: lows * uint64(o.Delimiter)}
	switch o.Format {
	case CSV:
		s.stop, s.hasStop = [2]byte{o.Quote, '\r'}, true
	case Text:
		s.stop, s.hasStop = [2]byte{'\\', '\r'}, true
	}
	return s
}

// tryFast reads the record at r.pos into r.cur with fastLine, when it is
// worth a try.
func (r *Reader) tryFast() bool {
	s := &r.fast
	if s.skip > 0 {
		s.skip--
		return false
	}
	if r.fastLine() {
		s.backoff = 0
		return true
	}
	s.backoff = min(2*s.backoff+1, maxFastBackoff)
	s.skip = s.backoff
	return false
}

// allZeros sets the high bit of every zero byte of x, and no other bit.
func allZeros(x uint64) uint64 {
	const l7 = 0x7f7f7f7f7f7f7f7f
	return ^((x&l7 + l7) | x | l7)
}

// fastLine reads the record at r.pos into r.cur when it is a simple line
// whole in the window: ended by LF or CRLF, with no byte that needs the
// general parser (a quote or CR in CSV, a backslash or CR in text), within
// the limits, and not an end marker. Its fields are slices of the window
// rather than copies: the window does not move before the next call to
// Next. False means nothing was consumed and the general parser must read
// the record. Most records of a load take this path.
func (r *Reader) fastLine() bool {
	if r.eol == eolCR {
		return false
	}
	b := r.buf[r.pos:r.end]
	n := bytes.IndexByte(b, '\n')
	if n < 0 && r.rerr == nil && (r.pos > 0 || r.end < len(r.buf)) {
		// The line goes on past what is read: read more (nothing of the
		// record is parsed yet, so the window may move).
		r.fill()
		b = r.buf[r.pos:r.end]
		n = bytes.IndexByte(b, '\n')
	}
	if n < 0 {
		return false
	}
	line := b[:n]
	crlf := n > 0 && line[n-1] == '\r'
	if crlf {
		line = line[:n-1]
	}
	if int64(len(line)) > r.maxRec || r.opts.Format == CSV && string(line) == `\.` {
		return false
	}
	if s := &r.fast; s.hasStop && (bytes.IndexByte(line, s.stop[0]) >= 0 || bytes.IndexByte(line, s.stop[1]) >= 0) {
		return false
	}
	fields, nulls, ok := r.split(line, r.fields[:0], r.nulls[:0])
	if !ok {
		return false
	}
	r.fields, r.nulls = fields, nulls
	r.pos += n + 1
	r.nLF++
	if crlf {
		r.nCR++
	}
	r.eol = eolLF
	r.cur = Record{Fields: fields, Null: nulls, Line: r.recLine, EndLine: r.recLine, Offset: r.recOff, End: r.recOff + int64(len(line))}
	return true
}

// split appends the fields of line, which holds no stop byte, to fields
// and nulls; ok false when they are too many.
func (r *Reader) split(line []byte, fields [][]byte, nulls []bool) (_ [][]byte, _ []bool, ok bool) {
	delim, null, maxFields := r.fast.delim, r.null, r.opts.MaxFields
	start, i := 0, 0
	for ; i+8 <= len(line); i += 8 {
		w := binary.LittleEndian.Uint64(line[i:])
		for m := allZeros(w ^ delim); m != 0; m &= m - 1 {
			k := i + bits.TrailingZeros64(m)>>3
			if len(fields) == maxFields {
				return nil, nil, false
			}
			f := line[start:k:k]
			isNull := string(f) == null
			if isNull {
				f = f[:0]
			}
			fields = append(fields, f)
			nulls = append(nulls, isNull)
			start = k + 1
		}
	}
	for ; i < len(line); i++ {
		if line[i] == r.delim {
			if len(fields) == maxFields {
				return nil, nil, false
			}
			f := line[start:i:i]
			isNull := string(f) == null
			if isNull {
				f = f[:0]
			}
			fields = append(fields, f)
			nulls = append(nulls, isNull)
			start = i + 1
		}
	}
	if len(fields) == maxFields {
		return nil, nil, false
	}
	f := line[start:len(line):len(line)]
	isNull := string(f) == null
	if isNull {
		f = f[:0]
	}
	return append(fields, f), append(nulls, isNull), true
}
