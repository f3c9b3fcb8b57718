package influx

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"time"
	"unsafe"

	"github.com/influxdata/line-protocol/v2/lineprotocol"
	"github.com/pgts/pgts/internal/ingest"
)

// Decoder decodes Influx line protocol request bodies. It keeps caches
// of the series it has seen and scratch buffers, so it is not safe for
// concurrent use. It never retains a body after Decode returns.
type Decoder struct {
	limits ingest.Limits
	now    func() time.Time
	intern *ingest.Interner
	names  *ingest.SeriesCache // "measurement.field" → validated name
	tagset *ingest.SeriesCache // measurement and raw tags → sorted tags
	meas   []byte
	key    []byte
	tags   []ingest.Tag
	// lnOff and lnNum cache the line number lnNum of offset lnOff of the
	// body being decoded.
	lnOff, lnNum int
}

// NewDecoder returns a Decoder bounded by l. now gives the time of
// lines without a timestamp.
func NewDecoder(l ingest.Limits, now func() time.Time) (*Decoder, error) {
	if err := l.Validate(); err != nil {
		return nil, fmt.Errorf("influx decoder: %w", err)
	}
	if now == nil {
		return nil, errors.New("influx decoder: no now func")
	}
	return &Decoder{
		limits: l,
		now:    now,
		intern: ingest.NewInterner(l.MaxInternBytes),
		names:  ingest.NewSeriesCache(l.MaxInternBytes),
		tagset: ingest.NewSeriesCache(l.MaxInternBytes),
	}, nil
}

// Decode decodes a body of line protocol whose timestamps are in
// precision prec, appending a point per numeric field to dst and reusing
// the Tags of dst's spare capacity (see package ingest).
//
// A line "cpu,host=a usage=0.5,idle=99i,up=true,note="x" 1700000000" gives
// the points cpu.usage=0.5, cpu.idle=99 and cpu.up=1, each with the tag
// host=a: the point name is the measurement, a dot and the field key.
// Integers and unsigned integers become float64 (exact up to 2^53),
// booleans 1 and 0; string fields are skipped and counted in
// Stats.Ignored. A line without a timestamp gets the Decoder's clock,
// read once per body and truncated to prec. Times are converted to
// micros; nanoseconds are rounded down to the microsecond.
//
// Each line is an entry: a line that is malformed, or whose names, tags
// or timestamp are invalid, is skipped as a whole and counted in
// Stats.Rejected with an *ingest.LineError carrying its line number;
// the other lines are still decoded. The body is refused as a whole,
// with dst unchanged and an error, when it exceeds MaxBodyBytes or would
// produce more than MaxPoints points (ingest.ErrLimit).
func (d *Decoder) Decode(dst []ingest.Point, body []byte, prec Precision) ([]ingest.Point, ingest.Stats, error) {
	var st ingest.Stats
	if len(body) > d.limits.MaxBodyBytes {
		return dst, st, ingest.LimitError("influx body", len(body), d.limits.MaxBodyBytes)
	}
	if prec > Second {
		return dst, st, fmt.Errorf("influx: invalid precision %d", prec)
	}
	d.lnOff, d.lnNum = 0, 1
	start := len(dst)
	clock := clock{d: d, prec: prec}
	dec := lineprotocol.NewDecoderWithBytes(body)
	for dec.Next() {
		n0 := len(dst)
		e := entry{d: d, dec: dec, body: body, anchor: -1, start: start}
		var err error
		dst, err = e.decode(dst, &st)
		if errors.Is(err, errTooManyPoints) {
			return dst[:start], ingest.Stats{}, fmt.Errorf("%w: influx body of more than %d points", ingest.ErrLimit, d.limits.MaxPoints)
		}
		var t int64
		if err == nil {
			t, err = clock.lineTime(e.time)
		}
		if err != nil {
			st.Ignored -= e.ignored
			dst = dst[:n0]
			st.Reject(&ingest.LineError{Line: e.line(err), Err: classify(err)})
			continue
		}
		for i := n0; i < len(dst); i++ {
			dst[i].Time = t
		}
	}
	st.Points = len(dst) - start
	return dst, st, nil
}

