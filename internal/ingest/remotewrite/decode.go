package remotewrite

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/klauspost/compress/snappy"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/pgts/pgts/internal/ingest"
)

// nameLabel is the label holding the metric name.
const nameLabel = "__name__"

// Decoder decodes Prometheus remote-write (v1) requests. It keeps a
// decompression buffer (up to MaxDecodedBytes, reused from one request
// to the next), caches of the series it has seen and scratch buffers,
// so it is not safe for concurrent use. It never retains a body after
// Decode returns.
type Decoder struct {
	limits  ingest.Limits
	intern  *ingest.Interner
	series  *ingest.SeriesCache // raw labels → name and tags
	buf     []byte
	key     []byte
	tags    []ingest.Tag
	samples []Sample
}

// NewDecoder returns a Decoder bounded by l.
func NewDecoder(l ingest.Limits) (*Decoder, error) {
	if err := l.Validate(); err != nil {
		return nil, fmt.Errorf("remote-write decoder: %w", err)
	}
	return &Decoder{limits: l, intern: ingest.NewInterner(l.MaxInternBytes),
		series: ingest.NewSeriesCache(l.MaxInternBytes)}, nil
}

// maxSnappyExpansion bounds how much a block of snappy can expand: its
// densest element is a 3-byte copy of 64 bytes. A body announcing more
// than 64/3 times its size is corrupt, and refused before allocating.
const maxSnappyExpansion = 64.0 / 3

// Decode decodes a request body, a WriteRequest compressed with
// snappy's block format, into dst; see DecodeProto. Before allocating
// anything it refuses (ingest.ErrLimit) a body over MaxBodyBytes or
// whose snappy header announces more than MaxDecodedBytes, and
// (ingest.ErrSyntax) one announcing more than its size can expand to.
func (d *Decoder) Decode(dst []ingest.Point, body []byte) ([]ingest.Point, ingest.Stats, error) {
	if len(body) > d.limits.MaxBodyBytes {
		return dst, ingest.Stats{}, ingest.LimitError("remote-write body", len(body), d.limits.MaxBodyBytes)
	}
	n, err := snappy.DecodedLen(body)
	if err != nil {
		return dst, ingest.Stats{}, fmt.Errorf("%w: remote-write body: snappy: %v", ingest.ErrSyntax, err)
	}
	if n > d.limits.MaxDecodedBytes {
		return dst, ingest.Stats{}, ingest.LimitError("decompressed remote-write body", n, d.limits.MaxDecodedBytes)
	}
	if float64(n) > float64(len(body))*maxSnappyExpansion {
		return dst, ingest.Stats{}, fmt.Errorf("%w: remote-write body of %d bytes announces %d decompressed bytes, more than snappy can expand to",
			ingest.ErrSyntax, len(body), n)
	}
	if cap(d.buf) < n {
		d.buf = make([]byte, n)
	}
	msg, err := snappy.Decode(d.buf[:cap(d.buf)], body)
	if err != nil {
		return dst, ingest.Stats{}, fmt.Errorf("%w: remote-write body: snappy: %v", ingest.ErrSyntax, err)
	}
	return d.DecodeProto(dst, msg)
}

