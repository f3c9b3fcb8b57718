package records

import (
	"errors"
	"fmt"
	"io"
)

// windowSize is the size of the input window, the only buffer whose size
// does not depend on the input. A simple line is read in place; other
// records are decoded out of it as they are parsed, so a record may be
// longer than the window.
const windowSize = 128 << 10

// maxEmptyReads bounds the reads in a row that return nothing and no
// error before the reader gives up with io.ErrNoProgress.
const maxEmptyReads = 100

// Record is one record of input. It belongs to the Reader and is valid
// until the next call to Next: the reader reuses its buffers, so a caller
// that keeps a field must copy it.
type Record struct {
	// Fields are the decoded fields: quotes removed (CSV), escapes decoded
	// (text). A NULL field is empty. The capacity of each ends with it, so
	// appending to a field does not overwrite the next.
	Fields [][]byte
	// Null[i] reports whether field i is NULL.
	Null []bool
	// Line is the 1-based line where the record starts, EndLine the line
	// where it ends (they differ when a CSV quoted field or a text escaped
	// line end spans lines).
	Line, EndLine int64
	// Offset is the byte offset of the record's start in the input (after
	// decompression and after a dropped byte-order mark: see
	// Reader.BOMDropped), End the offset just past its last byte, its line
	// end excluded: input[Offset:End] is the record as it was written.
	Offset, End int64
}

// status is what a parse step achieved.
type status uint8

const (
	stMore   status = iota // the window is exhausted; more input is needed
	stRecord               // a record, or a record error, is complete
	stEnd                  // there are no more records
)

// parseState is where the parser is within a record.
type parseState uint8

const (
	psStart  parseState = iota // at the start of a record, nothing consumed
	psField                    // in a field (CSV: outside quotes)
	psQuoted                   // inside a CSV quoted section
)

// eolMode is the line-end convention of the input, set by its first line
// end as PostgreSQL does: LF and CRLF (eolLF), or a lone CR (eolCR).
type eolMode uint8

const (
	eolUnknown eolMode = iota
	eolLF
	eolCR
)

// Reader reads records from a stream. It buffers its input, so it reads
// ahead of the records it has returned.
//
// A Reader is not safe for concurrent use.
type Reader struct {
	src    io.Reader
	bom    *bomReader // the input's first reader, nil for a chunk reader
	opts   Options
	delim  byte
	quote  byte
	escape byte
	null   string
	maxRec int64

	// special holds the bytes that need a look outside CSV quotes (the
	// delimiter, CR, LF, and the quote or the backslash), quoted those
	// inside them (the quote, the escape, CR, LF).
	special byteSet
	quoted  byteSet
	fast    lineSplitter

	// The input window: buf[pos:end] is read but not yet parsed; buf[0]
	// is at offset base of the input. prev is the byte before buf[0].
	buf  []byte
	pos  int
	end  int
	base int64
	prev byte
	eof  bool  // the source has reported io.EOF: buf[pos:end] is all that is left
	rerr error // the source's last error (io.EOF at the end)

	eol eolMode
	nLF int64 // line feeds consumed so far
	nCR int64 // carriage returns consumed so far

	// The record in progress: its decoded fields are rec[0:ends[0]],
	// rec[ends[0]:ends[1]], ...
	state   parseState
	rec     []byte
	ends    []int
	nulls   []bool
	fields  [][]byte
	nfield  int // fields ended so far, stored or not
	recOff  int64
	recEnd  int64 // offset of the record's line end (or of the end of input)
	recLine int64
	endLine int64
	skip    bool         // a record error was found: parse to the record's end, store nothing
	perr    *RecordError // the record's error, if any

	// The field in progress.
	fieldOff int64 // offset of its first raw byte
	sawQuote bool  // CSV: it has a quote, so it is not NULL
	nullPos  int   // text: how many of its raw bytes match Null; -1 none

	header     []string
	headerRead bool
	done       bool // no more records: Next returns io.EOF
	marker     bool // the data ended at an end-of-data marker
	fatal      error

	cur     Record // the record Next returns
	lastErr error  // the error Next returned last
	nexted  bool   // Next has been called
	unread  bool

	// cut: the input is a Chunk that ends at a record boundary before the
	// end of the whole input, so it must not end inside a record.
	cut    bool
	window []byte // a chunk reader's window for tail chunks, kept across Reset
}

