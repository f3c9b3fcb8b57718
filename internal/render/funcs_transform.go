package render

import (
	"math"
	"strconv"
)

func scaleOrOffset(fn string) func(*evaluator, *args) ([]*series, error) {
	return func(ev *evaluator, a *args) ([]*series, error) {
		f := a.vals["factor"]
		var out []*series
		for _, s := range a.seriesList("seriesList") {
			name := fn + "(" + s.name + "," + pyG(f.num) + ")"
			c := s.clone(name)
			c.pathExpr = name
			c.tags = s.tags.with(fn, f.pyStr())
			for i, v := range c.values {
				if fn == "scale" {
					c.values[i] = v * f.num // null stays null
				} else {
					c.values[i] = v + f.num
				}
			}
			out = append(out, c)
		}
		return out, nil
	}
}

// derived names a series computed from s with Graphite's copy(): the new
// name is also the path expression.
func derived(s *series, name, tagKey, tagVal string, values []float64) *series {
	c := s.copyWith(name, values)
	c.pathExpr = name
	if tagKey != "" {
		c.tags = s.tags.with(tagKey, tagVal)
	}
	return c
}

func derivative(ev *evaluator, a *args) ([]*series, error) {
	var out []*series
	for _, s := range a.seriesList("seriesList") {
		vals := make([]float64, len(s.values))
		prev := nan
		for i, v := range s.values {
			if isNull(prev) || isNull(v) {
				vals[i] = nan
			} else {
				vals[i] = v - prev
			}
			prev = v
		}
		out = append(out, derived(s, "derivative("+s.name+")", "derivative", "1", vals))
	}
	return out, nil
}

// nonNegativeDelta is one step of a counter's derivative: the increase
// since prev; a decrease is a wrap past maxValue when given, a fall from
// minValue when given, else a reset (null). It returns the new prev.
func nonNegativeDelta(v, prev float64, maxV, minV *float64) (delta, next float64) {
	if isNull(v) || maxV != nil && v > *maxV || minV != nil && v < *minV {
		return nan, nan
	}
	if isNull(prev) {
		return nan, v
	}
	if v >= prev {
		return v - prev, v
	}
	if maxV != nil {
		lo := 0.0
		if minV != nil {
			lo = *minV
		}
		return *maxV + 1 + v - prev - lo, v
	}
	if minV != nil {
		return v - *minV, v
	}
	return nan, v
}

// roundTo6 rounds like Python's round(x, 6): correctly, half to even.
func roundTo6(x float64) float64 {
	r, err := strconv.ParseFloat(strconv.FormatFloat(x, 'f', 6, 64), 64)
	if err != nil {
		return x
	}
	return r
}

func nonNegativeDerivative(fn string) func(*evaluator, *args) ([]*series, error) {
	return func(ev *evaluator, a *args) ([]*series, error) {
		var maxV, minV *float64
		if a.has("maxValue") {
			v := a.number("maxValue", 0)
			maxV = &v
		}
		if a.has("minValue") {
			v := a.number("minValue", 0)
			minV = &v
		}
		var out []*series
		for _, s := range a.seriesList("seriesList") {
			vals := make([]float64, len(s.values))
			prev := nan
			for i, v := range s.values {
				var d float64
				d, prev = nonNegativeDelta(v, prev, maxV, minV)
				if fn == "perSecond" && !isNull(d) {
					d = roundTo6(d / float64(s.step))
				}
				vals[i] = d
			}
			out = append(out, derived(s, fn+"("+s.name+")", fn, "1", vals))
		}
		return out, nil
	}
}

func integral(ev *evaluator, a *args) ([]*series, error) {
	var out []*series
	for _, s := range a.seriesList("seriesList") {
		vals := make([]float64, len(s.values))
		cur := 0.0
		for i, v := range s.values {
			if isNull(v) {
				vals[i] = nan
				continue
			}
			cur += v
			vals[i] = cur
		}
		out = append(out, derived(s, "integral("+s.name+")", "integral", "1", vals))
	}
	return out, nil
}