// DecodeProto decodes an uncompressed WriteRequest and appends a point
// per sample to dst, reusing the Tags of dst's spare capacity (see
// package ingest). The label __name__ is the point name, the other
// labels are its tags; a label with an empty value is dropped, as
// Prometheus treats it as absent. Timestamps are converted from
// milliseconds to micros. Unknown fields, exemplars and metadata are
// skipped; native histograms are skipped and counted in Stats.Ignored,
// as are NaN samples (Prometheus staleness markers among them).
//
// The request is refused as a whole, with dst unchanged and an error,
// when it is not valid protobuf or a known field has the wrong wire type
// (ingest.ErrSyntax), or it holds more than MaxPoints samples
// (ingest.ErrLimit). Otherwise each sample is an entry: the samples of
// a series without __name__ or with an invalid name or labels, and
// samples with an infinite value or a time outside [ingest.MinTime,
// ingest.MaxTime), are counted in Stats.Rejected with an
// *ingest.EntryError holding the index of their series.
func (d *Decoder) DecodeProto(dst []ingest.Point, msg []byte) ([]ingest.Point, ingest.Stats, error) {
	var st ingest.Stats
	start := len(dst)
	for i := 0; len(msg) > 0; {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return dst[:start], ingest.Stats{}, wireError("WriteRequest", n)
		}
		msg = msg[n:]
		if num != fieldWriteRequestTimeseries {
			if n = protowire.ConsumeFieldValue(num, typ, msg); n < 0 {
				return dst[:start], ingest.Stats{}, wireError("WriteRequest", n)
			}
			msg = msg[n:]
			continue
		}
		if typ != protowire.BytesType {
			return dst[:start], ingest.Stats{}, typeError("WriteRequest.timeseries", typ)
		}
		ts, n := protowire.ConsumeBytes(msg)
		if n < 0 {
			return dst[:start], ingest.Stats{}, wireError("WriteRequest.timeseries", n)
		}
		msg = msg[n:]
		var err error
		if dst, err = d.timeSeries(dst, ts, i, start, &st); err != nil {
			return dst[:start], ingest.Stats{}, err
		}
		i++
	}
	st.Points = len(dst) - start
	return dst, st, nil
}

// timeSeries decodes the TimeSeries message b, the index-th of its
// request, whose points start at start in dst.
func (d *Decoder) timeSeries(dst []ingest.Point, b []byte, index, start int, st *ingest.Stats) ([]ingest.Point, error) {
	d.key = d.key[:0]
	d.samples = d.samples[:0]
	labels := 0
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return dst, wireError("TimeSeries", n)
		}
		b = b[n:]
		switch num {
		case fieldTimeSeriesLabels, fieldTimeSeriesSamples, fieldTimeSeriesHistograms:
			if typ != protowire.BytesType {
				return dst, typeError("TimeSeries field "+fmt.Sprint(num), typ)
			}
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return dst, wireError("TimeSeries", n)
			}
			b = b[n:]
			var err error
			switch num {
			case fieldTimeSeriesLabels:
				labels++
				err = d.label(v)
			case fieldTimeSeriesSamples:
				err = d.sample(v)
			default:
				st.Ignored++
			}
			if err != nil {
				return dst, err
			}
		default:
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return dst, wireError("TimeSeries", n)
			}
			b = b[n:]
		}
	}
	if len(d.samples) == 0 {
		return dst, nil
	}
	if len(dst)-start+len(d.samples) > d.limits.MaxPoints {
		return dst, fmt.Errorf("%w: remote-write request of more than %d samples", ingest.ErrLimit, d.limits.MaxPoints)
	}
	name, tags, err := d.seriesOf(labels)
	if err != nil {
		st.Reject(&ingest.EntryError{Index: index, Err: err})
		st.Rejected += len(d.samples) - 1
		return dst, nil
	}
	for _, x := range d.samples {
		if math.IsNaN(x.Value) {
			st.Ignored++
			continue
		}
		if math.IsInf(x.Value, 0) {
			st.Reject(&ingest.EntryError{Index: index, Err: fmt.Errorf("%w %v: not finite", ingest.ErrValue, x.Value)})
			continue
		}
		us, ok := ingest.MillisToMicros(x.Time)
		if !ok {
			st.Reject(&ingest.EntryError{Index: index, Err: fmt.Errorf("%w %d ms: outside years 0001 to 9999", ingest.ErrTimestamp, x.Time)})
			continue
		}
		var p *ingest.Point
		dst, p = ingest.AppendPoint(dst)
		p.Name, p.Value, p.Time = name, x.Value, us
		p.Tags = append(p.Tags, tags...)
	}
	return dst, nil
}

// label decodes a Label message and appends it to d.key, each string
// prefixed by its length.
func (d *Decoder) label(b []byte) error {
	var name, value []byte
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return wireError("Label", n)
		}
		b = b[n:]
		if num != fieldLabelName && num != fieldLabelValue {
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return wireError("Label", n)
			}
			b = b[n:]
			continue
		}
		if typ != protowire.BytesType {
			return typeError("Label field "+fmt.Sprint(num), typ)
		}
		v, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return wireError("Label", n)
		}
		b = b[n:]
		if num == fieldLabelName {
			name = v
		} else {
			value = v
		}
	}
	d.key = binary.AppendUvarint(d.key, uint64(len(name)))
	d.key = append(d.key, name...)
	d.key = binary.AppendUvarint(d.key, uint64(len(value)))
	d.key = append(d.key, value...)
	return nil
}