// NewReader returns a Reader of r with options opts (see Options.Validate
// for the errors).
func NewReader(r io.Reader, opts Options) (*Reader, error) {
	return newReader(r, opts, windowSize)
}

// newReader is NewReader with a window of size bytes (at least 4: the
// longest look-ahead, `\.` CR LF).
func newReader(r io.Reader, opts Options, size int) (*Reader, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	bom := &bomReader{r: r}
	rd := &Reader{
		src:    bom,
		bom:    bom,
		opts:   opts,
		delim:  opts.Delimiter,
		quote:  opts.Quote,
		escape: opts.Escape,
		null:   opts.Null,
		maxRec: int64(opts.MaxRecordBytes),
		buf:    make([]byte, max(size, 4)),
	}
	rd.fast = newLineSplitter(opts)
	switch opts.Format {
	case CSV:
		rd.special = newByteSet(opts.Delimiter, opts.Quote, '\n', '\r')
		rd.quoted = newByteSet(opts.Quote, opts.Escape, '\n', '\r')
	case Text:
		rd.special = newByteSet(opts.Delimiter, '\\', '\n', '\r')
	case TSV:
		rd.special = newByteSet(opts.Delimiter, '\n', '\r')
		rd.eol = eolLF
	}
	return rd, nil
}

// Next returns the next record; io.EOF after the last one. A
// *RecordError refuses one record and the next call goes on with the next
// record; any other error ends the input (the same error is returned
// from then on). The Record is valid until the next call to Next.
func (r *Reader) Next() (Record, error) {
	if !r.unread {
		r.lastErr, r.nexted = r.next(), true
	}
	r.unread = false
	if r.lastErr != nil {
		return Record{}, r.lastErr
	}
	return r.cur, nil
}

// Unread makes the next call to Next return the record and error of the
// last call again, without reading: a caller may peek at the first record
// (to have the header read) and hand the reader on. The record stays
// valid until then. Unread before the first Next does nothing; twice in
// a row, it is one Unread.
func (r *Reader) Unread() { r.unread = r.nexted }

// Header returns the decoded fields of the header record (Options.Header)
// once the first call to Next has read it, and nil before or without one.
// A NULL header field is "". The caller must not modify the slice.
func (r *Reader) Header() []string { return r.header }

// EndMarker reports whether the data ended at an end-of-data marker (`\.`,
// see the package doc) rather than at the end of the input. The input
// after a marker is not read.
func (r *Reader) EndMarker() bool { return r.marker }

// next reads the next record into r.cur.
func (r *Reader) next() error {
	if r.opts.Header && !r.headerRead {
		if err := r.readHeader(); err != nil {
			return err
		}
	}
	return r.read()
}

// readHeader reads the header record into r.header.
func (r *Reader) readHeader() error {
	r.headerRead = true
	err := r.read()
	var re *RecordError
	if errors.As(err, &re) {
		// Without its header the input cannot be mapped to columns.
		r.fatal = fmt.Errorf("reading the header: %v", re)
		return r.fatal
	}
	if err != nil {
		return err
	}
	r.header = make([]string, len(r.cur.Fields))
	for i, f := range r.cur.Fields {
		r.header[i] = string(f)
	}
	return nil
}

// read parses the next record into r.cur.
func (r *Reader) read() error {
	if r.fatal != nil {
		return r.fatal
	}
	if r.done {
		return io.EOF
	}
	r.begin()
	if r.tryFast() {
		return nil
	}
	for {
		var st status
		switch r.opts.Format {
		case CSV:
			st = r.parseCSV()
		case Text:
			st = r.parseText()
		default:
			st = r.parseTSV()
		}
		switch st {
		case stRecord:
			if r.fatal != nil {
				return r.fatal // a chunk cut inside a record
			}
			return r.finish()
		case stEnd:
			r.done = true
			return io.EOF
		}
		// The parsers ask for more only before the end of the input, so a
		// source error here is a failure, not the end.
		if r.rerr != nil {
			r.fatal = fmt.Errorf("reading input: %w", r.rerr)
			return r.fatal
		}
		r.fill()
	}
}

