package render

// The encoders as they were before the body was written in one pass
// into a pooled buffer, kept as the reference that the differential
// tests (TestRenderEncodersMatchReference) compare the current ones with
// byte for byte.

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// refPoint is one output datapoint.
type refPoint struct {
	v     float64
	ts    int64
	isInt bool // a Python int in graphite-web: printed without ".0"
}

// refIntPoints marks the points that pair s's values unchanged (pts[i] is
// s.values[i]) with the values' int marks.
func refIntPoints(pts []refPoint, s *series) []refPoint {
	if s.ints == nil {
		return pts
	}
	for i := range pts {
		pts[i].isInt = s.intAt(i)
	}
	return pts
}

// refAppendValue appends v as graphite-web's repr or str spells it: a
// Python int without ".0".
func refAppendValue(b []byte, v float64, isInt bool) []byte {
	if isInt && !math.IsNaN(v) && !math.IsInf(v, 0) {
		return strconv.AppendFloat(b, v, 'f', -1, 64)
	}
	return refAppendPyRepr(b, v)
}

// refDatapoints pairs values with timestamps start, start+step, ... up to
// end inclusive, stopping at whichever runs out first, as Graphite does.
func refDatapoints(vals []float64, start, end, step int64) []refPoint {
	if step <= 0 {
		step = 1
	}
	n := 0
	if end >= start {
		n = int((end-start)/step) + 1
	}
	n = min(n, len(vals))
	out := make([]refPoint, n)
	for i := range out {
		out[i] = refPoint{v: vals[i], ts: start + int64(i)*step}
	}
	return out
}

