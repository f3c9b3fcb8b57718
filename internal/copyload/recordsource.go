package copyload

import (
	"context"
	"errors"
	"fmt"

	"github.com/pgts/pgts/internal/records"
)

// Record is one input record handed to a RecordSource by another
// goroutine. Its fields belong to the receiver once sent.
type Record struct {
	Source string // input name, for rejects
	Rec    records.Record
}

// ErrFeedStopped is returned by a RecordSource whose feeder stopped before
// the end of its input: the loader then sends no partial batch, so a
// resumed load cuts the same batches.
var ErrFeedStopped = errors.New("the input feeding this load stopped early")

// RecordSource is a Source fed by another goroutine: a splitter that
// reads the input once and routes each record to one of several loaders
// (package shard, one loader per shard partition). Each record goes
// through the same checks and encoding as a FileSource's.
//
// The feeder sends chunks of records on In in input order and closes In;
// Ended, called after In is closed, reports whether the input ended (the
// loader then sends its last partial batches) or the feeder stopped early
// (ErrFeedStopped: no partial batch is sent).
type RecordSource struct {
	Columns []int // target column index per input field
	In      <-chan []Record
	Ended   func() bool
	// Raw holds the inputs that can be read again, by input name: rejects
	// of their records hold them as written (see Input.Raw).
	Raw map[string]*RawInput
}

// CopyColumns implements Source.
func (s *RecordSource) CopyColumns(t *Target) ([]Column, error) {
	return (&FileSource{Columns: s.Columns}).CopyColumns(t)
}

// Run implements Source.
func (s *RecordSource) Run(ctx context.Context, r *router) error {
	l := r.l
	cols := l.cols
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
	rows := map[string]*fileRows{}
	for {
		var chunk []Record
		var ok bool
		select {
		case chunk, ok = <-s.In:
		case <-ctx.Done():
			return ctx.Err()
		}
		if !ok {
			if s.Ended != nil && !s.Ended() {
				return ErrFeedStopped
			}
			return nil
		}
		for _, rec := range chunk {
			fr, seen := rows[rec.Source]
			if !seen {
				fr = newFileRows(l, rec.Source, cols, timeField, lo, hi, s.Raw[rec.Source])
				rows[rec.Source] = fr
			}
			l.read.Add(1)
			if err := fr.route(ctx, r, rec.Rec); err != nil {
				return err
			}
		}
	}
}

// Target returns the table the loader writes into.
func (l *Loader) Target() *Target { return l.target }
