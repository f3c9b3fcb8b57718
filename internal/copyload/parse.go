package copyload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/pgts/pgts/internal/copyenc"
	"github.com/pgts/pgts/internal/records"
)

// DefaultChunkBytes is the size of the chunks an input is cut into for
// parallel parsing: big enough that a chunk's overhead (a channel send, a
// wake-up) is lost in its thousands of rows, small enough that the
// parsers are busy from the first megabyte and that the chunks in flight
// (about three per parser, each with its encoded rows) stay small.
const DefaultChunkBytes = 512 << 10

// Parallel parsing of one input. Two kinds of goroutines:
//
//   - the parsers (FileSource.Parsers) take turns at the splitter
//     (records.Splitter): the one whose turn it is cuts the next chunk
//     and queues it on order, for the router, in input order; then it
//     parses and encodes the chunk into a private buffer: rows, their
//     times and lines, and the rejects, in input order. A chunk's bytes
//     are thus read from the input, copied and parsed on one core: a
//     splitter of its own, on another core, left every chunk in the
//     wrong core's cache (the parse ran 17% slower for it) and itself
//     took one of the two cores' time from the parsers;
//   - the router (the goroutine of Run) takes the jobs from order, waits
//     for each to be parsed, and routes its rows and rejects as if it had
//     parsed them: batchFor, the encoded row, rowDone — a run of rows
//     that stay in one batch copied at once (apply).
//
// So batch boundaries and numbers, their digests, line numbers and
// rejects, and the partitions created are those of the sequential path:
// the router sees the same rows in the same order. A tail chunk (the
// splitter's fallback, see records.Chunk) is read by the router itself,
// after every chunk before it. At most 3 × Parsers chunks are in flight.

// parseJob is one chunk and, once done is closed, what parsing it gave.
type parseJob struct {
	chunk   *records.Chunk
	done    chan struct{}
	enc     rowEncoder // the chunk's rows, encoded
	items   []parsedItem
	rejects []Reject
	err     error // the error that ended the chunk early (never expected)
	marker  bool  // the chunk ended at an end-of-data marker
}

// itemKind is what became of a record of a chunk.
type itemKind uint8

const (
	itemRow      itemKind = iota // a row, encoded
	itemReject                   // refused before routing: rejects[rej]
	itemRejectAt                 // refused while encoding, after the time checks: route micros, then reject
)

// parsedItem is one record of a chunk, in input order.
type parsedItem struct {
	kind   itemKind
	rej    int32 // index into rejects
	end    int   // for a row: its end in enc.Bytes()
	micros int64
	line   int64
	span   inputSpan
}

// runParallel routes the records of rd parsed on s.Parsers goroutines.
func (s *FileSource) runParallel(ctx context.Context, r *router, fr *fileRows, rd *records.Reader) error {
	// A record peeked at (the header's first) is the router's to read.
	for rd.HasUnread() {
		rec, err := rd.Next()
		if err == io.EOF {
			return nil
		}
		if err := fr.one(ctx, r, rec, err); err != nil {
			return err
		}
	}
	size := s.ChunkBytes
	if size <= 0 {
		size = DefaultChunkBytes
	}
	sp, err := rd.Split(size)
	if err != nil {
		return fmt.Errorf("reading %s: %w", fr.name, err)
	}
	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	order := make(chan *parseJob, 2*s.Parsers)
	if fr.l.parseFree == nil {
		fr.l.parseFree = make(chan *parseJob, 3*s.Parsers+1)
	}
	free := fr.l.parseFree
	// The parsers take turns at the splitter: the one holding cut cuts
	// the next chunk, queues it on order and lets go, then parses it. The
	// chunk's bytes are read and copied by the core that parses them.
	var (
		cut   sync.Mutex
		ended bool // the splitter returned its last chunk (under cut)
	)
	next := func() *parseJob {
		cut.Lock()
		defer cut.Unlock()
		if ended || pctx.Err() != nil {
			return nil
		}
		c, err := sp.Next()
		if err != nil { // io.EOF: Next returns no other error
			ended = true
			return nil
		}
		var j *parseJob
		select {
		case j = <-free:
		default:
			j = &parseJob{}
			if fr.l.binary {
				j.enc = &new(jobWriter).BinaryWriter
			} else {
				j.enc = copyenc.NewTextWriter(0)
			}
		}
		j.chunk, j.done = c, make(chan struct{})
		select {
		case order <- j:
		case <-pctx.Done():
			ended = true
			return nil
		}
		if c.Tail() {
			ended = true // the router reads it
			return nil
		}
		return j
	}
	var wg sync.WaitGroup
	wg.Add(s.Parsers)
	for range s.Parsers {
		go func() {
			defer wg.Done()
			cr := sp.NewReader()
			for {
				j := next()
				if j == nil {
					return
				}
				if pctx.Err() == nil {
					fr.parse(cr, j)
				}
				sp.Recycle(j.chunk)
				close(j.done)
			}
		}()
	}
	go func() {
		wg.Wait()
		close(order)
	}()
	err = s.route(ctx, r, fr, sp, order, free)
	cancel()
	wg.Wait()
	return err
}