// refConsolidateForMaxDataPoints thins s to at most maxDataPoints points
// over timeRange seconds the way graphite-web's JSON view does: averaging
// groups of ceil(points/maxDataPoints) values and nudging the start so the
// groups fall on multiples of the new step (no jitter between refreshes).
func refConsolidateForMaxDataPoints(s *series, maxDataPoints int, timeRange int64) []refPoint {
	vals, start, step := s.values, s.start, s.step
	if maxDataPoints == 1 {
		k := max(len(vals), 1)
		return refConsolidatedIntPoints(refDatapoints(refConsolidateBy(s.values, k, s.consolidation, s.xff), start, s.end, step*int64(k)), s, 0, k)
	}
	n := float64(timeRange) / float64(step)
	if float64(maxDataPoints) >= n {
		return refIntPoints(refDatapoints(vals, start, s.end, step), s)
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
	pts := refDatapoints(refConsolidateBy(vals, int(k), s.consolidation, s.xff), start, s.end, secondsPerPoint)
	return refConsolidatedIntPoints(pts, s, off, int(k))
}

// refConsolidatedIntPoints marks the points that consolidate groups of k of
// s's values, from index off on, into a Python int in graphite-web: sum
// of ints is an int, max, min, first and last return one of the values
// themselves (the first of equal ones for max and min); average and
// avg_zero divide, giving a float.
func refConsolidatedIntPoints(pts []refPoint, s *series, off, k int) []refPoint {
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

// refRenderJSON is graphite-web's JSON render format:
//
//	[{"target": "a.b", "tags": {"name": "a.b"}, "datapoints": [[1.0, 1700000000], [null, 1700000060]]}]
//
// maxDataPoints 0 means no consolidation; noNullPoints drops null points
// and series left empty.
func refRenderJSON(list []*series, maxDataPoints int, noNullPoints bool) []byte {
	// room for a typical refPoint ("[12.375, 1700000000], ") so that the
	// body is not copied as it grows
	est := 2
	for _, s := range list {
		n := len(s.values)
		if maxDataPoints > 0 {
			n = min(n, maxDataPoints)
		}
		est += 64 + len(s.name) + 24*n
	}
	b := append(make([]byte, 0, est), '[')
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
	first := true
	for _, s := range list {
		var pts []refPoint
		if maxDataPoints > 0 {
			pts = refConsolidateForMaxDataPoints(s, maxDataPoints, endTime-startTime)
		} else {
			pts = refIntPoints(refDatapoints(s.values, s.start, s.end, s.step), s)
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
		for i, p := range pts {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = append(b, '[')
			if p.isInt && !isNull(p.v) {
				b = refAppendValue(b, p.v, true)
			} else {
				b = refAppendPyJSONFloat(b, p.v)
			}
			b = append(b, ", "...)
			b = strconv.AppendInt(b, p.ts, 10)
			b = append(b, ']')
		}
		b = append(b, "]}"...)
	}
	return append(b, ']')
}

// refRenderCSV is graphite-web's CSV format, one row per refPoint with the
// time in loc, CRLF line ends, empty value for null:
//
//	a.b,2023-11-14 22:13:20,1.0
func refRenderCSV(list []*series, loc *time.Location) []byte {
	var b []byte
	for _, s := range list {
		name := refCsvField(s.name)
		for i, v := range s.values {
			b = append(b, name...)
			b = append(b, ',')
			b = time.Unix(s.start+int64(i)*s.step, 0).In(loc).AppendFormat(b, "2006-01-02 15:04:05")
			b = append(b, ',')
			if !isNull(v) {
				b = refAppendValue(b, v, s.intAt(i))
			}
			b = append(b, '\r', '\n')
		}
	}
	return b
}

// refCsvField quotes a field as Python's csv module does by default: only
// when it holds a comma, a quote or a line break.
func refCsvField(s string) string {
	if !strings.ContainsAny(s, ",\"\r\n") {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// refRenderRaw is graphite-web's raw format, one line per series:
//
//	a.b,1700000000,1700000180,60|1.0,None,2.5
func refRenderRaw(list []*series) []byte {
	var b []byte
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
				b = refAppendValue(b, v, s.intAt(i))
			}
		}
		b = append(b, '\n')
	}
	return b
}

// refAppendPyRepr appends pyRepr(f) to b without allocating (a render body
// spells up to millions of values).
func refAppendPyRepr(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "nan"...)
	case math.IsInf(f, 1):
		return append(b, "inf"...)
	case math.IsInf(f, -1):
		return append(b, "-inf"...)
	}
	if a := math.Abs(f); a == 0 || a >= 1e-4 && a < 1e16 {
		// Fast path: the shortest decimal has an exponent in [-4, 16),
		// which Python spells without an exponent.
		return refAppendPoint(strconv.AppendFloat(b, f, 'f', -1, 64), len(b))
	}
	var buf [32]byte
	e := strconv.AppendFloat(buf[:0], f, 'e', -1, 64) // d.ddde±XX
	k := len(e) - 1
	for e[k] != 'e' {
		k--
	}
	mant, exp := e[:k], 0
	for _, c := range e[k+2:] { // after the sign
		exp = exp*10 + int(c-'0')
	}
	if e[k+1] == '-' {
		exp = -exp
	}
	if exp < -4 || exp >= 16 {
		b = append(b, mant...)
		b = append(b, 'e')
		if exp < 0 {
			b, exp = append(b, '-'), -exp
		} else {
			b = append(b, '+')
		}
		if exp < 10 {
			b = append(b, '0')
		}
		return strconv.AppendInt(b, int64(exp), 10)
	}
	return refAppendPoint(strconv.AppendFloat(b, f, 'f', -1, 64), len(b))
}

// refAppendPoint appends ".0" to b when b[from:] has no decimal refPoint.
func refAppendPoint(b []byte, from int) []byte {
	for _, c := range b[from:] {
		if c == '.' {
			return b
		}
	}
	return append(b, ".0"...)
}

// refAppendPyJSONFloat appends a value as graphite-web's JSON does: NaN as
// null, infinities as ±1e9999 (which JSON parsers read back as infinity).
func refAppendPyJSONFloat(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, "null"...)
	case math.IsInf(f, 1):
		return append(b, "1e9999"...)
	case math.IsInf(f, -1):
		return append(b, "-1e9999"...)
	}
	return refAppendPyRepr(b, f)
}

// refConsolidateBy merges every k adjacent values as consolidateBy did
// before averages were summed in one pass.
func refConsolidateBy(vs []float64, k int, fn string, xff float64) []float64 {
	if k <= 1 {
		return vs
	}
	out := make([]float64, 0, (len(vs)+k-1)/k)
	for i := 0; i < len(vs); i += k {
		g := vs[i:min(i+k, len(vs))]
		n := countNonNull(g)
		if n == 0 || float64(n)/float64(k) < xff {
			out = append(out, nan)
			continue
		}
		out = append(out, consolidationFuncs[fn](g))
	}
	return out
}
