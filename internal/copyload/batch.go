package copyload

import (
	"bytes"
	"io"

	"github.com/pgts/pgts/internal/copyenc"
)

// rowEncoder is a COPY-format row buffer: copyenc's BinaryWriter or
// TextWriter.
type rowEncoder interface {
	copyenc.FieldWriter
	// Field parses text with the codec and appends the field.
	Field(c copyenc.Codec, text []byte) error
	// AppendRows appends whole rows encoded by a writer of the same kind.
	AppendRows(rows []byte)
	Bytes() []byte
	Len() int
	Truncate(n int)
	Reset()
}

// batch is up to BatchRows rows bound for one table (a leaf partition, the
// parent, or a plain table), sent in one transaction.
type batch struct {
	seq   int64  // position in input order, from 1; the ledger key
	table string // quoted qualified table to COPY into
	leaf  string // partition name for logs ("" for the parent or a plain table)
	lo    int64  // partition lower bound (micros), for routing
	hi    int64
	enc   rowEncoder
	ends  []int       // end offset of each row in enc.Bytes()
	lines []int64     // source line (or generator row number) of each row
	srcs  []int32     // index into the loader's source names, per row
	spans []inputSpan // where each row's record lies in its input, for rejects
	// digest is batchDigest's, for the ledger; set by the worker once.
	digest []byte
	bulk   *bulkPart // the bulk path's partition (bulk.go), nil on the live path
	// unit, on a carrier batch of its own (no rows), is a whole bulk
	// partition sent in one transaction (bulkunit.go).
	unit []*batch
	// With Config.OnConflict, what its committed try did (conflict.go):
	// rows inserted, rows that overwrote a stored one, stored rows kept.
	inserted, updated, kept int64
	// [tlo, thi): the times (micros) of its rows, for the rollups' record
	// (rollups.go); empty (thi <= tlo) until a row is routed to it.
	tlo, thi int64
}

// noteTime widens [b.tlo, b.thi) to hold micros.
func (b *batch) noteTime(micros int64) {
	if b.thi <= b.tlo {
		b.tlo, b.thi = micros, micros+1
		return
	}
	b.tlo, b.thi = min(b.tlo, micros), max(b.thi, micros+1)
}

func (b *batch) rows() int { return len(b.ends) }

// rowRange returns the encoded bytes of rows [i, j).
func (b *batch) rowRange(i, j int) []byte {
	start := 0
	if i > 0 {
		start = b.ends[i-1]
	}
	return b.enc.Bytes()[start:b.ends[j-1]]
}

func (b *batch) reset() {
	b.enc.Reset()
	b.ends, b.lines, b.srcs, b.spans = b.ends[:0], b.lines[:0], b.srcs[:0], b.spans[:0]
	b.seq, b.table, b.leaf, b.digest, b.bulk = 0, "", "", nil, nil
	b.inserted, b.updated, b.kept = 0, 0, 0
	b.tlo, b.thi = 0, 0
}

// copyReader streams rows [i, j) as one COPY's data.
func (b *batch) copyReader(i, j int, binary bool) io.Reader {
	return copyData(binary, b.rowRange(i, j))
}

// unitReader streams all the rows of batches as one COPY's data.
func unitReader(batches []*batch, binary bool) io.Reader {
	rows := make([][]byte, len(batches))
	for i, b := range batches {
		rows[i] = b.rowRange(0, b.rows())
	}
	return copyData(binary, rows...)
}

// copyData streams encoded rows in the COPY format: binary needs its
// header and trailer around them.
func copyData(binary bool, rows ...[]byte) io.Reader {
	rs := make([]io.Reader, 0, len(rows)+2)
	if binary {
		rs = append(rs, bytes.NewReader(copyenc.BinaryHeader))
	}
	for _, r := range rows {
		rs = append(rs, bytes.NewReader(r))
	}
	if binary {
		rs = append(rs, bytes.NewReader(copyenc.BinaryTrailer))
	}
	return io.MultiReader(rs...)
}
