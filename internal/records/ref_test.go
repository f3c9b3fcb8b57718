package records

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
)

// This file holds a reference reader for the differential fuzz tests: the
// rules of the package doc written the way PostgreSQL's copyfromparse.c
// applies them, in two passes over the whole input (find the line with
// the quote or escape state, then split and decode its fields), with no
// window, no look-ahead and no recovery. The Reader does both passes at
// once over a window refilled at arbitrary points; the two must agree up
// to the first error, where PostgreSQL stops.

// refRecord is a record of the reference reader, rendered as the tests
// render the Reader's, or an error (its line only: the Reader resumes
// after it, the reference does not).
type refRecord struct {
	text    string
	err     bool
	errLine int64
}

type refReader struct {
	in  []byte
	o   Options
	pos int
	eol eolMode
}

// refRead reads in to its end, its end marker or its first error.
func refRead(in []byte, o Options) (recs []refRecord, marker bool) {
	r := &refReader{in: in, o: o.withDefaults()}
	if r.o.Format == TSV {
		r.eol = eolLF
	}
	for {
		start := r.pos
		line := r.lineNo(start)
		content, end, kind := r.splitLine()
		switch kind {
		case lineNone:
			return recs, false
		case lineMarker:
			if len(content) > 0 {
				recs = append(recs, r.record(content, line, r.endLineNo(start, end, false)))
			}
			return recs, true
		case lineError:
			return append(recs, refRecord{err: true, errLine: line}), false
		}
		rec := r.record(content, line, r.endLineNo(start, end, kind == lineAtEOF))
		recs = append(recs, rec)
		if rec.err {
			return recs, false
		}
	}
}

const (
	lineNone   = iota // no more input
	lineEnded         // ended by a line end
	lineAtEOF         // ended by the end of the input
	lineMarker        // ended by the end-of-data marker
	lineError         // a malformed line
)

func (r *refReader) nl() byte {
	if r.eol == eolCR {
		return '\r'
	}
	return '\n'
}

// lineNo is the number of the line holding in[off].
func (r *refReader) lineNo(off int) int64 {
	return 1 + int64(bytes.Count(r.in[:off], []byte{r.nl()}))
}

// endLineNo is the line of a record whose content is in[start:end].
func (r *refReader) endLineNo(start, end int, atEOF bool) int64 {
	n := r.lineNo(end)
	if atEOF && end > start && r.in[end-1] == r.nl() && n > r.lineNo(start) {
		n--
	}
	return n
}

// splitLine finds the next line (CopyReadLineText): its content, the
// offset where the content ends, and how it ended.
func (r *refReader) splitLine() (content []byte, end, kind int) {
	in, o := r.in, r.o
	start := r.pos
	if start == len(in) {
		return nil, start, lineNone
	}
	csv := o.Format == CSV
	sameEscape := o.Escape == o.Quote
	inQuote, lastWasEscape := false, false
	for i := start; i < len(in); {
		c := in[i]
		i++
		if csv {
			if inQuote && !sameEscape && c == o.Escape {
				lastWasEscape = !lastWasEscape
			}
			if c == o.Quote && !lastWasEscape {
				inQuote = !inQuote
			}
			if sameEscape || c != o.Escape {
				lastWasEscape = false
			}
		}
		if csv && inQuote {
			continue
		}
		switch {
		case c == '\n' && o.Format != TSV:
			if r.eol == eolCR {
				return nil, i - 1, lineError
			}
			r.eol = eolLF
			r.pos = i
			return in[start : i-1], i - 1, lineEnded
		case c == '\n':
			r.pos = i
			return in[start : i-1], i - 1, lineEnded
		case c == '\r' && o.Format == TSV:
			if i < len(in) && in[i] == '\n' {
				r.pos = i + 1
				return in[start : i-1], i - 1, lineEnded
			}
		case c == '\r':
			switch {
			case r.eol == eolCR:
				r.pos = i
			case i < len(in) && in[i] == '\n':
				r.eol = eolLF
				r.pos = i + 1
			case r.eol == eolUnknown:
				r.eol = eolCR
				r.pos = i
			default:
				return nil, i - 1, lineError
			}
			return in[start : i-1], i - 1, lineEnded
		case c == '\\' && o.Format == Text:
			if i == len(in) {
				return nil, i - 1, lineError // a backslash ends the input
			}
			if in[i] != '.' {
				i++ // the escaped byte, whatever it is
				continue
			}
			if !r.textMarker(i + 1) {
				return nil, i - 1, lineError // corrupt end marker
			}
			return in[start : i-1], i - 1, lineMarker
		case c == '\\' && csv && i-1 == start && r.csvMarker(i):
			return nil, start, lineMarker
		}
	}
	r.pos = len(in)
	return in[start:], len(in), lineAtEOF
}

// textMarker reports whether `\.` followed by in[i:] is an end marker.
func (r *refReader) textMarker(i int) bool {
	in := r.in
	switch {
	case i == len(in), in[i] == '\n':
		return true
	case in[i] == '\r':
		return r.eol != eolLF || (i+1 < len(in) && in[i+1] == '\n')
	}
	return false
}

