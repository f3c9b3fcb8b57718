package records

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

var utf8BOM = []byte{0xef, 0xbb, 0xbf}

// errUTF16 refuses input that starts with a UTF-16 byte-order mark.
var errUTF16 = errors.New("the input starts with a UTF-16 byte-order mark: pgts reads UTF-8 " +
	"(convert it first, e.g. iconv -f UTF-16 -t UTF-8 FILE | pgts load TABLE -)")

// bomReader drops a UTF-8 byte-order mark at the start of the input (as
// spreadsheet programs write it) and refuses a UTF-16 one. Record offsets
// count from after a dropped mark.
type bomReader struct {
	r       io.Reader
	started bool
	head    []byte // bytes read while looking for a mark, not yet returned
	headErr error  // the error that came with them
	dropped bool   // a UTF-8 mark was dropped
}

func (b *bomReader) Read(p []byte) (int, error) {
	if !b.started {
		b.started = true
		// Read up to 3 bytes with the window's own bounds: a source
		// that makes no progress or lies about its count is the
		// Reader's to report.
		var h [3]byte
		n := 0
		var err error
		for tries := 0; n < 3 && err == nil && tries < maxEmptyReads; tries++ {
			k, e := b.r.Read(h[n:])
			if k < 0 || k > 3-n {
				return 0, fmt.Errorf("source returned an invalid count %d", k)
			}
			n, err = n+k, e
		}
		switch {
		case bytes.HasPrefix(h[:n], []byte{0xff, 0xfe}), bytes.HasPrefix(h[:n], []byte{0xfe, 0xff}):
			b.headErr = errUTF16
		case n == 3 && bytes.Equal(h[:], utf8BOM):
			n, b.dropped = 0, true
		}
		b.head = append([]byte(nil), h[:n]...)
		if b.headErr == nil && err != nil {
			b.headErr = io.EOF // a short input (ErrUnexpectedEOF) ends there
			if err != io.EOF && err != io.ErrUnexpectedEOF {
				b.headErr = err
			}
		}
		if b.headErr == errUTF16 {
			b.head = nil
		}
	}
	if len(b.head) > 0 {
		n := copy(p, b.head)
		b.head = b.head[n:]
		return n, nil
	}
	if b.headErr != nil {
		return 0, b.headErr
	}
	return b.r.Read(p)
}

// BOMDropped reports whether a UTF-8 byte-order mark was dropped from the
// start of the input, once the first record is read: record offsets then
// count from after it, so the record at Offset o is at o+3 in the input
// as stored. It is false for a chunk reader (see Splitter), whose
// offsets are those of the reader it was split from.
func (r *Reader) BOMDropped() bool {
	return r.bom != nil && r.bom.dropped
}