// clock gives the times of the lines of one body.
type clock struct {
	d    *Decoder
	prec Precision
	// now is the Decoder's clock truncated to prec, read at the first
	// line without a timestamp; err is why it is unusable.
	now  int64
	err  error
	read bool
}

// lineTime returns the time of a line whose timestamp is ts (nil when
// absent), in micros.
func (c *clock) lineTime(ts []byte) (int64, error) {
	if ts != nil {
		return timestamp(ts, c.prec)
	}
	if !c.read {
		c.read = true
		us := c.d.now().UnixMicro()
		if !ingest.InRange(us) {
			c.err = fmt.Errorf("%w: the clock reads %d µs since the epoch, out of range", ingest.ErrTimestamp, us)
		}
		c.now = c.prec.truncMicros(us)
	}
	return c.now, c.err
}

// classify makes the syntax errors of the line-protocol decoder wrap
// ingest's kinds: ErrValue for numbers out of range, ErrSyntax for the
// rest.
func classify(err error) error {
	var de *lineprotocol.DecodeError
	if !errors.As(err, &de) {
		return err
	}
	kind := ingest.ErrSyntax
	if errors.Is(err, lineprotocol.ErrValueOutOfRange) {
		kind = ingest.ErrValue
	}
	return fmt.Errorf("%w: column %d: %v", kind, de.Column, de.Err)
}

// timestamp converts a line's timestamp to micros.
func timestamp(b []byte, prec Precision) (int64, error) {
	ts, ok := ingest.ParseInt(b)
	if !ok {
		return 0, fmt.Errorf("%w %s: not an integer", ingest.ErrTimestamp, ingest.Clip(b))
	}
	us, ok := prec.toMicros(ts)
	if !ok || !ingest.InRange(us) {
		return 0, fmt.Errorf("%w %s %s: outside years 0001 to 9999", ingest.ErrTimestamp, ingest.Clip(b), prec)
	}
	return us, nil
}

// errTooManyPoints is returned by entry.decode when the body would
// produce more than MaxPoints points.
var errTooManyPoints = errors.New("too many points")

// entry decodes one line.
type entry struct {
	d    *Decoder
	dec  *lineprotocol.Decoder
	body []byte
	// anchor is the offset in body of a token of the line, -1 until one
	// is found: tokens written with escapes are unescaped elsewhere.
	anchor int
	// start is where the body's points begin in dst.
	start   int
	time    []byte
	ignored int
}

// see records tok as the line's anchor if it lies in the body.
func (e *entry) see(tok []byte) {
	if e.anchor < 0 {
		e.anchor = offsetIn(e.body, tok)
	}
}

// decode appends the points of the line to dst, without their times,
// and records the line's timestamp in e.time (nil when absent).
func (e *entry) decode(dst []ingest.Point, st *ingest.Stats) ([]ingest.Point, error) {
	d := e.d
	m, err := e.dec.Measurement()
	if err != nil {
		return dst, err
	}
	e.see(m)
	d.meas = append(d.meas[:0], m...)
	tags, err := e.tags()
	if err != nil {
		return dst, err
	}
	for {
		key, val, err := e.dec.NextField()
		if err != nil {
			return dst, err
		}
		if key == nil {
			break
		}
		e.see(key)
		var v float64
		switch val.Kind() {
		case lineprotocol.Float:
			v = val.FloatV()
		case lineprotocol.Int:
			v = float64(val.IntV())
		case lineprotocol.Uint:
			v = float64(val.UintV())
		case lineprotocol.Bool:
			if val.BoolV() {
				v = 1
			}
		default:
			e.ignored++
			st.Ignored++
			continue
		}
		name, err := e.name(key)
		if err != nil {
			return dst, err
		}
		if len(dst)-e.start >= d.limits.MaxPoints {
			return dst, errTooManyPoints
		}
		var p *ingest.Point
		dst, p = ingest.AppendPoint(dst)
		p.Name, p.Value = name, v
		p.Tags = append(p.Tags, tags...)
	}
	e.time, err = e.dec.TimeBytes()
	if err != nil {
		return dst, err
	}
	e.see(e.time)
	return dst, nil
}

