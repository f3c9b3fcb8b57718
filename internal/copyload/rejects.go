package copyload

import (
	"bytes"
	"encoding/binary"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/jackc/pgx/v5/pgtype"
)

// Reject is a row set aside, with where it came from and why.
type Reject struct {
	Source string `json:"source"`
	Line   int64  `json:"line"`             // 1-based line (row number for generators)
	Column string `json:"column,omitempty"` // the offending column, when known
	Reason string `json:"reason"`
	Record string `json:"record,omitempty"` // the row: see RecordForm
	// RecordForm says what Record holds: FormInput, the record exactly as
	// it is in the input (its line end left out), or FormCSV, its fields
	// re-serialised as CSV, when the input cannot be read again (stdin, a
	// pipe, a compressed file, a generator). Empty without a record.
	RecordForm string `json:"record_form,omitempty"`
}

// The forms of a reject's record (Reject.RecordForm).
const (
	FormInput = "input" // the bytes of the input, as written
	FormCSV   = "csv"   // the fields re-serialised as CSV
)

// rejectHeader is the rejects file's header line.
var rejectHeader = []string{"source", "line", "column", "reason", "record", "record_form"}

// csvLine is r as a line of the rejects file.
func (r Reject) csvLine() []string {
	return []string{r.Source, strconv.FormatInt(r.Line, 10), r.Column, r.Reason, r.Record, r.RecordForm}
}

// RejectSink receives rejects. Implementations must be safe for
// concurrent use (workers report server-side rejects).
type RejectSink interface {
	Reject(Reject) error
}

// BatchRejectSink is a RejectSink that also takes the rejects of one
// batch at once (one write and flush for thousands of duplicates).
type BatchRejectSink interface {
	RejectSink
	RejectBatch([]Reject) error
}

// CSVRejects writes rejects as CSV with a header line:
// source,line,column,reason,record,record_form.
type CSVRejects struct {
	mu     sync.Mutex
	w      *csv.Writer
	header bool
}

// NewCSVRejects writes to w.
func NewCSVRejects(w io.Writer) *CSVRejects { return &CSVRejects{w: csv.NewWriter(w)} }

// Reject writes one line and flushes it (rejects are rare; losing the file
// tail on a crash would lose the reasons).
func (c *CSVRejects) Reject(r Reject) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.header {
		c.header = true
		if err := c.w.Write(rejectHeader); err != nil {
			return err
		}
	}
	if err := c.w.Write(r.csvLine()); err != nil {
		return fmt.Errorf("writing reject: %w", err)
	}
	c.w.Flush()
	return c.w.Error()
}

// RejectBatch writes rs and flushes once.
func (c *CSVRejects) RejectBatch(rs []Reject) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.header {
		c.header = true
		if err := c.w.Write(rejectHeader); err != nil {
			return err
		}
	}
	for _, r := range rs {
		if err := c.w.Write(r.csvLine()); err != nil {
			return fmt.Errorf("writing reject: %w", err)
		}
	}
	c.w.Flush()
	return c.w.Error()
}

// encodeRecord renders fields as one CSV line (without newline) for the
// reject file, so a rejected row can be fixed and reloaded.
func encodeRecord(fields [][]byte, nulls []bool) string {
	var b []byte
	for i, f := range fields {
		if i > 0 {
			b = append(b, ',')
		}
		if nulls != nil && nulls[i] {
			continue
		}
		b = appendCSVField(b, f)
	}
	return string(b)
}

func appendCSVField(b, f []byte) []byte {
	quote := len(f) == 0
	for _, c := range f {
		if c == ',' || c == '"' || c == '\n' || c == '\r' {
			quote = true
			break
		}
	}
	if !quote {
		return append(b, f...)
	}
	b = append(b, '"')
	for _, c := range f {
		if c == '"' {
			b = append(b, '"')
		}
		b = append(b, c)
	}
	return append(b, '"')
}

// rowRecord renders row i of b, as it was sent, as a CSV record for the
// reject file: the text format is unescaped field by field; the binary
// format is decoded with pgx's codecs and spelled in PostgreSQL's text
// form, so the record can be fixed and reloaded with `pgts load`.
func (l *Loader) rowRecord(b *batch, i int) string {
	row := b.rowRange(i, i+1)
	var fields [][]byte
	var nulls []bool
	var err error
	if l.binary {
		fields, nulls, err = decodeBinaryRow(l.typeMap, l.cols, row)
	} else {
		fields, nulls, err = decodeTextRow(row)
	}
	if err != nil {
		return ""
	}
	return encodeRecord(fields, nulls)
}

// decodeTextRow splits one COPY text line (with its newline) into fields.
func decodeTextRow(row []byte) ([][]byte, []bool, error) {
	row = bytes.TrimSuffix(row, []byte{'\n'})
	parts := bytes.Split(row, []byte{'\t'})
	fields := make([][]byte, len(parts))
	nulls := make([]bool, len(parts))
	for k, p := range parts {
		if string(p) == `\N` {
			nulls[k] = true
			continue
		}
		var f []byte
		for j := 0; j < len(p); j++ {
			c := p[j]
			if c != '\\' || j+1 == len(p) {
				f = append(f, c)
				continue
			}
			j++
			switch p[j] {
			case 'n':
				f = append(f, '\n')
			case 'r':
				f = append(f, '\r')
			case 't':
				f = append(f, '\t')
			case 'b':
				f = append(f, '\b')
			case 'f':
				f = append(f, '\f')
			case 'v':
				f = append(f, '\v')
			default:
				f = append(f, p[j])
			}
		}
		fields[k] = f
	}
	return fields, nulls, nil
}

// decodeBinaryRow decodes one COPY binary tuple (field count, then length-
// prefixed values) into the text form of each value.
func decodeBinaryRow(m *pgtype.Map, cols []Column, row []byte) ([][]byte, []bool, error) {
	if len(row) < 2 {
		return nil, nil, errors.New("short binary row")
	}
	n := int(int16(binary.BigEndian.Uint16(row)))
	row = row[2:]
	if n != len(cols) {
		return nil, nil, fmt.Errorf("binary row has %d fields, want %d", n, len(cols))
	}
	fields := make([][]byte, n)
	nulls := make([]bool, n)
	for k := 0; k < n; k++ {
		if len(row) < 4 {
			return nil, nil, errors.New("short binary row")
		}
		size := int32(binary.BigEndian.Uint32(row))
		row = row[4:]
		if size < 0 {
			nulls[k] = true
			continue
		}
		if int(size) > len(row) {
			return nil, nil, errors.New("short binary row")
		}
		val := row[:size]
		row = row[size:]
		oid := cols[k].Type.OID
		t, ok := m.TypeForOID(oid)
		if !ok {
			return nil, nil, fmt.Errorf("no decoder for type %d", oid)
		}
		v, err := t.Codec.DecodeValue(m, oid, pgtype.BinaryFormatCode, val)
		if err != nil {
			return nil, nil, err
		}
		text, err := m.Encode(oid, pgtype.TextFormatCode, v, nil)
		if err != nil {
			return nil, nil, err
		}
		fields[k] = text
	}
	return fields, nulls, nil
}