// route takes the parsed chunks in input order and routes them.
func (s *FileSource) route(ctx context.Context, r *router, fr *fileRows, sp *records.Splitter, order <-chan *parseJob, free chan<- *parseJob) error {
	for j := range order {
		if j.chunk.Tail() {
			cr := sp.NewReader()
			cr.Reset(j.chunk)
			return fr.readAll(ctx, r, cr)
		}
		select {
		case <-j.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		if err := fr.apply(ctx, r, j); err != nil {
			return err
		}
		if j.err != nil {
			return fmt.Errorf("reading %s: %w", fr.name, j.err)
		}
		if j.marker {
			return nil // the data ends here
		}
		j.enc.Reset()
		j.items, j.rejects, j.chunk, j.done = j.items[:0], j.rejects[:0], nil, nil
		select {
		case free <- j:
		default:
		}
	}
	return ctx.Err()
}

// parse parses and encodes the records of j's chunk with the chunk
// reader cr. It runs on a parser goroutine: it touches only j, cr and
// what fr shares read-only.
func (fr *fileRows) parse(cr *records.Reader, j *parseJob) {
	cr.Reset(j.chunk)
	for {
		rec, err := cr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			var rerr *records.RecordError // here: it escapes (see one)
			if errors.As(err, &rerr) {
				j.items = append(j.items, parsedItem{kind: itemReject, rej: int32(len(j.rejects)), line: rerr.Line})
				j.rejects = append(j.rejects, fr.recordReject(rerr))
				continue
			}
			j.err = err
			break
		}
		micros, rej := fr.prepare(&rec)
		if rej != nil {
			j.items = append(j.items, parsedItem{kind: itemReject, rej: int32(len(j.rejects)), line: rec.Line})
			j.rejects = append(j.rejects, *rej)
			continue
		}
		if rej := fr.encode(j.enc, &rec, micros); rej != nil {
			j.items = append(j.items, parsedItem{kind: itemRejectAt, rej: int32(len(j.rejects)), micros: micros, line: rec.Line})
			j.rejects = append(j.rejects, *rej)
			continue
		}
		j.items = append(j.items, parsedItem{kind: itemRow, end: j.enc.Len(), micros: micros, line: rec.Line, span: spanOf(rec.Offset, rec.End)})
	}
	j.marker = cr.EndMarker()
}

// apply routes the rows and reports the rejects of a parsed chunk, as
// route and one would have record by record. Consecutive rows bound for
// the batch the router's fast path keeps (r.cur, and the partition
// [r.lastLo, r.lastHi) of a series table) are appended as one run, up to
// the row that fills the batch — where rowDone sends it, as it would
// have row by row.
func (fr *fileRows) apply(ctx context.Context, r *router, j *parseJob) error {
	l := r.l
	if err := ctx.Err(); err != nil {
		return err
	}
	rows, items := j.enc.Bytes(), j.items
	start := 0 // where the next row begins in rows
	maxRows, maxBytes := l.cfg.BatchRows, l.cfg.BatchBytes
	for i := 0; i < len(items); {
		if i&1023 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		it := items[i]
		switch it.kind {
		case itemRow:
			b, err := r.batchFor(ctx, it.micros)
			if err != nil {
				return err
			}
			// The run [i, k): rows the fast path would send to b too,
			// ending at the first that fills b.
			base, n0 := b.enc.Len()-start, b.rows()
			k := i
			for {
				n0++
				if end := items[k].end; n0 >= maxRows || base+end >= maxBytes {
					k++
					break
				}
				k++
				if k == len(items) || items[k].kind != itemRow ||
					r.series != nil && (items[k].micros < r.lastLo || items[k].micros >= r.lastHi) {
					break
				}
			}
			last := items[k-1]
			b.enc.AppendRows(rows[start:last.end])
			for _, it := range items[i : k-1] {
				b.noteTime(it.micros)
				b.ends = append(b.ends, base+it.end)
				b.lines = append(b.lines, it.line)
				b.srcs = append(b.srcs, fr.src)
				b.spans = append(b.spans, it.span)
			}
			l.read.Add(int64(k - i))
			start, i = last.end, k
			if err := r.rowDone(ctx, b, fr.src, last.line, last.span); err != nil {
				return err
			}
			continue
		case itemRejectAt:
			if _, err := r.batchFor(ctx, it.micros); err != nil {
				return err
			}
			fallthrough
		default:
			l.read.Add(1)
			if err := l.reject(j.rejects[it.rej]); err != nil {
				return err
			}
		}
		i++
	}
	return nil
}

// jobWriter is a parse job's binary writer, padded to keep it off the
// cache lines of the others: each parser updates its writer at every
// field, and two writers allocated side by side (24 bytes each) shared a
// line that the cores then passed to and fro, slowing both parsers.
type jobWriter struct {
	copyenc.BinaryWriter
	_ [64]byte
}