// tags returns the validated, sorted tags of the line. Tag sets seen
// before are found in the Decoder's cache, keyed by the raw tags, each
// string prefixed by its length.
func (e *entry) tags() ([]ingest.Tag, error) {
	d := e.d
	d.key = d.key[:0]
	n := 0
	for {
		k, v, err := e.dec.NextTag()
		if err != nil {
			return nil, err
		}
		if k == nil {
			break
		}
		e.see(k)
		e.see(v)
		if n++; n > d.limits.MaxTags {
			return nil, fmt.Errorf("%w: more than %d tags", ingest.ErrTag, d.limits.MaxTags)
		}
		d.key = binary.AppendUvarint(d.key, uint64(len(k)))
		d.key = append(d.key, k...)
		d.key = binary.AppendUvarint(d.key, uint64(len(v)))
		d.key = append(d.key, v...)
	}
	if n == 0 {
		return nil, nil
	}
	if _, tags, ok := d.tagset.Get(d.key); ok {
		return tags, nil
	}
	d.tags = d.tags[:0]
	for rest := d.key; len(rest) > 0; {
		var k, v []byte
		k, rest = cutPrefixed(rest)
		v, rest = cutPrefixed(rest)
		k = ingest.TagKey(k)
		if err := ingest.ValidTagBytes(k, v, d.limits); err != nil {
			return nil, err
		}
		if err := ingest.GraphiteTagBytes(k, v); err != nil {
			return nil, err
		}
		d.tags = append(d.tags, ingest.Tag{Key: d.intern.String(k), Value: d.intern.String(v)})
	}
	if err := ingest.SortTags(d.tags); err != nil {
		return nil, err
	}
	d.tagset.Put(d.key, "", d.tags)
	return d.tags, nil
}

// cutPrefixed splits a length-prefixed string off the front of b, which
// tags wrote.
func cutPrefixed(b []byte) (s, rest []byte) {
	n, w := binary.Uvarint(b)
	return b[w : w+int(n)], b[w+int(n):]
}

// name returns the validated point name "measurement.field".
func (e *entry) name(field []byte) (string, error) {
	d := e.d
	d.key = append(append(append(d.key[:0], d.meas...), '.'), field...)
	if name, _, ok := d.names.Get(d.key); ok {
		return name, nil
	}
	if err := ingest.ValidNameBytes(d.key, d.limits); err != nil {
		return "", err
	}
	// "measurement.field" never consists of '~' alone, tagged or not.
	if err := ingest.GraphiteNameBytes(d.key, false); err != nil {
		return "", err
	}
	name := d.intern.String(d.key)
	d.names.Put(d.key, name, nil)
	return name, nil
}

// line returns the line number of the entry, which failed with err.
func (e *entry) line(err error) int {
	var de *lineprotocol.DecodeError
	if errors.As(err, &de) {
		return int(de.Line)
	}
	if e.anchor < 0 {
		// Every token so far was escaped: look further along the line.
		for e.anchor < 0 {
			key, _, val, err := e.dec.NextFieldBytes()
			if err != nil || key == nil {
				break
			}
			e.see(key)
			e.see(val)
		}
		if t, err := e.dec.TimeBytes(); err == nil {
			e.see(t)
		}
		if e.anchor < 0 {
			return 0
		}
	}
	d := e.d
	if e.anchor < d.lnOff {
		d.lnOff, d.lnNum = 0, 1
	}
	d.lnNum += bytes.Count(e.body[d.lnOff:e.anchor], []byte{'\n'})
	d.lnOff = e.anchor
	return d.lnNum
}

// offsetIn returns the offset of tok within body, or -1 when tok does
// not point into body.
func offsetIn(body, tok []byte) int {
	if len(tok) == 0 || len(body) == 0 {
		return -1
	}
	b := uintptr(unsafe.Pointer(unsafe.SliceData(body)))
	t := uintptr(unsafe.Pointer(unsafe.SliceData(tok)))
	if t < b || t >= b+uintptr(len(body)) {
		return -1
	}
	return int(t - b)
}
