package copyload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/pgts/pgts/internal/copyenc"
	"github.com/pgts/pgts/internal/gen"
	"github.com/pgts/pgts/internal/partition"
	"github.com/pgts/pgts/internal/records"
)

// Source produces the rows of a load. Run feeds them to the router on the
// calling goroutine and returns at the end of the input, on ctx's end, or
// on the first fatal error.
type Source interface {
	// CopyColumns returns the target columns the source writes, in order.
	CopyColumns(t *Target) ([]Column, error)
	Run(ctx context.Context, r *router) error
}

// Input is one file (or stdin) of a FileSource.
type Input struct {
	Name   string // for rejects and messages
	Reader *records.Reader
	// Raw is the input as stored when it can be read again at an offset
	// (records.Source.ReaderAt: a regular, uncompressed file), nil
	// otherwise. With it, rejects hold each record as it was written;
	// without, its fields re-serialised as CSV.
	Raw io.ReaderAt
}

// FileSource reads delimited records. Columns maps each input field to a
// target column, in order.
type FileSource struct {
	Inputs  []Input
	Columns []int // target column index per input field
	// Parsers is the number of goroutines that parse and encode records.
	// With one (or zero) the router's goroutine does it. With more, each
	// input is cut into chunks at record boundaries (records.Splitter),
	// the chunks are parsed and encoded in parallel, and the router takes
	// their rows in input order: batches, their digests, line numbers and
	// rejects are the same as with one (see parse.go).
	Parsers int
	// ChunkBytes is the size of those chunks (0: DefaultChunkBytes).
	ChunkBytes int
}

// CopyColumns implements Source.
func (s *FileSource) CopyColumns(t *Target) ([]Column, error) {
	cols := make([]Column, len(s.Columns))
	for i, ci := range s.Columns {
		if ci < 0 || ci >= len(t.Columns) {
			return nil, fmt.Errorf("input field %d maps to no column", i+1)
		}
		cols[i] = t.Columns[ci]
	}
	return cols, nil
}

// fileRows turns the records of one input into rows. It is read-only
// once made, so parse goroutines share it.
type fileRows struct {
	l         *Loader
	name      string // the input's name
	src       int32  // the input's index in l.sources
	cols      []Column
	timeField int // -1 without a time column
	// timeDirect: the time column's field is encoded from the micros
	// prepare read (binary COPY, and the column's codec reads the text
	// exactly as the routing does), not parsed a second time.
	timeDirect bool
	// quick holds each column's quick reader for binary loads
	// (copyenc.QuickOf), notNull its NOT NULL.
	quick   []copyenc.Quick
	notNull []bool
	lo, hi  int64
	raw     *RawInput // nil when the input cannot be read again
}

