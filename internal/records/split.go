package records

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// errCutInRecord is what a chunk reader returns when its chunk, cut
// before the end of the input, ends inside a record: the Splitter put a
// boundary where the parser sees none. It should never happen; it is
// checked so that it cannot go unnoticed.
var errCutInRecord = errors.New("internal error: an input chunk ends inside a record")

// position is where a chunk starts in the whole input: what a Reader
// needs to number lines and offsets as if it had read all before it.
type position struct {
	base     int64 // offset of the chunk's first byte
	nLF, nCR int64 // line feeds and carriage returns before it
	prev     byte  // the byte before it (0 at the start)
	eol      eolMode
}

// Chunk is a run of whole records of an input, cut by a Splitter at a
// record boundary, for a chunk reader (NewChunkReader, Reset) to parse on
// any goroutine. Its records, line numbers, offsets and record errors are
// those a Reader of the whole input gives.
//
// A tail chunk (Tail) is different: it holds the start of the rest of the
// input, and a reader of it reads the rest from the source, so tail
// chunks must be read one at a time, in order, after every chunk before
// them. A Splitter makes one when it cannot cut safely or cheaply (a
// possible end-of-data marker, a record longer than its limit, a source
// error) and then stops.
type Chunk struct {
	data  []byte
	at    position
	final bool      // data ends at the end of the input
	tail  io.Reader // non-nil for a tail chunk: the input after data
}

// Len is the chunk's size in bytes (for a tail chunk, of its start).
func (c *Chunk) Len() int { return len(c.data) }

// Offset is the input offset of the chunk's first byte.
func (c *Chunk) Offset() int64 { return c.at.base }

// Tail reports a tail chunk, whose reader reads the rest of the input.
func (c *Chunk) Tail() bool { return c.tail != nil }

// Splitter cuts the input of a Reader into Chunks of about a given size
// at record boundaries, so that several goroutines can parse them. It
// finds the boundaries with the quote state (CSV) or the escapes (text)
// followed from the start of the input, never by guessing, so that a
// boundary cannot fall inside a quoted field or after an escaped line
// end. Input without quotes (CSV) or backslashes (text) is cut at its
// last line end at memchr speed; other input is scanned byte by byte.
//
// Next must be called by one goroutine at a time; Recycle may be called
// from any.
type Splitter struct {
	src   io.Reader
	size  int // the chunk size aimed at
	limit int // the pending bytes without a boundary that make a tail
	rerr  error
	done  bool
	empty int // reads in a row that returned nothing

	// buf[:n] is read and not yet in a chunk; buf[0] is at position at.
	buf []byte
	n   int
	at  position

	// The scanner: buf[:scanned] is scanned, last is the end of the last
	// record boundary in it (0: none), and the state at scanned.
	format   Format
	quote    byte
	escape   byte
	unquoted byteSet // CSV outside quotes, text: what may end a record
	inQuotes byteSet // CSV inside quotes: what may close them
	scanned  int
	last     int
	quoted   bool
	start    bool // scanned is at the start of a record
	eol      eolMode
	stop     bool // a possible end-of-data marker: the rest is a tail

	free chan []byte // recycled chunk buffers
	opts Options     // of the reader split
}

// Split returns a Splitter of the records of r that Next has not returned
// yet. It reads the header first if it is due. r must not be used after
// it but for Header; a record made unread by Unread must be read with
// Next first (HasUnread). size is the chunk size aimed at, in bytes; a
// chunk is longer when a record is.
func (r *Reader) Split(size int) (*Splitter, error) {
	if r.unread {
		return nil, errors.New("split: a record was unread; read it first")
	}
	if size < 1 {
		return nil, fmt.Errorf("split: chunk size %d: must be positive", size)
	}
	s := &Splitter{src: r.src, size: size, format: r.opts.Format, quote: r.quote, escape: r.escape,
		start: true, free: make(chan []byte, 64), opts: r.opts}
	s.limit = size + r.opts.MaxRecordBytes + 8
	if r.opts.Header && !r.headerRead && r.fatal == nil && !r.done {
		if err := r.readHeader(); err == io.EOF {
			s.done = true
		} else if err != nil {
			return nil, err
		}
	}
	if r.fatal != nil {
		return nil, r.fatal
	}
	s.done = s.done || r.done
	switch s.format {
	case CSV:
		s.unquoted = newByteSet(r.quote, '\n', '\r')
		s.inQuotes = newByteSet(r.quote, r.escape)
	case Text:
		s.unquoted = newByteSet('\\', '\n', '\r')
	}
	s.buf = make([]byte, max(2*size, r.end-r.pos, 4096))
	s.n = copy(s.buf, r.buf[r.pos:r.end])
	s.at = position{base: r.offset(), nLF: r.nLF, nCR: r.nCR, prev: r.lastByte(), eol: r.eol}
	s.eol, s.rerr = r.eol, r.rerr
	if s.format == TSV {
		s.eol = eolLF
	}
	r.fatal = errors.New("records: the reader was split")
	r.src = nil
	return s, nil
}

