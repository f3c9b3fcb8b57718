package render

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// point is one output datapoint.
type point struct {
	v     float64
	ts    int64
	isInt bool // a Python int in graphite-web: printed without ".0"
}

// intPoints marks the points that pair s's values unchanged (pts[i] is
// s.values[i]) with the values' int marks.
func intPoints(pts []point, s *series) []point {
	if s.ints == nil {
		return pts
	}
	for i := range pts {
		pts[i].isInt = s.intAt(i)
	}
	return pts
}

// appendValue appends v as graphite-web's repr or str spells it: a
// Python int without ".0".
func appendValue(b []byte, v float64, isInt bool) []byte {
	if isInt && !math.IsNaN(v) && !math.IsInf(v, 0) {
		if v != 0 && v > -1e15 && v < 1e15 && v == math.Trunc(v) {
			return strconv.AppendInt(b, int64(v), 10)
		}
		return strconv.AppendFloat(b, v, 'f', -1, 64)
	}
	return appendPyRepr(b, v)
}

// datapoints pairs values with timestamps start, start+step, ... up to
// end inclusive, stopping at whichever runs out first, as Graphite does.
// The points are appended to dst[:0].
func datapoints(dst []point, vals []float64, start, end, step int64) []point {
	if step <= 0 {
		step = 1
	}
	n := 0
	if end >= start {
		n = int((end-start)/step) + 1
	}
	n = min(n, len(vals))
	out := slices.Grow(dst[:0], n)[:n]
	for i := range out {
		out[i] = point{v: vals[i], ts: start + int64(i)*step}
	}
	return out
}

// consolidateForMaxDataPoints thins s to at most maxDataPoints points
// over timeRange seconds the way graphite-web's JSON view does: averaging
// groups of ceil(points/maxDataPoints) values and nudging the start so the
// groups fall on multiples of the new step (no jitter between refreshes).
// sc's slices hold the result until its next use.
func consolidateForMaxDataPoints(sc *encodeScratch, s *series, maxDataPoints int, timeRange int64) []point {
	vals, start, step := s.values, s.start, s.step
	if maxDataPoints == 1 {
		k := max(len(vals), 1)
		sc.vals = consolidateInto(sc.vals[:0], vals, k, s.consolidation, s.xff)
		sc.pts = datapoints(sc.pts, sc.vals, start, s.end, step*int64(k))
		return consolidatedIntPoints(sc.pts, s, 0, k)
	}
	n := float64(timeRange) / float64(step)
	if float64(maxDataPoints) >= n {
		sc.pts = datapoints(sc.pts, vals, start, s.end, step)
		return intPoints(sc.pts, s)
	}
	k := int64(math.Ceil(n / float64(maxDataPoints)))
	secondsPerPoint := k * step
	nudge := secondsPerPoint + pyMod(start, step) - pyMod(start, secondsPerPoint)
	start += nudge
	off := 0
	if lose := int(nudge/step) - 1; lose > 0 {
		off = min(lose, len(vals))
		vals = vals[off:]
	}
	sc.vals = consolidateInto(sc.vals[:0], vals, int(k), s.consolidation, s.xff)
	sc.pts = datapoints(sc.pts, sc.vals, start, s.end, secondsPerPoint)
	return consolidatedIntPoints(sc.pts, s, off, int(k))
}

// consolidatedIntPoints marks the points that consolidate groups of k of
// s's values, from index off on, into a Python int in graphite-web: sum
// of ints is an int, max, min, first and last return one of the values
// themselves (the first of equal ones for max and min); average and
// avg_zero divide, giving a float.
func consolidatedIntPoints(pts []point, s *series, off, k int) []point {
	if s.ints == nil {
		return pts
	}
	fn := s.consolidation
	for g := range pts {
		if isNull(pts[g].v) {
			continue
		}
		lo := off + g*k
		hi := min(lo+k, len(s.values))
		pick, allInt := -1, true
		for i := lo; i < hi; i++ {
			v := s.values[i]
			if isNull(v) {
				continue
			}
			allInt = allInt && s.intAt(i)
			switch {
			case pick < 0,
				fn == "last",
				fn == "max" && v > s.values[pick],
				fn == "min" && v < s.values[pick]:
				pick = i
			}
		}
		switch fn {
		case "sum":
			pts[g].isInt = allInt
		case "max", "min", "first", "last":
			pts[g].isInt = pick >= 0 && s.intAt(pick)
		}
	}
	return pts
}