// fill moves the unparsed bytes to the start of the window and reads
// into the rest. There must be room: the parsers ask for more only when
// they have parsed all but a look-ahead of fewer than 4 bytes, and the
// fast path refills only when the window can move.
func (r *Reader) fill() {
	if r.pos > 0 {
		r.prev = r.buf[r.pos-1]
		n := copy(r.buf, r.buf[r.pos:r.end])
		r.base += int64(r.pos)
		r.pos, r.end = 0, n
	}
	for range maxEmptyReads {
		n, err := r.src.Read(r.buf[r.end:])
		if n < 0 || n > len(r.buf)-r.end {
			r.rerr = fmt.Errorf("source returned an invalid count %d", n)
			return
		}
		r.end += n
		if err != nil {
			r.rerr = err
			r.eof = err == io.EOF
			return
		}
		if n > 0 {
			return
		}
	}
	r.rerr = io.ErrNoProgress
}

// offset is the input offset of the next byte to parse.
func (r *Reader) offset() int64 { return r.base + int64(r.pos) }

// line is the number of the line holding the next byte to parse.
func (r *Reader) line() int64 {
	if r.eol == eolCR {
		return 1 + r.nCR
	}
	return 1 + r.nLF
}

// lastByte is the last byte parsed (0 before any).
func (r *Reader) lastByte() byte {
	if r.pos > 0 {
		return r.buf[r.pos-1]
	}
	return r.prev
}

// count counts a line-end byte c as it is consumed.
func (r *Reader) count(c byte) {
	if c == '\n' {
		r.nLF++
	} else {
		r.nCR++
	}
}

func (r *Reader) begin() {
	r.rec = r.rec[:0]
	r.ends = r.ends[:0]
	r.nulls = r.nulls[:0]
	r.nfield = 0
	r.skip = false
	r.perr = nil
	r.state = psStart
	r.recOff = r.offset()
	r.recEnd = -1
	r.recLine = r.line()
	r.beginField()
}

func (r *Reader) beginField() {
	r.fieldOff = r.offset()
	r.sawQuote = false
	r.nullPos = 0
}

// col is the 1-based number of the field in progress.
func (r *Reader) col() int { return r.nfield + 1 }

// fail records a record error (the first one stands) and stops storing.
func (r *Reader) fail(col int, reason string) {
	if r.perr == nil {
		r.perr = &RecordError{Column: col, Reason: reason}
	}
	r.skip = true
}

func (r *Reader) tooLong() {
	reason := fmt.Sprintf(reasonTooLong, r.maxRec)
	if r.opts.MaxRecordName != "" {
		reason += " (" + r.opts.MaxRecordName + ")"
	}
	r.fail(0, reason)
}

// take copies the next n raw bytes to the field in progress.
func (r *Reader) take(n int) {
	if !r.skip {
		if r.offset()+int64(n)-r.recOff > r.maxRec {
			r.tooLong()
		} else {
			r.rec = append(r.rec, r.buf[r.pos:r.pos+n]...)
		}
	}
	r.pos += n
}

// emit appends the byte c, decoded from the next n raw bytes, to the
// field in progress.
func (r *Reader) emit(c byte, n int) {
	if !r.skip {
		if r.offset()+int64(n)-r.recOff > r.maxRec {
			r.tooLong()
		} else {
			r.rec = append(r.rec, c)
		}
	}
	r.pos += n
}

// simpleFields ends, at once, the field starting at r.pos whose first
// special byte, at r.pos+i, is the delimiter, and the fields after it
// that end the same way: the bulk of most input, with neither quotes nor
// escapes. It must be called at the start of a field, when storing. It
// returns where the scan of the next field stopped, relative to the new
// r.pos: a special byte other than the delimiter, the end of the window,
// or a limit the slow path must report.
func (r *Reader) simpleFields(i int) int {
	special := &r.special
	buf := r.buf[:r.end]
	pos, delim, null := r.pos, r.delim, r.null
	rec, ends, nulls := r.rec, r.ends, r.nulls
	maxEnds := r.opts.MaxFields
	lim := r.recOff + r.maxRec - r.base // the window index the record must not pass
	i += pos
	for i < len(buf) && buf[i] == delim && len(ends) < maxEnds && int64(i) <= lim {
		f := buf[pos:i]
		isNull := string(f) == null
		if !isNull {
			rec = append(rec, f...)
		}
		ends = append(ends, len(rec))
		nulls = append(nulls, isNull)
		pos = i + 1
		i = pos + special.index(buf[pos:])
	}
	r.nfield += len(ends) - len(r.ends)
	r.rec, r.ends, r.nulls, r.pos = rec, ends, nulls, pos
	r.fieldOff = r.offset()
	return i - pos
}