// csvMarker reports whether `\` followed by in[i:] is an end marker.
func (r *refReader) csvMarker(i int) bool {
	in := r.in
	if i+1 >= len(in) || in[i] != '.' {
		return false
	}
	switch in[i+1] {
	case '\n':
		return r.eol != eolCR
	case '\r':
		crlf := i+2 < len(in) && in[i+2] == '\n'
		return r.eol == eolCR || (crlf && r.eol != eolCR) || r.eol == eolUnknown
	}
	return false
}

// record splits and decodes a line (CopyReadAttributesCSV/Text).
func (r *refReader) record(line []byte, lineNo, endLine int64) refRecord {
	var fields []string
	var nulls []bool
	o := r.o
	for {
		var field []byte
		start, i := 0, 0
		sawQuote, foundDelim, escaped := false, false, false
		switch o.Format {
		case CSV:
			inQuote := false
			for i < len(line) {
				c := line[i]
				i++
				if !inQuote {
					if c == o.Delimiter {
						foundDelim = true
						break
					}
					if c == o.Quote {
						sawQuote, inQuote = true, true
						continue
					}
					field = append(field, c)
					continue
				}
				if c == o.Escape && i < len(line) && (line[i] == o.Escape || line[i] == o.Quote) {
					field = append(field, line[i])
					i++
					continue
				}
				if c == o.Quote {
					inQuote = false
					continue
				}
				field = append(field, c)
			}
			if inQuote {
				return refRecord{err: true, errLine: lineNo}
			}
		case Text:
			for i < len(line) {
				c := line[i]
				i++
				if c == o.Delimiter {
					foundDelim = true
					break
				}
				if c == '\\' {
					escaped = true
					c = line[i]
					i++
					switch {
					case c >= '0' && c <= '7':
						v := int(c - '0')
						for k := 0; k < 2 && i < len(line) && line[i] >= '0' && line[i] <= '7'; k++ {
							v = v*8 + int(line[i]-'0')
							i++
						}
						c = byte(v & 0xff)
					case c == 'x' && i < len(line) && isHexDigit(line[i]):
						v := hexValue(line[i])
						i++
						if i < len(line) && isHexDigit(line[i]) {
							v = v*16 + hexValue(line[i])
							i++
						}
						c = byte(v)
					default:
						if d := strings.IndexByte("bfnrtv", c); d >= 0 {
							c = "\b\f\n\r\t\v"[d]
						}
					}
				}
				field = append(field, c)
			}
		case TSV:
			for i < len(line) {
				c := line[i]
				i++
				if c == o.Delimiter {
					foundDelim = true
					break
				}
				field = append(field, c)
			}
		}
		raw := line[start:i]
		if foundDelim {
			raw = raw[:len(raw)-1]
		}
		_ = escaped
		null := !sawQuote && string(raw) == o.Null
		if null {
			field = nil
		}
		fields = append(fields, string(field))
		nulls = append(nulls, null)
		line = line[i:]
		if !foundDelim {
			break
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d-%d", lineNo, endLine)
	for i, f := range fields {
		if nulls[i] {
			b.WriteString(" NULL")
		} else {
			fmt.Fprintf(&b, " %q", f)
		}
	}
	return refRecord{text: b.String()}
}

func isHexDigit(c byte) bool { _, ok := unhex(c); return ok }

func hexValue(c byte) int { v, _ := unhex(c); return int(v) }

// differential checks the Reader against the reference reader on input,
// up to the first error.
func differential(t *testing.T, input []byte, o Options) {
	t.Helper()
	o.MaxRecordBytes, o.MaxFields = MaxMaxRecordBytes, MaxMaxFields
	want, wantMarker := refRead(input, o)
	for _, size := range []int{5, windowSize} {
		r, err := newReader(bytes.NewReader(input), o, size)
		if err != nil {
			t.Fatal(err)
		}
		compareRef(t, r, input, o, want, wantMarker)
	}
}

func compareRef(t *testing.T, r *Reader, input []byte, o Options, want []refRecord, wantMarker bool) {
	t.Helper()
	for i, w := range want {
		rec, err := r.Next()
		if w.err {
			re, ok := err.(*RecordError)
			if !ok || re.Line != w.errLine {
				t.Fatalf("input %q, options %+v: record %d = %s, want an error on line %d", input, o, i+1, render(rec, err), w.errLine)
			}
			return
		}
		if got := render(rec, err); got != w.text {
			t.Fatalf("input %q, options %+v: record %d = %s, want %s", input, o, i+1, got, w.text)
		}
	}
	if rec, err := r.Next(); err != io.EOF {
		t.Fatalf("input %q, options %+v: record %d = %s, want the end", input, o, len(want)+1, render(rec, err))
	}
	if r.EndMarker() != wantMarker {
		t.Fatalf("input %q, options %+v: EndMarker() = %v, want %v", input, o, r.EndMarker(), wantMarker)
	}
}
