package graphite

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/pgts/pgts/internal/ingest"
)

// FrameHeaderBytes is the size of the length prefix of a pickle frame.
const FrameHeaderBytes = 4

// FrameLength returns the length of the pickle that follows the 4-byte
// big-endian header hdr, refusing 0 (ErrSyntax) and lengths over
// l.MaxFrameBytes (ErrLimit) before the caller reads or allocates the
// frame.
func FrameLength(hdr []byte, l ingest.Limits) (int, error) {
	if len(hdr) != FrameHeaderBytes {
		return 0, fmt.Errorf("%w: pickle frame header of %d bytes, want %d", ingest.ErrSyntax, len(hdr), FrameHeaderBytes)
	}
	n := binary.BigEndian.Uint32(hdr)
	if n == 0 {
		return 0, fmt.Errorf("%w: empty pickle frame", ingest.ErrSyntax)
	}
	if uint64(n) > uint64(l.MaxFrameBytes) {
		return 0, ingest.LimitError("pickle frame", int(min(n, math.MaxInt32)), l.MaxFrameBytes)
	}
	return int(n), nil
}

// PickleDecoder decodes the frames of carbon's pickle protocol: a
// pickled list of (path, (timestamp, value)) tuples.
//
// It runs its own restricted pickle machine, which builds only lists,
// tuples, strings (str, unicode, bytes) and integers and floats, and
// refuses any other opcode (GLOBAL, REDUCE, BUILD, ...) before acting on
// it: nothing is ever called, imported or instantiated, so a frame
// cannot run code, unlike a pickle loaded by Python. Pickle protocols 0
// to 5 are accepted.
//
// A PickleDecoder keeps its working memory from one frame to the next
// (a few times the largest frame), so it is not safe for concurrent use.
// It never retains a frame after Decode returns.
type PickleDecoder struct {
	limits ingest.Limits
	now    func() time.Time
	intern *ingest.Interner
	series *ingest.SeriesCache
	m      vm
}

// NewPickleDecoder returns a PickleDecoder bounded by l. now gives the
// time of points whose timestamp is -1.
func NewPickleDecoder(l ingest.Limits, now func() time.Time) (*PickleDecoder, error) {
	if err := l.Validate(); err != nil {
		return nil, fmt.Errorf("graphite pickle decoder: %w", err)
	}
	if now == nil {
		return nil, errors.New("graphite pickle decoder: no now func")
	}
	d := &PickleDecoder{limits: l, now: now, intern: ingest.NewInterner(l.MaxInternBytes),
		series: ingest.NewSeriesCache(l.MaxInternBytes)}
	d.m.maxList = l.MaxPoints
	return d, nil
}

// Decode decodes one frame, the pickle without its length prefix, and
// appends a point per element of the pickled list to dst, reusing the
// Tags of dst's spare capacity (see package ingest).
//
// The frame is refused as a whole, with dst unchanged and an error, when
// it exceeds MaxFrameBytes, is not a well-formed pickle (ErrSyntax), uses
// a refused opcode (ErrUnsupported), does not hold a list or tuple, or
// holds more than MaxPoints elements (ErrLimit).
//
// Otherwise each element is an entry: one that is not a (path,
// (timestamp, value)) pair of sequences, or whose path, timestamp or
// value is invalid, is skipped and counted in Stats.Rejected with an
// *ingest.EntryError, as carbon skips it. Timestamps and values may be
// integers, floats or numeric strings (the StatsD pickle backend sends
// strings); timestamps are truncated to whole seconds and -1 means now,
// as in the plaintext protocol; NaN and infinite values are refused.
func (d *PickleDecoder) Decode(dst []ingest.Point, frame []byte) ([]ingest.Point, ingest.Stats, error) {
	var st ingest.Stats
	if len(frame) > d.limits.MaxFrameBytes {
		return dst, st, ingest.LimitError("pickle frame", len(frame), d.limits.MaxFrameBytes)
	}
	root, err := d.m.run(frame)
	if err != nil {
		return dst, st, err
	}
	elems, ok := d.m.seq(root)
	if !ok {
		return dst, st, fmt.Errorf("%w: the pickle holds no list of (path, (timestamp, value)) tuples", ingest.ErrSyntax)
	}
	if len(elems) > d.limits.MaxPoints {
		return dst, st, fmt.Errorf("%w: pickle frame of more than %d elements", ingest.ErrLimit, d.limits.MaxPoints)
	}
	for i, e := range elems {
		n0 := len(dst)
		var pt *ingest.Point
		dst, pt = ingest.AppendPoint(dst)
		if err := d.element(pt, e); err != nil {
			dst = dst[:n0]
			st.Reject(&ingest.EntryError{Index: i, Err: err})
			continue
		}
		st.Points++
	}
	return dst, st, nil
}

// element converts one list element into pt.
func (d *PickleDecoder) element(pt *ingest.Point, ref int32) error {
	pair, ok := d.m.seq(ref)
	if !ok || len(pair) != 2 {
		return fmt.Errorf("%w: element is not a (path, (timestamp, value)) pair", ingest.ErrSyntax)
	}
	path := d.m.vals[pair[0]]
	if path.kind != kStr && path.kind != kStrBuf {
		return fmt.Errorf("%w: path is not a string", ingest.ErrSyntax)
	}
	tv, ok := d.m.seq(pair[1])
	if !ok || len(tv) != 2 {
		return fmt.Errorf("%w: datapoint is not a (timestamp, value) pair", ingest.ErrSyntax)
	}
	v, err := d.value(d.m.vals[tv[1]])
	if err != nil {
		return err
	}
	t, err := d.time(d.m.vals[tv[0]])
	if err != nil {
		return err
	}
	if err := setPath(pt, d.m.str(path), d.limits, d.intern, d.series); err != nil {
		return err
	}
	pt.Value, pt.Time = v, t
	return nil
}

// value converts a pickled value as carbon's float() does.
func (d *PickleDecoder) value(v value) (float64, error) {
	switch v.kind {
	case kInt:
		return float64(int64(v.n)), nil
	case kFloat:
		f := math.Float64frombits(v.n)
		return f, ingest.CheckValue(f)
	case kStr, kStrBuf:
		return ingest.ParseValue(trimSpace(d.m.str(v)))
	}
	return 0, fmt.Errorf("%w: value is not a number", ingest.ErrValue)
}

// time converts a pickled timestamp to micros.
func (d *PickleDecoder) time(v value) (int64, error) {
	switch v.kind {
	case kInt:
		return secondsMicros(int64(v.n), d.now)
	case kFloat:
		return floatSecondsMicros(math.Float64frombits(v.n), d.now)
	case kStr, kStrBuf:
		b := trimSpace(d.m.str(v))
		if s, ok := ingest.ParseInt(b); ok {
			return secondsMicros(s, d.now)
		}
		if f, ok := ingest.ParseFloat(b); ok {
			return floatSecondsMicros(f, d.now)
		}
		return 0, fmt.Errorf("%w %s: not a number", ingest.ErrTimestamp, ingest.Clip(b))
	}
	return 0, fmt.Errorf("%w: timestamp is not a number", ingest.ErrTimestamp)
}

// seq returns the elements of a list or tuple value.
func (m *vm) seq(ref int32) ([]int32, bool) {
	v := m.vals[ref]
	switch v.kind {
	case kList:
		return m.lists[v.a], true
	case kTuple:
		return m.items[v.a : v.a+v.b], true
	}
	return nil, false
}

// trimSpace trims ASCII whitespace as Python's float() does.
func trimSpace(b []byte) []byte {
	for len(b) > 0 && isBlank(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isBlank(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}