// endField ends the field in progress.
func (r *Reader) endField() {
	r.nfield++
	if r.skip {
		return
	}
	if len(r.ends) == r.opts.MaxFields {
		r.fail(r.nfield, fmt.Sprintf(reasonTooManyFields, r.opts.MaxFields))
		return
	}
	start := 0
	if n := len(r.ends); n > 0 {
		start = r.ends[n-1]
	}
	var null bool
	if r.opts.Format == Text {
		null = r.nullPos == len(r.null)
	} else {
		// Without quotes the raw field is the decoded one.
		null = !r.sawQuote && string(r.rec[start:]) == r.null
	}
	if null {
		r.rec = r.rec[:start] // text decodes `\N` to "N": a NULL is empty
	}
	r.ends = append(r.ends, len(r.rec))
	r.nulls = append(r.nulls, null)
}

// endRecord ends the last field and the record, before its line end is
// consumed.
func (r *Reader) endRecord() {
	r.recEnd = r.offset()
	r.endField()
	r.endLine = r.line()
	if r.offset()-r.recOff > r.maxRec {
		r.tooLong()
	}
}

// endRecordAtEOF ends the last field and the record at the end of the
// input. The record ends on the line of its last byte, which may be a
// line end (of a quoted or escaped line break).
func (r *Reader) endRecordAtEOF() {
	if r.cut {
		r.fatal = errCutInRecord
	}
	r.endRecord()
	nl := byte('\n')
	if r.eol == eolCR {
		nl = '\r'
	}
	if r.endLine > r.recLine && r.lastByte() == nl {
		r.endLine--
	}
}

// finish makes r.cur of the record just parsed, or returns its error.
func (r *Reader) finish() error {
	if r.perr != nil {
		e := r.perr
		e.Line, e.EndLine, e.Offset, e.End = r.recLine, r.endLine, r.recOff, r.recEnd
		return e
	}
	r.fields = r.fields[:0]
	start := 0
	for _, e := range r.ends {
		r.fields = append(r.fields, r.rec[start:e:e])
		start = e
	}
	r.cur = Record{Fields: r.fields, Null: r.nulls, Line: r.recLine, EndLine: r.endLine, Offset: r.recOff, End: r.recEnd}
	return nil
}

// lineEnd handles the LF at r.pos, outside CSV quotes; reason is the
// record error for an LF in CR input. ok reports a complete record.
func (r *Reader) lineEnd(reason string) (ok bool) {
	if r.eol == eolCR {
		r.fail(r.col(), reason)
		r.nLF++
		r.pos++
		return false
	}
	r.eol = eolLF
	r.endRecord()
	r.nLF++
	r.pos++
	return true
}

// carriageReturn handles the CR at r.pos, outside CSV quotes; reason is
// the record error for a CR that is not a line end. It returns stMore
// when it needs to see the next byte, stRecord for a complete record, and
// ok false when the CR was consumed as an error and parsing goes on.
func (r *Reader) carriageReturn(reason string) (st status, ok bool) {
	if r.eol == eolCR {
		r.endRecord()
		r.nCR++
		r.pos++
		return stRecord, true
	}
	if r.pos+1 == r.end && !r.eof {
		return stMore, true
	}
	if r.pos+1 < r.end && r.buf[r.pos+1] == '\n' {
		r.eol = eolLF
		r.endRecord()
		r.nCR++
		r.nLF++
		r.pos += 2
		return stRecord, true
	}
	if r.eol == eolUnknown {
		// The first line ends in a lone CR: so do all the others.
		r.eol = eolCR
		r.endRecord()
		r.nCR++
		r.pos++
		return stRecord, true
	}
	r.fail(r.col(), reason)
	r.nCR++
	r.pos++
	return stMore, false
}