// encodeScratch holds what encoding a body needs beside the body itself,
// reused across requests through scratchPool so that a body costs no
// allocation per series or per point.
type encodeScratch struct {
	vals []float64 // consolidated values
	pts  []point
}

var scratchPool = sync.Pool{New: func() any { return new(encodeScratch) }}

// maxPooledScratch bounds the scratch slices kept for the next request
// (in elements), so that one huge render does not pin its memory.
const maxPooledScratch = 1 << 20

func putScratch(sc *encodeScratch) {
	if cap(sc.pts) > maxPooledScratch || cap(sc.vals) > maxPooledScratch {
		return
	}
	scratchPool.Put(sc)
}

// renderJSON appends graphite-web's JSON render format to b:
//
//	[{"target": "a.b", "tags": {"name": "a.b"}, "datapoints": [[1.0, 1700000000], [null, 1700000060]]}]
//
// maxDataPoints 0 means no consolidation; noNullPoints drops null points
// and series left empty.
func renderJSON(b []byte, list []*series, maxDataPoints int, noNullPoints bool) []byte {
	// room for a typical point ("[12.375, 1700000000], ") so that the
	// body is not copied as it grows
	est := 2
	for _, s := range list {
		n := len(s.values)
		if maxDataPoints > 0 {
			n = min(n, maxDataPoints)
		}
		est += 64 + len(s.name) + 24*n
	}
	b = append(slices.Grow(b, est), '[')
	anyData := false
	var startTime, endTime int64
	for _, s := range list {
		if len(s.values) == 0 {
			continue
		}
		if !anyData || s.start < startTime {
			startTime = s.start
		}
		if !anyData || s.end > endTime {
			endTime = s.end
		}
		anyData = true
	}
	if !anyData {
		return append(b, ']')
	}
	sc := scratchPool.Get().(*encodeScratch)
	defer putScratch(sc)
	first := true
	for _, s := range list {
		var pts []point
		if maxDataPoints > 0 {
			pts = consolidateForMaxDataPoints(sc, s, maxDataPoints, endTime-startTime)
		} else {
			sc.pts = datapoints(sc.pts, s.values, s.start, s.end, s.step)
			pts = intPoints(sc.pts, s)
		}
		if noNullPoints {
			kept := pts[:0]
			for _, p := range pts {
				if !isNull(p.v) {
					kept = append(kept, p)
				}
			}
			if len(kept) == 0 {
				continue
			}
			pts = kept
		}
		if !first {
			b = append(b, ", "...)
		}
		first = false
		b = append(b, `{"target": `...)
		b = appendPyJSONString(b, s.name, true)
		b = append(b, `, "tags": {`...)
		for i, t := range s.tags {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = appendPyJSONString(b, t.k, true)
			b = append(b, ": "...)
			b = appendPyJSONString(b, t.v, true)
		}
		b = append(b, `}, "datapoints": [`...)
		var ts decimalCounter
		for i, p := range pts {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = append(b, '[')
			if p.isInt && !isNull(p.v) {
				b = appendValue(b, p.v, true)
			} else {
				b = appendPyJSONFloat(b, p.v)
			}
			b = append(b, ", "...)
			b = ts.append(b, p.ts)
			b = append(b, ']')
		}
		b = append(b, "]}"...)
	}
	return append(b, ']')
}

// decimalCounter spells a rising run of integers (a series' timestamps)
// by adding each difference to the decimal digits of the last one, which
// for a step of a few digits is cheaper than dividing the whole number
// again. The zero value is ready.
type decimalCounter struct {
	digits [20]byte // the last value, right-aligned in digits[lo:]
	lo     int
	last   int64
	ok     bool
}