func absolute(ev *evaluator, a *args) ([]*series, error) {
	var out []*series
	for _, s := range a.seriesList("seriesList") {
		vals := make([]float64, len(s.values))
		for i, v := range s.values {
			vals[i] = math.Abs(v)
		}
		out = append(out, derived(s, "absolute("+s.name+")", "absolute", "1", vals))
	}
	return out, nil
}

func keepLastValue(ev *evaluator, a *args) ([]*series, error) {
	limit := a.number("limit", posInf)
	var out []*series
	for _, s := range a.seriesList("seriesList") {
		c := derived(s, "keepLastValue("+s.name+")", "", "", append([]float64(nil), s.values...))
		nulls := 0
		last := nan
		fill := func(from, to int) {
			if nulls > 0 && float64(nulls) <= limit && !isNull(last) {
				for j := from; j < to; j++ {
					c.values[j] = last
				}
			}
		}
		for i, v := range c.values {
			if isNull(v) {
				nulls++
				continue
			}
			fill(i-nulls, i)
			nulls, last = 0, v
		}
		fill(len(c.values)-nulls, len(c.values))
		out = append(out, c)
	}
	return out, nil
}

func transformNull(ev *evaluator, a *args) ([]*series, error) {
	def := a.vals["default"]
	defNum := 0.0
	defStr := "0"
	defInt := true // the default default is the Python int 0
	if def.kind == valNumber {
		defNum, defStr, defInt = def.num, def.pyStr(), def.isInt
	}
	var defaults []float64 // per index: the default, or null where the reference has no data
	ref := a.seriesList("referenceSeries")
	if a.has("referenceSeries") {
		rows(ref, func(row []float64) {
			if countNonNull(row) > 0 {
				defaults = append(defaults, defNum)
			} else {
				defaults = append(defaults, nan)
			}
		})
	}
	var out []*series
	for _, s := range a.seriesList("seriesList") {
		name := "transformNull(" + s.name + "," + pyG(defNum) + ")"
		tags := s.tags.with("transformNull", defStr)
		if a.has("referenceSeries") {
			name = "transformNull(" + s.name + "," + pyG(defNum) + ",referenceSeries)"
			tags = tags.with("referenceSeries", "1")
		}
		var vals []float64
		if len(defaults) > 0 {
			vals = make([]float64, max(len(s.values), len(defaults)))
			for i := range vals {
				v, d := nan, nan
				if i < len(s.values) {
					v = s.values[i]
				}
				if i < len(defaults) {
					d = defaults[i]
				}
				if isNull(v) {
					v = d
				}
				vals[i] = v
			}
		} else {
			vals = make([]float64, len(s.values))
			for i, v := range s.values {
				if isNull(v) {
					v = defNum
				}
				vals[i] = v
			}
		}
		c := derived(s, name, "", "", vals)
		c.tags = tags
		if bits := transformNullInts(s, vals, defInt); bits != nil {
			c.markInts(bits)
		}
		out = append(out, c)
	}
	return out, nil
}

// transformNullInts marks transformNull's ints: the values it kept that
// were ints, and the nulls it replaced when the default is an int; nil
// when there is none.
func transformNullInts(s *series, vals []float64, defInt bool) []bool {
	var bits []bool
	for i, v := range vals {
		kept := i < len(s.values) && !isNull(s.values[i])
		isInt := kept && s.intAt(i) || !kept && defInt && !isNull(v)
		if isInt {
			if bits == nil {
				bits = make([]bool, len(vals))
			}
			bits[i] = true
		}
	}
	return bits
}

// intervalSeconds parses an interval string to whole seconds.
func intervalSeconds(s string) (int64, error) {
	d, err := ParseOffset(s)
	if err != nil {
		return 0, inputErrorf("invalid interval %q: %v", s, err)
	}
	return int64(d.Seconds()), nil
}

