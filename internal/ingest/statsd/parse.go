package statsd

import (
	"bytes"
	"fmt"
	"unicode/utf8"

	"github.com/pgts/pgts/internal/ingest"
)

// Parser parses StatsD lines. It keeps caches of the series it has seen,
// so it is not safe for concurrent use; give each receiver goroutine its
// own. It never retains a line after AppendLine returns.
type Parser struct {
	limits ingest.Limits
	intern *ingest.Interner
	series *ingest.SeriesCache
	key    []byte       // scratch: the series cache key
	tags   []ingest.Tag // scratch: the tags of the line being parsed
}

// NewParser returns a Parser bounded by l.
func NewParser(l ingest.Limits) (*Parser, error) {
	if err := l.Validate(); err != nil {
		return nil, fmt.Errorf("statsd parser: %w", err)
	}
	return &Parser{limits: l, intern: ingest.NewInterner(l.MaxInternBytes),
		series: ingest.NewSeriesCache(l.MaxInternBytes)}, nil
}

// AppendLine parses one line (without its newline; a trailing "\r" is
// ignored) and appends one Metric per value to dst, reusing the Tags of
// dst's spare capacity. A datagram holds several lines separated by
// newlines; the caller splits it. A blank line appends nothing and is no
// error.
//
// The line is "name:value|type[|@rate][|#tags]", and, as the reference
// StatsD accepts, "name:v1|t1[|@r1]:v2|t2..." carries several values
// for one name. Fields after the rate are ignored; the tags are the text
// from the first "|#" to the next "|" or the end of the line.
//
// A line is accepted or refused as a whole: on error dst is returned
// unchanged and the error wraps one of ingest's kinds.
func (p *Parser) AppendLine(dst []Metric, line []byte) ([]Metric, error) {
	if len(line) > p.limits.MaxLineBytes {
		return dst, ingest.LimitError("line", len(line), p.limits.MaxLineBytes)
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	if len(line) == 0 {
		return dst, nil
	}
	main, tagText, _ := bytes.Cut(line, []byte("|#"))
	if i := bytes.IndexByte(tagText, '|'); i >= 0 {
		tagText = tagText[:i]
	}
	nameText, values, ok := cutByte(main, ':')
	if !ok {
		return dst, fmt.Errorf("%w %s: no value, want name:value|type", ingest.ErrSyntax, ingest.Clip(line))
	}
	name, tags, err := p.seriesOf(nameText, tagText)
	if err != nil {
		return dst, err
	}
	n0 := len(dst)
	for {
		chunk, more, found := cutByte(values, ':')
		var m *Metric
		dst, m = appendMetric(dst)
		if err := p.value(m, chunk); err != nil {
			return dst[:n0], err
		}
		m.Name = name
		m.Tags = append(m.Tags, tags...)
		if !found {
			return dst, nil
		}
		values = more
	}
}

// seriesOf returns the validated name and sorted tags of a line.
func (p *Parser) seriesOf(nameText, tagText []byte) (string, []ingest.Tag, error) {
	p.key = append(append(append(p.key[:0], nameText...), 0), tagText...)
	if name, tags, ok := p.series.Get(p.key); ok {
		return name, tags, nil
	}
	if err := ingest.ValidNameBytes(nameText, p.limits); err != nil {
		return "", nil, err
	}
	p.tags = p.tags[:0]
	for rest := tagText; len(rest) > 0; {
		tag, more, found := cutByte(rest, ',')
		if len(p.tags) == p.limits.MaxTags {
			return "", nil, fmt.Errorf("%w: more than %d tags", ingest.ErrTag, p.limits.MaxTags)
		}
		k, v, ok := cutByte(tag, ':')
		if !ok {
			return "", nil, fmt.Errorf("%w %s: want key:value", ingest.ErrTag, ingest.Clip(tag))
		}
		if err := ingest.ValidTagBytes(k, v, p.limits); err != nil {
			return "", nil, err
		}
		p.tags = append(p.tags, ingest.Tag{Key: p.intern.String(k), Value: p.intern.String(v)})
		if found && len(more) == 0 {
			return "", nil, fmt.Errorf("%w %s: empty tag after ','", ingest.ErrTag, ingest.Clip(tagText))
		}
		rest = more
	}
	if err := ingest.SortTags(p.tags); err != nil {
		return "", nil, err
	}
	name := p.intern.String(nameText)
	p.series.Put(p.key, name, p.tags)
	return name, p.tags, nil
}

// value parses one "value|type[|@rate]..." chunk into m.
func (p *Parser) value(m *Metric, chunk []byte) error {
	val, rest, ok := cutByte(chunk, '|')
	if !ok {
		return fmt.Errorf("%w %s: no type, want value|type", ingest.ErrSyntax, ingest.Clip(chunk))
	}
	typ, rest, hasRate := cutByte(rest, '|')
	switch string(typ) {
	case "c":
		m.Type = Counter
	case "g":
		m.Type = Gauge
	case "ms":
		m.Type = Timer
	case "h":
		m.Type = Histogram
	case "s":
		m.Type = Set
	default:
		return fmt.Errorf("%w: unknown metric type %s, want c, g, ms, h or s", ingest.ErrSyntax, ingest.Clip(typ))
	}
	m.SampleRate = 1
	if hasRate {
		rate, _, _ := cutByte(rest, '|')
		if len(rate) < 2 || rate[0] != '@' {
			return fmt.Errorf("%w %s: want a sample rate @rate", ingest.ErrSyntax, ingest.Clip(rate))
		}
		r, ok := ingest.ParseFloat(rate[1:])
		if !ok || !(r > 0 && r <= 1) {
			return fmt.Errorf("%w: sample rate %s is not in (0, 1]", ingest.ErrValue, ingest.Clip(rate))
		}
		m.SampleRate = r
	}
	if m.Type == Set {
		return p.setValue(m, val)
	}
	v, err := ingest.ParseValue(val)
	if err != nil {
		return err
	}
	if m.Type == Timer && v < 0 {
		return fmt.Errorf("%w %s: a timer cannot be negative", ingest.ErrValue, ingest.Clip(val))
	}
	m.Value = v
	m.Delta = m.Type == Gauge && (val[0] == '+' || val[0] == '-')
	return nil
}

// setValue checks a set member: 1 to MaxTagBytes bytes of UTF-8 without
// control characters.
func (p *Parser) setValue(m *Metric, val []byte) error {
	if len(val) == 0 {
		return fmt.Errorf("%w: empty set member", ingest.ErrValue)
	}
	if len(val) > p.limits.MaxTagBytes {
		return fmt.Errorf("%w: set member of %d bytes, over the limit of %d", ingest.ErrValue, len(val), p.limits.MaxTagBytes)
	}
	for i := 0; i < len(val); {
		r, size := utf8.DecodeRune(val[i:])
		if r < ' ' || r == 0x7f || (r == utf8.RuneError && size == 1) {
			return fmt.Errorf("%w: set member %s: byte %#02x at offset %d is not allowed", ingest.ErrValue, ingest.Clip(val), val[i], i)
		}
		i += size
	}
	m.SetValue = p.intern.String(val)
	return nil
}

// cutByte is bytes.Cut for a one-byte separator, which IndexByte finds
// faster.
func cutByte(b []byte, sep byte) (before, after []byte, found bool) {
	if i := bytes.IndexByte(b, sep); i >= 0 {
		return b[:i], b[i+1:], true
	}
	return b, nil, false
}