// sample decodes a Sample message into d.samples.
func (d *Decoder) sample(b []byte) error {
	var x Sample
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return wireError("Sample", n)
		}
		b = b[n:]
		switch {
		case num == fieldSampleValue && typ == protowire.Fixed64Type:
			v, n := protowire.ConsumeFixed64(b)
			if n < 0 {
				return wireError("Sample.value", n)
			}
			x.Value, b = math.Float64frombits(v), b[n:]
		case num == fieldSampleTimestamp && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return wireError("Sample.timestamp", n)
			}
			x.Time, b = int64(v), b[n:]
		case num == fieldSampleValue || num == fieldSampleTimestamp:
			return typeError("Sample field "+fmt.Sprint(num), typ)
		default:
			if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
				return wireError("Sample", n)
			}
			b = b[n:]
		}
	}
	d.samples = append(d.samples, x)
	return nil
}

// seriesOf returns the name and sorted tags of the labels in d.key.
func (d *Decoder) seriesOf(labels int) (string, []ingest.Tag, error) {
	if name, tags, ok := d.series.Get(d.key); ok {
		return name, tags, nil
	}
	if labels > d.limits.MaxTags+1 {
		return "", nil, fmt.Errorf("%w: %d labels, more than %d tags and %s", ingest.ErrTag, labels, d.limits.MaxTags, nameLabel)
	}
	var name string
	haveName := false
	d.tags = d.tags[:0]
	for rest := d.key; len(rest) > 0; {
		var k, v []byte
		k, rest = cutPrefixed(rest)
		v, rest = cutPrefixed(rest)
		switch {
		case string(k) == nameLabel:
			if haveName {
				return "", nil, fmt.Errorf("%w: two %s labels", ingest.ErrName, nameLabel)
			}
			if err := ingest.ValidNameBytes(v, d.limits); err != nil {
				return "", nil, err
			}
			name, haveName = d.intern.String(v), true
		case len(v) == 0:
			// An empty value is an absent label in Prometheus.
		default:
			k = ingest.TagKey(k)
			if len(d.tags) == d.limits.MaxTags {
				return "", nil, fmt.Errorf("%w: more than %d tags", ingest.ErrTag, d.limits.MaxTags)
			}
			if err := ingest.ValidTagBytes(k, v, d.limits); err != nil {
				return "", nil, err
			}
			if err := ingest.GraphiteTagBytes(k, v); err != nil {
				return "", nil, err
			}
			d.tags = append(d.tags, ingest.Tag{Key: d.intern.String(k), Value: d.intern.String(v)})
		}
	}
	if !haveName {
		return "", nil, fmt.Errorf("%w: no %s label", ingest.ErrName, nameLabel)
	}
	if err := ingest.GraphiteNameBytes([]byte(name), len(d.tags) > 0); err != nil {
		return "", nil, err
	}
	if err := ingest.SortTags(d.tags); err != nil {
		return "", nil, err
	}
	d.series.Put(d.key, name, d.tags)
	return name, d.tags, nil
}

// cutPrefixed splits a length-prefixed string off the front of b, which
// label wrote.
func cutPrefixed(b []byte) (s, rest []byte) {
	n, w := binary.Uvarint(b)
	return b[w : w+int(n)], b[w+int(n):]
}

// wireError reports malformed protobuf in message msg; n is the negative
// result of a protowire Consume function.
func wireError(msg string, n int) error {
	return fmt.Errorf("%w: remote-write %s: %v", ingest.ErrSyntax, msg, protowire.ParseError(n))
}

// typeError reports a known field of the wrong wire type.
func typeError(field string, typ protowire.Type) error {
	return fmt.Errorf("%w: remote-write %s has wire type %d", ingest.ErrSyntax, field, typ)
}