func summarize(ev *evaluator, a *args) ([]*series, error) {
	ivs := a.str("intervalString", "")
	interval, err := intervalSeconds(ivs)
	if err != nil {
		return nil, err
	}
	if interval <= 0 {
		return nil, inputErrorf("summarize: interval %q must be positive", ivs)
	}
	fn := a.str("func", "sum")
	agg, _, _ := lookupAgg(fn)
	alignToFrom := a.boolean("alignToFrom", false)
	var out []*series
	for _, s := range a.seriesList("seriesList") {
		newStart, newEnd := s.start, s.end
		if !alignToFrom {
			newStart = s.start - pyMod(s.start, interval)
			newEnd = s.end - pyMod(s.end, interval) + interval
		}
		if err := ev.req.charge(int((newEnd - newStart) / interval)); err != nil {
			return nil, err
		}
		vals, alignedEnd := summarizeValues(s, agg, interval, newStart, newEnd)
		if alignToFrom {
			newEnd = alignedEnd
		}
		suffix := ""
		if alignToFrom {
			suffix = ", true"
		}
		name := "summarize(" + s.name + `, "` + ivs + `", "` + fn + `"` + suffix + ")"
		c := derived(s, name, "", "", vals)
		c.tags = s.tags.with("summarize", ivs).with("summarizeFunction", fn)
		c.start, c.end, c.step = newStart, newEnd, interval
		out = append(out, c)
	}
	return out, nil
}

// pyMod is Python's % for a positive modulus: never negative.
func pyMod(a, m int64) int64 {
	r := a % m
	if r < 0 {
		r += m
	}
	return r
}

// summarizeValues buckets s into [t, t+interval) from newStart while
// t < newEnd; a bucket with no non-null point is null. It returns the
// values and the end of the last bucket.
func summarizeValues(s *series, agg aggFunc, interval, newStart, newEnd int64) ([]float64, int64) {
	n := 0
	if s.end > s.start {
		n = int((s.end - s.start + s.step - 1) / s.step)
	}
	n = min(n, len(s.values))
	ts := func(i int) int64 { return s.start + int64(i)*s.step }
	var out []float64
	i := 0
	t := newStart
	for ; t < newEnd; t += interval {
		first, nonNull := i, 0
		for i < n && ts(i) < t+interval {
			if ts(i) <= t {
				first = i
			}
			if ts(i) >= t && !isNull(s.values[i]) {
				nonNull++
			}
			i++
		}
		// graphite-web's xff(nonNull, interval/step, series.xFilesFactor)
		if nonNull > 0 && float64(nonNull)/(float64(interval)/float64(s.step)) >= s.xff {
			out = append(out, agg(s.values[first:i]))
		} else {
			out = append(out, nan)
		}
	}
	return out, t
}

func timeShift(ev *evaluator, a *args) ([]*series, error) {
	shift := a.str("timeShift", "")
	if shift != "" && shift[0] >= '0' && shift[0] <= '9' {
		shift = "-" + shift // a bare interval means back in time
	}
	d, err := ParseOffset(shift)
	if err != nil {
		return nil, inputErrorf("timeShift: invalid interval %q", shift)
	}
	orig := a.seriesList("seriesList")
	if len(orig) == 0 {
		return nil, nil
	}
	first := orig[0]
	sec := int64(d.Seconds())
	shifted, err := ev.withRange(ev.from+sec, ev.until+sec).evalTarget(a.vals["seriesList"].expr)
	if err != nil {
		return nil, err
	}
	resetEnd := a.boolean("resetEnd", true)
	out := make([]*series, 0, len(shifted))
	for _, s := range shifted {
		c := *s
		c.name = "timeShift(" + s.name + `, "` + shift + `")`
		c.tags = s.tags.with("timeShift", shift)
		if resetEnd {
			c.end = first.end
		} else {
			c.end = s.end - s.start + first.start
		}
		c.start = first.start
		out = append(out, &c)
	}
	return out, nil
}