// Run implements Source.
func (s *FileSource) Run(ctx context.Context, r *router) error {
	l := r.l
	cols := l.cols // CopyColumns' result, resolved by Loader.Run
	timeField := -1
	for i, c := range cols {
		if l.target.Series != nil && c.Name == l.target.Series.TimeColumn {
			timeField = i
		}
	}
	if l.target.Series != nil && timeField < 0 {
		return fmt.Errorf("the input has no %q column, the time column of %s", l.target.Series.TimeColumn, l.target)
	}
	lo, hi := int64(0), int64(0)
	if l.target.Series != nil {
		lo, hi = l.target.Series.Window(l.cfg.Now())
	}
	for _, in := range s.Inputs {
		var raw *RawInput
		if in.Raw != nil {
			raw = &RawInput{At: in.Raw, From: in.Reader}
		}
		fr := newFileRows(l, in.Name, cols, timeField, lo, hi, raw)
		var err error
		if s.Parsers > 1 {
			err = s.runParallel(ctx, r, fr, in.Reader)
		} else {
			err = fr.readAll(ctx, r, in.Reader)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// newFileRows makes the rows of input name, the next of l's sources,
// and registers it there. raw is nil when the input cannot be read again.
func newFileRows(l *Loader, name string, cols []Column, timeField int, lo, hi int64, raw *RawInput) *fileRows {
	fr := &fileRows{l: l, name: name, src: int32(len(l.sources)), cols: cols, timeField: timeField, lo: lo, hi: hi, raw: raw}
	if raw != nil {
		l.raws.add(fr.src, raw)
	}
	l.sources = append(l.sources, name)
	fr.timeDirect = timeField >= 0 && timeDirect(l, cols[timeField].Codec)
	fr.quick, fr.notNull = make([]copyenc.Quick, len(cols)), make([]bool, len(cols))
	for i, c := range cols {
		fr.quick[i], fr.notNull[i] = copyenc.QuickOf(c.Codec), c.NotNull
	}
	return fr
}

// timeDirect reports whether a binary load may encode the time column
// c from the micros parseTime reads: c reads the text in the target's
// session, as a timestamp of the kind the routing reads.
func timeDirect(l *Loader, c copyenc.Codec) bool {
	z, withTZ, ok := copyenc.TimestampCodec(c)
	if !ok || !l.binary || z != l.target.Zones() {
		return false
	}
	switch l.target.Series.TimeType {
	case partition.Timestamptz:
		return withTZ
	case partition.Timestamp:
		return !withTZ
	}
	return false
}

// readAll routes every record of rd on the calling goroutine.
func (fr *fileRows) readAll(ctx context.Context, r *router, rd *records.Reader) error {
	for n := 0; ; n++ {
		if n&1023 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		rec, err := rd.Next()
		if err == io.EOF {
			return nil
		}
		if err := fr.one(ctx, r, rec, err); err != nil {
			return err
		}
	}
}

// one routes a record, or reports its record error, or returns the error
// that ends the input.
func (fr *fileRows) one(ctx context.Context, r *router, rec records.Record, err error) error {
	if err != nil {
		// rerr is declared here, on the error path only: errors.As makes
		// it escape, a heap allocation per record if declared above.
		var rerr *records.RecordError
		if errors.As(err, &rerr) {
			fr.l.read.Add(1)
			return fr.l.reject(fr.recordReject(rerr))
		}
		return fmt.Errorf("reading %s: %w", fr.name, err)
	}
	fr.l.read.Add(1)
	return fr.route(ctx, r, rec)
}

// recordReject is the reject of a record the reader refused.
func (fr *fileRows) recordReject(rerr *records.RecordError) Reject {
	col := ""
	if rerr.Column > 0 && rerr.Column <= len(fr.cols) {
		col = fr.cols[rerr.Column-1].Name
	}
	r := Reject{Source: fr.name, Line: rerr.Line, Column: col, Reason: rerr.Reason}
	r.Record, r.RecordForm = ErrorText(fr.raw, rerr)
	return r
}

// route checks, encodes and routes one record.
func (fr *fileRows) route(ctx context.Context, r *router, rec records.Record) error {
	micros, rej := fr.prepare(&rec)
	if rej != nil {
		return fr.l.reject(*rej)
	}
	b, err := r.batchFor(ctx, micros)
	if err != nil {
		return err
	}
	if rej := fr.encode(b.enc, &rec, micros); rej != nil {
		return fr.l.reject(*rej)
	}
	return r.rowDone(ctx, b, fr.src, rec.Line, spanOf(rec.Offset, rec.End))
}

// rejectf is the reject of record rec for a reason in column col: the
// record as written when the input can be read again, else its fields as
// CSV.
func (fr *fileRows) rejectf(rec *records.Record, col, reason string) *Reject {
	r := &Reject{Source: fr.name, Line: rec.Line, Column: col, Reason: reason}
	r.Record, r.RecordForm = RecordText(fr.raw, *rec)
	return r
}

// prepare checks a record's field count and reads its time, which must
// lie in the table's window: the row's micros, or its reject (not nil).
// The record and the reject are passed by pointer: they are large, and
// this runs for every row. Safe for concurrent use.
func (fr *fileRows) prepare(rec *records.Record) (micros int64, rej *Reject) {
	l, cols := fr.l, fr.cols
	if len(rec.Fields) != len(cols) {
		return 0, fr.rejectf(rec, "", fmt.Sprintf("expected %d fields, got %d", len(cols), len(rec.Fields)))
	}
	if fr.timeField < 0 {
		return 0, nil
	}
	tf := fr.timeField
	if rec.Null[tf] {
		return 0, fr.rejectf(rec, cols[tf].Name, "the time column is NULL")
	}
	m, err := parseTime(l.target.Zones(), l.target.Series.TimeType, rec.Fields[tf])
	if err != nil {
		return 0, fr.rejectf(rec, cols[tf].Name, err.Error())
	}
	if m < fr.lo || m >= fr.hi {
		return 0, fr.rejectf(rec, cols[tf].Name, l.target.Series.CheckTime(m, l.cfg.Now()).Error())
	}
	return m, nil
}

// encode appends the record as a row to enc, or returns the reject of a
// field the column refuses (not nil; nothing appended). micros is the
// row's time as prepare read it.
func (fr *fileRows) encode(enc rowEncoder, rec *records.Record, micros int64) *Reject {
	if w, isBinary := enc.(*copyenc.BinaryWriter); isBinary {
		return fr.encodeBinary(w, rec, micros)
	}
	cols := fr.cols
	start := enc.Len()
	enc.BeginRow(len(cols))
	for i, f := range rec.Fields {
		if rec.Null[i] {
			if cols[i].NotNull {
				enc.Truncate(start)
				return fr.rejectf(rec, cols[i].Name, "NULL in a NOT NULL column")
			}
			enc.Null()
			continue
		}
		if i == fr.timeField && fr.timeDirect {
			enc.Timestamp(micros)
			continue
		}
		if err := enc.Field(cols[i].Codec, f); err != nil {
			enc.Truncate(start)
			return fr.rejectf(rec, cols[i].Name, err.Error())
		}
	}
	return nil
}

// encodeBinary is encode for a binary load: the writer's own methods,
// and each column's quick reader before its codec.
func (fr *fileRows) encodeBinary(w *copyenc.BinaryWriter, rec *records.Record, micros int64) *Reject {
	start := w.Len()
	w.BeginRow(len(fr.quick))
	quick, notNull, null := fr.quick, fr.notNull, rec.Null
	for i, f := range rec.Fields {
		switch {
		case null[i]:
			if notNull[i] {
				w.Truncate(start)
				return fr.rejectf(rec, fr.cols[i].Name, "NULL in a NOT NULL column")
			}
			w.Null()
			continue
		case i == fr.timeField && fr.timeDirect:
			w.Timestamp(micros)
			continue
		case w.AppendQuick(quick[i], f):
			continue
		}
		if err := w.Field(fr.cols[i].Codec, f); err != nil {
			w.Truncate(start)
			return fr.rejectf(rec, fr.cols[i].Name, err.Error())
		}
	}
	return nil
}

// parseTime reads the time column's text as micros, in the session the
// column's codec reads it in (so a row lands in the partition of the
// value stored).
func parseTime(z *copyenc.Zones, tt partition.TimeType, f []byte) (int64, error) {
	switch tt {
	case partition.Timestamptz:
		return z.ParseTimestamp(f)
	case partition.Timestamp:
		// The server ignores a zone written in a timestamp without time
		// zone: route by the wall-clock time as written, as it stores it.
		return z.ParseLocalTimestamp(f)
	case partition.Date:
		d, err := z.ParseDate(f)
		if err != nil {
			return 0, err
		}
		return int64(d) * 86400e6, nil
	default:
		v, err := strconv.ParseInt(string(trimSpace(f)), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("invalid epoch value %q", truncate(f, 64))
		}
		return partition.ToMicros(tt, v), nil
	}
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// GenSource loads a generator's rows, encoded in-process.
type GenSource struct {
	Name string
	Gen  gen.Generator
}

// CopyColumns implements Source: the generator's columns, which the
// target must have (by name).
func (s *GenSource) CopyColumns(t *Target) ([]Column, error) {
	var cols []Column
	for _, gc := range s.Gen.Columns() {
		i := t.ColumnIndex(gc.Name)
		if i < 0 {
			return nil, fmt.Errorf("generator %s writes column %q, which %s does not have", s.Name, gc.Name, t)
		}
		cols = append(cols, t.Columns[i])
	}
	return cols, nil
}

// Run implements Source.
func (s *GenSource) Run(ctx context.Context, r *router) error {
	l := r.l
	src := int32(len(l.sources))
	l.sources = append(l.sources, s.Name)
	g := s.Gen
	lo, hi := int64(0), int64(0)
	series := l.target.Series
	if series != nil {
		if series.TimeType != partition.Timestamptz && series.TimeType != partition.Timestamp {
			return fmt.Errorf("generator %s writes timestamps; %s's time column is %s", s.Name, series, series.TimeType)
		}
		lo, hi = series.Window(l.cfg.Now())
	}
	var row int64
	for g.Next() {
		row++
		if row&1023 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		l.read.Add(1)
		var micros int64
		if series != nil {
			micros = g.Time()
			if micros < lo || micros >= hi {
				if err := l.reject(Reject{Source: s.Name, Line: row, Column: series.TimeColumn,
					Reason: series.CheckTime(micros, l.cfg.Now()).Error()}); err != nil {
					return err
				}
				continue
			}
		}
		b, err := r.batchFor(ctx, micros)
		if err != nil {
			return err
		}
		g.Encode(b.enc)
		if err := r.rowDone(ctx, b, src, row, noSpan); err != nil {
			return err
		}
	}
	return nil
}