// HasUnread reports that Next will return a record made unread again
// (see Unread) without reading.
func (r *Reader) HasUnread() bool { return r.unread }

// Next returns the next chunk, or io.EOF after the last. A chunk is
// complete: nothing after it changes how it parses. After a tail chunk
// Next returns io.EOF.
func (s *Splitter) Next() (*Chunk, error) {
	if s.done {
		return nil, io.EOF
	}
	for {
		s.scan()
		switch {
		case s.stop && s.last > 0:
			return s.cut(s.last), nil
		case s.stop:
			return s.tailChunk(), nil
		case s.last >= s.size:
			return s.cut(s.last), nil
		case s.rerr == io.EOF:
			s.done = true
			if s.n == 0 {
				return nil, io.EOF
			}
			c := s.cut(s.n)
			c.final = true
			return c, nil
		case s.rerr != nil:
			return s.tailChunk(), nil
		case s.n >= s.limit && s.last > 0:
			return s.cut(s.last), nil
		case s.n >= s.limit:
			return s.tailChunk(), nil
		}
		s.read()
	}
}

// Recycle hands back the buffer of a chunk its reader is done with. Safe
// for concurrent use; the chunk must not be used after.
func (s *Splitter) Recycle(c *Chunk) {
	if c == nil || c.tail != nil {
		return
	}
	select {
	case s.free <- c.data[:0]:
	default:
	}
	c.data = nil
}

// read reads more input after buf[:n], growing buf when it is full, with
// the bounds of Reader.fill. It reads up to a little past the chunk size
// (or a step past n), not to the end of buf: the bytes after the cut are
// copied to the next chunk's buffer, so the fewer the better.
func (s *Splitter) read() {
	if s.n == len(s.buf) {
		nb := make([]byte, 2*len(s.buf))
		copy(nb, s.buf[:s.n])
		s.buf = nb
	}
	hi := min(len(s.buf), max(s.n, s.size)+s.step())
	n, err := s.src.Read(s.buf[s.n:hi])
	if n < 0 || n > hi-s.n {
		s.rerr = fmt.Errorf("source returned an invalid count %d", n)
		return
	}
	s.n += n
	switch {
	case err != nil:
		s.rerr = err
	case n > 0:
		s.empty = 0
	default:
		if s.empty++; s.empty >= maxEmptyReads {
			s.rerr = io.ErrNoProgress
		}
	}
}

// step is how far past the chunk size (or past what is read) a read goes.
func (s *Splitter) step() int { return max(s.size/8, 4096) }

// cut makes a chunk of buf[:end]: the chunk takes buf, and the bytes
// after end move to a buffer of their own (a recycled one when there is).
func (s *Splitter) cut(end int) *Chunk {
	var next []byte
	select {
	case next = <-s.free:
	default:
	}
	// Room for the rest and a read to a little past the chunk size (see
	// read); a record longer than that grows the buffer as it is read.
	rest := s.n - end
	want := max(rest+s.step(), s.size+s.size/4)
	if cap(next) < want {
		next = make([]byte, want)
	}
	next = next[:cap(next)]
	copy(next, s.buf[end:s.n])
	data := s.buf[:end]
	c := &Chunk{data: data, at: s.at}
	s.at.base += int64(end)
	s.at.nLF += int64(bytes.Count(data, []byte{'\n'}))
	s.at.nCR += int64(bytes.Count(data, []byte{'\r'}))
	if end > 0 {
		s.at.prev = data[end-1]
	}
	s.at.eol = s.eol
	s.buf, s.n = next, rest
	s.scanned -= end
	s.last = 0
	return c
}

// tailChunk makes the last chunk: what is read and the rest of the
// source, read by its reader.
func (s *Splitter) tailChunk() *Chunk {
	s.done = true
	c := &Chunk{data: append([]byte(nil), s.buf[:s.n]...), at: s.at, tail: s.src}
	if s.rerr != nil {
		c.tail = errReader{s.rerr}
	}
	s.buf, s.n, s.src = nil, 0, nil
	return c
}

