package graphite

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/pgts/pgts/internal/ingest"
)

// Parser parses the lines of the Graphite plaintext protocol. It keeps
// an Interner, so it is not safe for concurrent use; give each
// connection its own. It never retains a line after AppendLine returns.
type Parser struct {
	limits ingest.Limits
	now    func() time.Time
	intern *ingest.Interner
	series *ingest.SeriesCache
}

// NewParser returns a Parser bounded by l. now gives the time of points
// sent without a timestamp or with -1.
func NewParser(l ingest.Limits, now func() time.Time) (*Parser, error) {
	if err := l.Validate(); err != nil {
		return nil, fmt.Errorf("graphite parser: %w", err)
	}
	if now == nil {
		return nil, errors.New("graphite parser: no now func")
	}
	return &Parser{limits: l, now: now, intern: ingest.NewInterner(l.MaxInternBytes),
		series: ingest.NewSeriesCache(l.MaxInternBytes)}, nil
}

// AppendLine parses one line, "path value [timestamp]" without its
// newline, and appends its point to dst, reusing the Tags of dst's spare
// capacity (see package ingest). A blank line appends nothing and is no
// error. On error dst is returned unchanged; the error wraps one of
// ingest's kinds: ErrLimit (line over MaxLineBytes), ErrSyntax (not 2 or
// 3 fields), ErrName, ErrTag, ErrValue, ErrTimestamp.
func (p *Parser) AppendLine(dst []ingest.Point, line []byte) ([]ingest.Point, error) {
	if len(line) > p.limits.MaxLineBytes {
		return dst, ingest.LimitError("line", len(line), p.limits.MaxLineBytes)
	}
	var f [3][]byte
	n, rest := 0, line
	for {
		tok, tail := nextField(rest)
		if tok == nil {
			break
		}
		if n == len(f) {
			return dst, fmt.Errorf("%w %s: more than 3 fields, want \"path value [timestamp]\"", ingest.ErrSyntax, ingest.Clip(line))
		}
		f[n], rest, n = tok, tail, n+1
	}
	switch n {
	case 0:
		return dst, nil
	case 1:
		return dst, fmt.Errorf("%w %s: no value, want \"path value [timestamp]\"", ingest.ErrSyntax, ingest.Clip(line))
	}
	v, err := ingest.ParseValue(f[1])
	if err != nil {
		return dst, err
	}
	t, err := p.time(f[2])
	if err != nil {
		return dst, err
	}
	n0 := len(dst)
	dst, pt := ingest.AppendPoint(dst)
	if err := setPath(pt, f[0], p.limits, p.intern, p.series); err != nil {
		return dst[:n0], err
	}
	pt.Value, pt.Time = v, t
	return dst, nil
}

// time parses a plaintext timestamp; nil means absent.
func (p *Parser) time(b []byte) (int64, error) {
	if b == nil {
		return nowMicros(p.now)
	}
	if s, ok := ingest.ParseInt(b); ok {
		return secondsMicros(s, p.now)
	}
	if s, ok := plainSeconds(b); ok {
		return secondsMicros(s, p.now)
	}
	f, ok := ingest.ParseFloat(b)
	if !ok {
		return 0, fmt.Errorf("%w %s: not a number", ingest.ErrTimestamp, ingest.Clip(b))
	}
	return floatSecondsMicros(f, p.now)
}

// plainSeconds parses the common fractional timestamp, an optional sign,
// 1 to 10 digits below 2^33 and a point followed by at most 6 digits
// ("1732689600.123456"), into its whole seconds truncated toward zero;
// ok is false for anything else. It is what floatSecondsMicros makes of
// the float: below 2^33 a float64's spacing is at most 2^-19, under 1e-6,
// so a fraction of at most 6 digits never rounds up to the next whole
// second, and truncating the float keeps the digits before the point.
// It spares strconv's general parser, which a timestamp of 16 digits
// needs (a tenth of the daemon's parsing at 1 M series).
func plainSeconds(b []byte) (int64, bool) {
	i, neg := 0, false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg, i = b[0] == '-', 1
	}
	var s int64
	start := i
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		s = s*10 + int64(b[i]-'0')
		if i-start >= 10 {
			return 0, false
		}
	}
	if i == start || s >= 1<<33 || i == len(b) || b[i] != '.' {
		return 0, false
	}
	i++
	if len(b)-i > 6 {
		return 0, false
	}
	for ; i < len(b); i++ {
		if b[i] < '0' || b[i] > '9' {
			return 0, false
		}
	}
	if neg {
		s = -s
	}
	return s, true
}

// nextField returns the first run of non-blank bytes of b and what
// follows it, or nil when b is blank. Blanks are Python's str.split()
// ASCII whitespace, as carbon splits lines.
func nextField(b []byte) (tok, rest []byte) {
	i := 0
	for i < len(b) && isBlank(b[i]) {
		i++
	}
	if i == len(b) {
		return nil, nil
	}
	j := i
	for j < len(b) && !isBlank(b[j]) {
		j++
	}
	return b[i:j], b[j:]
}

// blanks marks the bytes isBlank accepts.
var blanks = [256]bool{' ': true, '\t': true, '\n': true, '\v': true, '\f': true, '\r': true,
	0x1c: true, 0x1d: true, 0x1e: true, 0x1f: true}

func isBlank(c byte) bool { return blanks[c] }

// nowMicros returns now() in micros, truncated to whole seconds as
// Graphite timestamps are.
func nowMicros(now func() time.Time) (int64, error) {
	s := now().Unix()
	t, ok := ingest.SecondsToMicros(s)
	if !ok {
		return 0, fmt.Errorf("%w: the clock reads %d s since the epoch, out of range", ingest.ErrTimestamp, s)
	}
	return t, nil
}

// secondsMicros converts a timestamp in whole seconds to micros, -1
// meaning now (carbon's convention).
func secondsMicros(s int64, now func() time.Time) (int64, error) {
	if s == -1 {
		return nowMicros(now)
	}
	t, ok := ingest.SecondsToMicros(s)
	if !ok {
		return 0, fmt.Errorf("%w %d: outside years 0001 to 9999", ingest.ErrTimestamp, s)
	}
	return t, nil
}

// floatSecondsMicros converts a timestamp in fractional seconds to
// micros the way carbon does: truncated toward zero to whole seconds
// (Python's int()), so -1.5 is -1, which means now.
func floatSecondsMicros(f float64, now func() time.Time) (int64, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, fmt.Errorf("%w %v: not finite", ingest.ErrTimestamp, f)
	}
	f = math.Trunc(f)
	if f < float64(ingest.MinTime/1e6) || f >= float64(ingest.MaxTime/1e6) {
		return 0, fmt.Errorf("%w %v: outside years 0001 to 9999", ingest.ErrTimestamp, f)
	}
	return secondsMicros(int64(f), now)
}
