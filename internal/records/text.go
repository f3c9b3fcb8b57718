package records

// parseText parses COPY text format from the window until a record is
// complete, the input ends, or the window is exhausted.
//
// PostgreSQL finds the line first (a backslash pairs with the byte after
// it, so an escaped line end does not end the line), then decodes the
// fields; one pass does both here, with the same result.
func (r *Reader) parseText() status {
	if st, wait := r.beginRecord(); wait {
		return st
	}
	special := &r.special
	for {
		b := r.buf[r.pos:r.end]
		i := special.index(b)
		if i < len(b) && b[i] == r.delim && !r.skip && r.offset() == r.fieldOff {
			i = r.simpleFields(i)
			b = r.buf[r.pos:r.end]
		}
		if i > 0 {
			if r.nullPos >= 0 {
				r.matchNull(b[:i])
			}
			r.take(i)
		}
		if i == len(b) {
			if !r.eof {
				return stMore
			}
			r.endRecordAtEOF()
			return stRecord
		}
		switch b[i] {
		case r.delim:
			r.endField()
			r.pos++
			r.beginField()
		case '\\':
			if st, ok := r.textEscape(); ok {
				return st
			}
		case '\n':
			if r.lineEnd(reasonTextNewline) {
				return stRecord
			}
		default: // '\r'
			if st, ok := r.carriageReturn(reasonTextCarriage); ok {
				return st
			}
		}
	}
}

// matchNull follows the raw field against Null.
func (r *Reader) matchNull(raw []byte) {
	n := r.nullPos
	if n+len(raw) <= len(r.null) && r.null[n:n+len(raw)] == string(raw) {
		r.nullPos += len(raw)
	} else {
		r.nullPos = -1
	}
}

// textEscape decodes the escape sequence at r.pos. ok reports that
// parseText must return st; otherwise parsing goes on. It looks no further
// than the sequence needs.
func (r *Reader) textEscape() (st status, ok bool) {
	b := r.buf[r.pos:r.end]
	if len(b) < 2 {
		if !r.eof {
			return stMore, true
		}
		r.fail(r.col(), reasonTrailingEscape)
		r.pos++
		r.endRecordAtEOF()
		return stRecord, true
	}
	c, n := b[1], 2
	switch {
	case c == '.':
		return r.textMarker(b)
	case '0' <= c && c <= '7':
		// Up to three octal digits; the value is taken modulo 256, as
		// PostgreSQL does (byte arithmetic wraps the same way).
		c -= '0'
		for n < 4 {
			if n == len(b) {
				if !r.eof {
					return stMore, true
				}
				break
			}
			d := b[n]
			if d < '0' || d > '7' {
				break
			}
			c = c<<3 | (d - '0')
			n++
		}
	case c == 'x':
		// Up to two hex digits; without any, \x is "x".
		var v byte
		digits := 0
		for digits < 2 {
			if n == len(b) {
				if !r.eof {
					return stMore, true
				}
				break
			}
			d, isHex := unhex(b[n])
			if !isHex {
				break
			}
			v = v<<4 | d
			n++
			digits++
		}
		if digits > 0 {
			c = v
		}
	case c == 'b':
		c = '\b'
	case c == 'f':
		c = '\f'
	case c == 'n':
		c = '\n'
	case c == 'r':
		c = '\r'
	case c == 't':
		c = '\t'
	case c == 'v':
		c = '\v'
	case c == '\n' || c == '\r':
		// An escaped line end is data, on the next line.
		r.count(c)
	}
	if r.nullPos >= 0 {
		r.matchNull(b[:n])
	}
	r.emit(c, n)
	return 0, false
}

// textMarker handles `\.` at r.pos (b is the window from there): followed
// by a line end, or at the very end of the input, it ends the data, and a
// record begun before it on the line is the last one.
func (r *Reader) textMarker(b []byte) (st status, ok bool) {
	n := 0 // the marker's length with its line end; 0 when corrupt
	switch {
	case len(b) == 2:
		if !r.eof {
			return stMore, true
		}
		n = 2
	case b[2] == '\n':
		n = 3
	case b[2] == '\r':
		switch {
		case r.eol == eolCR:
			n = 3
		case len(b) == 3 && !r.eof:
			return stMore, true
		case len(b) > 3 && b[3] == '\n':
			n = 4
		case r.eol == eolUnknown:
			n = 3
		}
	}
	if n == 0 {
		r.fail(r.col(), reasonMarkerCorrupt)
		r.pos += 2
		return 0, false
	}
	r.marker = true
	if r.offset() == r.recOff {
		r.pos += n
		return stEnd, true
	}
	r.endRecord()
	r.pos += n
	r.done = true
	return stRecord, true
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// parseTSV parses tab-separated values from the window until a record is
// complete, the input ends, or the window is exhausted. Only the
// delimiter and line ends are special.
func (r *Reader) parseTSV() status {
	if st, wait := r.beginRecord(); wait {
		return st
	}
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
				return stMore
			}
			r.endRecordAtEOF()
			return stRecord
		}
		switch b[i] {
		case r.delim:
			r.endField()
			r.pos++
			r.beginField()
		case '\n':
			r.endRecord()
			r.nLF++
			r.pos++
			return stRecord
		default: // '\r': a line end before LF, data otherwise
			if i+1 == len(b) && !r.eof {
				return stMore
			}
			if i+1 < len(b) && b[i+1] == '\n' {
				r.endRecord()
				r.nCR++
				r.nLF++
				r.pos += 2
				return stRecord
			}
			r.nCR++
			r.take(1)
		}
	}
}

// beginRecord moves past the start of a record when input is there; wait
// reports that there is none yet (stMore) or no more (stEnd), with st the
// status to return.
func (r *Reader) beginRecord() (st status, wait bool) {
	if r.state != psStart {
		return 0, false
	}
	if r.pos == r.end {
		if r.eof {
			return stEnd, true
		}
		return stMore, true
	}
	r.state = psField
	return 0, false
}