// errReader returns err, as the source did.
type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// scan follows the record boundaries in buf[scanned:n] with the rules of
// the parsers, up to the first boundary at or after size, the end of what
// is read, or a byte whose meaning depends on bytes not read yet.
func (s *Splitter) scan() {
	b := s.buf[:s.n]
	i := s.scanned
	if i == len(b) || s.stop {
		return
	}
	nl := byte('\n')
	if s.eol == eolCR {
		nl = '\r'
	}
	if s.format == TSV || !s.quoted && s.eol != eolUnknown &&
		(s.format != CSV || bytes.IndexByte(b[i:], s.quote) < 0) && bytes.IndexByte(b[i:], '\\') < 0 {
		// Every line feed of TSV ends a record, and so does every line
		// end of input without quotes or backslashes.
		s.scanned = len(b)
		if from := max(i, s.size-1); from < len(b) {
			if j := bytes.IndexByte(b[from:], nl); j >= 0 {
				s.scanned = from + j + 1
			}
		}
		if j := bytes.LastIndexByte(b[i:s.scanned], nl); j >= 0 {
			s.last = i + j + 1
		}
		s.start = s.last == s.scanned
		return
	}
	s.scanned = s.scanSlow(b, i)
}

// scanSlow is scan one special byte at a time; it returns where it
// stopped.
func (s *Splitter) scanSlow(b []byte, i int) int {
	for i < len(b) {
		if s.format == CSV {
			if s.start {
				// `\.` at the start of a record may be the end marker.
				if b[i] == '\\' {
					if i+1 == len(b) {
						return i
					}
					if b[i+1] == '.' {
						s.stop = true
						return i
					}
				}
				s.start = false
			}
			if s.quoted {
				j := s.inQuotes.index(b[i:])
				if i += j; i == len(b) {
					return i
				}
				if b[i] == s.escape && s.escape != s.quote {
					if i+1 == len(b) {
						return i
					}
					if b[i+1] == s.quote || b[i+1] == s.escape {
						i += 2
					} else {
						i++
					}
					continue
				}
				// The quote closes (a doubled quote closes and reopens).
				s.quoted = false
				i++
				continue
			}
		}
		j := s.unquoted.index(b[i:])
		if i += j; i == len(b) {
			return i
		}
		switch c := b[i]; {
		case c == '\\': // text only: it escapes the next byte
			if i+1 == len(b) {
				return i
			}
			if b[i+1] == '.' {
				s.stop = true
				return i
			}
			i += 2
		case c == '\n':
			i++
			if s.eol != eolCR { // else an error, not a line end
				s.eol = eolLF
				if s.boundary(i) {
					return i
				}
			}
		case c == '\r':
			switch {
			case s.eol == eolCR:
				i++
				if s.boundary(i) {
					return i
				}
			case i+1 == len(b):
				return i
			case b[i+1] == '\n':
				s.eol = eolLF
				i += 2
				if s.boundary(i) {
					return i
				}
			case s.eol == eolUnknown:
				s.eol = eolCR
				i++
				if s.boundary(i) {
					return i
				}
			default: // an error in LF input, not a line end
				i++
			}
		default: // the quote (CSV)
			s.quoted = true
			i++
		}
	}
	return i
}

// boundary records a record boundary at i; true when it ends a chunk.
func (s *Splitter) boundary(i int) bool {
	s.last = i
	s.start = true
	return i >= s.size
}

// NewChunkReader returns a Reader of Chunks (see Reset) with the options
// of the Reader that was split. Its Header is always nil: the header
// was read before the split.
func NewChunkReader(opts Options) (*Reader, error) {
	opts.Header = false
	r, err := newReader(nil, opts, 0)
	if err != nil {
		return nil, err
	}
	r.buf = nil
	r.done = true
	return r, nil
}

// NewReader returns a chunk reader (see NewChunkReader) for the chunks of
// s. Safe for concurrent use.
func (s *Splitter) NewReader() *Reader {
	r, err := NewChunkReader(s.opts)
	if err != nil {
		panic(err) // the options were valid for the reader split
	}
	return r
}

// Reset makes r, a chunk reader, read the records of c (which it must
// not modify, and which must outlive the reading). The buffers r returns
// records in are kept.
func (r *Reader) Reset(c *Chunk) {
	r.pos, r.base, r.prev, r.eol = 0, c.at.base, c.at.prev, c.at.eol
	r.nLF, r.nCR = c.at.nLF, c.at.nCR
	r.state, r.skip, r.perr = psStart, false, nil
	r.headerRead, r.done, r.marker, r.fatal = true, false, false, nil
	r.cur, r.lastErr, r.nexted, r.unread = Record{}, nil, false, false
	r.fast.skip, r.fast.backoff = 0, 0
	r.cut = !c.final && c.tail == nil
	if c.tail == nil {
		r.src, r.buf, r.end, r.eof, r.rerr = nil, c.data, len(c.data), true, io.EOF
		return
	}
	if r.window == nil {
		r.window = make([]byte, windowSize)
	}
	r.src = io.MultiReader(bytes.NewReader(c.data), c.tail)
	r.buf, r.end, r.eof, r.rerr = r.window, 0, false, nil
}