func (c *decimalCounter) append(b []byte, v int64) []byte {
	if c.ok && v >= c.last {
		add := v - c.last
		i := len(c.digits) - 1
		for add > 0 && i >= c.lo {
			d := int64(c.digits[i]-'0') + add%10
			add /= 10
			if d >= 10 {
				d -= 10
				add++
			}
			c.digits[i] = byte('0' + d)
			i--
		}
		if add == 0 {
			c.last = v
			return append(b, c.digits[c.lo:]...)
		}
		// the sum has more digits than the last value: spelled afresh
	}
	if v < 0 {
		c.ok = false
		return strconv.AppendInt(b, v, 10)
	}
	n := len(strconv.AppendInt(c.digits[:0], v, 10))
	c.lo = len(c.digits) - n
	copy(c.digits[c.lo:], c.digits[:n])
	c.last, c.ok = v, true
	return append(b, c.digits[c.lo:]...)
}

// renderCSV is graphite-web's CSV format, one row per point with the
// time in loc, CRLF line ends, empty value for null:
//
//	a.b,2023-11-14 22:13:20,1.0
func renderCSV(b []byte, list []*series, loc *time.Location) []byte {
	clock := csvClock{loc: loc}
	for _, s := range list {
		name := csvField(s.name)
		for i, v := range s.values {
			b = append(b, name...)
			b = append(b, ',')
			b = clock.append(b, s.start+int64(i)*s.step)
			b = append(b, ',')
			if !isNull(v) {
				b = appendValue(b, v, s.intAt(i))
			}
			b = append(b, '\r', '\n')
		}
	}
	return b
}

// csvClock spells Unix times as time.Format's "2006-01-02 15:04:05" in
// loc, a row at a time: it keeps the zone's offset while it holds
// (ZoneBounds) and the date while the local day lasts, and appends the
// time of day from two-digit pairs, where formatting each time cost
// three quarters of a CSV body.
type csvClock struct {
	loc                *time.Location
	zoneFrom, zoneTill int64 // [zoneFrom, zoneTill) has offset; empty at first
	offset             int64
	day                int64  // local days since 1970-01-01 that date spells
	date               []byte // "2006-01-02 " of day; nil at first
}

func (c *csvClock) append(b []byte, ts int64) []byte {
	if ts < c.zoneFrom || ts >= c.zoneTill {
		t := time.Unix(ts, 0).In(c.loc)
		_, off := t.Zone()
		from, till := t.ZoneBounds()
		c.offset, c.zoneFrom, c.zoneTill = int64(off), math.MinInt64, math.MaxInt64
		if !from.IsZero() {
			c.zoneFrom = from.Unix()
		}
		if !till.IsZero() {
			c.zoneTill = till.Unix()
		}
		if ts < c.zoneFrom || ts >= c.zoneTill { // not expected: spell it whole
			c.zoneFrom, c.zoneTill = 0, 0
			return t.AppendFormat(b, "2006-01-02 15:04:05")
		}
	}
	local := ts + c.offset
	day, sec := local/86400, local%86400
	if sec < 0 {
		day, sec = day-1, sec+86400
	}
	if c.date == nil || day != c.day {
		c.day = day
		c.date = time.Unix(day*86400, 0).UTC().AppendFormat(c.date[:0], "2006-01-02 ")
	}
	b = append(b, c.date...)
	b = append2(b, sec/3600)
	b = append(b, ':')
	b = append2(b, sec/60%60)
	b = append(b, ':')
	return append2(b, sec%60)
}

// append2 appends 0 <= n < 100 as two digits.
func append2(b []byte, n int64) []byte {
	return append(b, byte('0'+n/10), byte('0'+n%10))
}

// csvField quotes a field as Python's csv module does by default: only
// when it holds a comma, a quote or a line break.
func csvField(s string) string {
	if !strings.ContainsAny(s, ",\"\r\n") {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// renderRaw is graphite-web's raw format, one line per series:
//
//	a.b,1700000000,1700000180,60|1.0,None,2.5
func renderRaw(b []byte, list []*series) []byte {
	for _, s := range list {
		b = append(b, s.name...)
		b = append(b, ',')
		b = strconv.AppendInt(b, s.start, 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, s.end, 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, s.step, 10)
		b = append(b, '|')
		for i, v := range s.values {
			if i > 0 {
				b = append(b, ',')
			}
			if isNull(v) {
				b = append(b, "None"...)
			} else {
				b = appendValue(b, v, s.intAt(i))
			}
		}
		b = append(b, '\n')
	}
	return b
}
