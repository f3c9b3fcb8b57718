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
}

// FileSource reads delimited records. Columns maps each input field to a
// target column, in order.
type FileSource struct {
	Inputs  []Input
	Columns []int // target column index per input field
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
		src := int32(len(l.sources))
		l.sources = append(l.sources, in.Name)
		for n := 0; ; n++ {
			if n&1023 == 0 && ctx.Err() != nil {
				return ctx.Err()
			}
			rec, err := in.Reader.Next()
			if err == io.EOF {
				break
			}
			var rerr *records.RecordError
			if errors.As(err, &rerr) {
				l.read.Add(1)
				col := ""
				if rerr.Column > 0 && rerr.Column <= len(cols) {
					col = cols[rerr.Column-1].Name
				}
				if err := l.reject(Reject{Source: in.Name, Line: rerr.Line, Column: col, Reason: rerr.Reason}); err != nil {
					return err
				}
				continue
			}
			if err != nil {
				return fmt.Errorf("reading %s: %w", in.Name, err)
			}
			l.read.Add(1)
			if err := s.route(ctx, r, in.Name, src, cols, timeField, lo, hi, rec); err != nil {
				return err
			}
		}
	}
	return nil
}

// route parses, checks and encodes one record.
func (s *FileSource) route(ctx context.Context, r *router, name string, src int32, cols []Column, timeField int, lo, hi int64, rec records.Record) error {
	l := r.l
	rejectf := func(col, reason string) error {
		return l.reject(Reject{Source: name, Line: rec.Line, Column: col, Reason: reason, Record: encodeRecord(rec.Fields, rec.Null)})
	}
	if len(rec.Fields) != len(cols) {
		return rejectf("", fmt.Sprintf("expected %d fields, got %d", len(cols), len(rec.Fields)))
	}
	var micros int64
	if timeField >= 0 {
		if rec.Null[timeField] {
			return rejectf(cols[timeField].Name, "the time column is NULL")
		}
		m, err := parseTime(l.target.Zones(), l.target.Series.TimeType, rec.Fields[timeField])
		if err != nil {
			return rejectf(cols[timeField].Name, err.Error())
		}
		if m < lo || m >= hi {
			return rejectf(cols[timeField].Name, l.target.Series.CheckTime(m, l.cfg.Now()).Error())
		}
		micros = m
	}
	b, err := r.batchFor(ctx, micros)
	if err != nil {
		return err
	}
	start := b.enc.Len()
	b.enc.BeginRow(len(cols))
	for i, f := range rec.Fields {
		if rec.Null[i] {
			if cols[i].NotNull {
				b.enc.Truncate(start)
				return rejectf(cols[i].Name, "NULL in a NOT NULL column")
			}
			b.enc.Null()
			continue
		}
		if err := b.enc.Field(cols[i].Codec, f); err != nil {
			b.enc.Truncate(start)
			return rejectf(cols[i].Name, err.Error())
		}
	}
	return r.rowDone(ctx, b, src, rec.Line)
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
		if err := r.rowDone(ctx, b, src, row); err != nil {
			return err
		}
	}
	return nil
}
