package records

// parseCSV parses CSV from the window until a record is complete, the
// input ends, or the window is exhausted.
//
// It finds the record's end and decodes its fields in one pass, with the
// rules PostgreSQL applies in two (CopyReadLineText finds the line with
// the quote state, CopyReadAttributesCSV splits it): a quote toggles the
// quote state anywhere in a field; inside quotes an escape makes a
// following quote or escape literal, and when the escape is the quote,
// `""` is a literal quote.
func (r *Reader) parseCSV() status {
	for {
		switch r.state {
		case psStart:
			if r.pos == r.end {
				if r.eof {
					return stEnd
				}
				return stMore
			}
			if r.buf[r.pos] == '\\' {
				n := r.csvMarker()
				if n < 0 {
					return stMore
				}
				if n > 0 {
					r.pos += n
					r.marker = true
					return stEnd
				}
			}
			r.state = psField
		case psField:
			if st, ok := r.csvUnquoted(); ok {
				return st
			}
		case psQuoted:
			if st, ok := r.csvQuoted(); ok {
				return st
			}
		}
	}
}

// csvMarker looks for the end-of-data marker at the start of a record:
// `\.` then a line end. It returns the marker's length with its line end,
// 0 when there is none, and -1 when it needs more input to tell. It looks
// no further than it must, so that a marker is seen as soon as it arrives.
func (r *Reader) csvMarker() int {
	b := r.buf[r.pos:r.end]
	switch {
	case len(b) < 2 && !r.eof, len(b) == 2 && b[1] == '.' && !r.eof:
		return -1
	case len(b) < 3 || b[1] != '.':
		// At the end of the input `\.` without a line end is data.
		return 0
	}
	switch b[2] {
	case '\n':
		if r.eol != eolCR {
			return 3
		}
	case '\r':
		switch {
		case r.eol == eolCR:
			return 3
		case len(b) == 3 && !r.eof:
			return -1
		case len(b) > 3 && b[3] == '\n':
			return 4
		case r.eol == eolUnknown:
			return 3
		}
	}
	return 0
}

// csvUnquoted parses outside quotes. ok reports that parseCSV must return
// st; otherwise the state changed.
func (r *Reader) csvUnquoted() (st status, ok bool) {
	special := &r.special
	for {
		b := r.buf[r.pos:r.end]
		i := special.index(b)
		if i < len(b) && b[i] == r.delim && !r.skip && r.offset() == r.fieldOff {
			i = r.simpleFields(i)
			b = r.buf[r.pos:r.end]
		}
		if i > 0 {
			r.take(i)
		}
		if i == len(b) {
			if !r.eof {
				return stMore, true
			}
			r.endRecordAtEOF()
			return stRecord, true
		}
		switch c := b[i]; c {
		case r.delim:
			r.endField()
			r.pos++
			r.beginField()
		case r.quote:
			if r.opts.Strict && r.offset() != r.fieldOff {
				r.fail(r.col(), reasonStrayQuote)
			}
			r.sawQuote = true
			r.pos++
			r.state = psQuoted
			return 0, false
		case '\n':
			if r.lineEnd(reasonCSVNewline) {
				return stRecord, true
			}
		default: // '\r'
			if st, ok := r.carriageReturn(reasonCSVCarriage); ok {
				return st, true
			}
		}
	}
}

// csvQuoted parses inside quotes. ok reports that parseCSV must return
// st; otherwise the state changed.
func (r *Reader) csvQuoted() (st status, ok bool) {
	quoted := &r.quoted
	for {
		b := r.buf[r.pos:r.end]
		i := quoted.index(b)
		if i > 0 {
			r.take(i)
			b = b[i:]
		}
		if len(b) == 0 {
			if !r.eof {
				return stMore, true
			}
			// The quote swallowed the rest of the input: one error for
			// all of it, whatever else was wrong on the way.
			r.perr = nil
			r.fail(r.col(), reasonUnterminated)
			r.endRecordAtEOF()
			return stRecord, true
		}
		c := b[0]
		switch {
		case c == '\n' || c == '\r':
			r.count(c)
			r.emit(c, 1)
		case c == r.escape && c != r.quote:
			if len(b) == 1 && !r.eof {
				return stMore, true
			}
			if len(b) > 1 && (b[1] == r.quote || b[1] == r.escape) {
				r.emit(b[1], 2)
			} else {
				r.emit(c, 1)
			}
		default: // the quote
			if len(b) == 1 && !r.eof && (r.escape == r.quote || r.opts.Strict) {
				return stMore, true
			}
			if r.escape == r.quote && len(b) > 1 && b[1] == r.quote {
				r.emit(c, 2)
				continue
			}
			if r.opts.Strict && len(b) > 1 && b[1] != r.delim && b[1] != '\n' && b[1] != '\r' {
				r.fail(r.col(), reasonAfterQuote)
			}
			r.pos++
			r.state = psField
			return 0, false
		}
	}
}
