package render

import (
	"math"
	"strconv"
	"time"
)

// This file holds the point-wise Transform functions: each maps every
// value of every series through one formula, renames the series
// "<fn>(<name>[,arg])" and records the argument in its tags, as
// graphite-web's in-place loops do.

// pointwise builds a Transform function: name gives the new name, tagV
// the value of tag tagK ("" for no tag), f maps one value (NaN is null).
func pointwise(tagK string, tagV func(a *args, s *series) string, name func(a *args, s *series) string,
	f func(a *args, s *series) func(float64) float64) func(*evaluator, *args) ([]*series, error) {
	return func(ev *evaluator, a *args) ([]*series, error) {
		var out []*series
		for _, s := range a.seriesList("seriesList") {
			fn := f(a, s)
			vals := make([]float64, len(s.values))
			for i, v := range s.values {
				vals[i] = fn(v)
			}
			tv := ""
			if tagV != nil {
				tv = tagV(a, s)
			}
			out = append(out, derived(s, name(a, s), tagK, tv, vals))
		}
		return out, nil
	}
}

func constTag(v string) func(*args, *series) string { return func(*args, *series) string { return v } }

// argTag tags with the argument as Python's str() spells it.
func argTag(p string) func(*args, *series) string {
	return func(a *args, _ *series) string { return a.vals[p].pyStr() }
}

func wrapName(fn string) func(*args, *series) string {
	return func(_ *args, s *series) string { return fn + "(" + s.name + ")" }
}

func fixed(f func(float64) float64) func(*args, *series) func(float64) float64 {
	return func(*args, *series) func(float64) float64 { return f }
}

// safePow is Python's math.pow with graphite-web's safePow: null for a
// null operand or a domain or range error.
func safePow(x, y float64) float64 {
	if isNull(x) || isNull(y) {
		return nan
	}
	r := math.Pow(x, y)
	if math.IsNaN(r) || math.IsInf(r, 0) && !math.IsInf(x, 0) && !math.IsInf(y, 0) {
		return nan
	}
	return r
}

// pyRound is Python 3's round(x, n): the decimal string nearest to x with
// n digits, ties to even on the exact binary value.
func pyRound(x float64, n int) float64 {
	if isNull(x) || math.IsInf(x, 0) || n > 330 {
		return x
	}
	if n < -330 {
		return math.Copysign(0, x)
	}
	if n >= 0 {
		r, err := strconv.ParseFloat(strconv.FormatFloat(x, 'f', n, 64), 64)
		if err != nil {
			return x
		}
		return r
	}
	p := math.Pow(10, float64(-n))
	return math.RoundToEven(x/p) * p
}

var (
	scaleToSeconds = pointwise("scaleToSeconds", argTag("seconds"),
		func(a *args, s *series) string {
			return "scaleToSeconds(" + s.name + "," + strconv.FormatInt(int64(a.number("seconds", 0)), 10) + ")"
		},
		func(a *args, s *series) func(float64) float64 {
			factor := a.number("seconds", 0) / float64(s.step)
			return func(v float64) float64 { return pyRound(v*factor, 6) }
		})
	expFunc = pointwise("exp", constTag("e"), wrapName("exp"), fixed(math.Exp))
	add     = pointwise("add", argTag("constant"),
		func(a *args, s *series) string {
			return "add(" + s.name + "," + strconv.FormatInt(int64(a.number("constant", 0)), 10) + ")"
		},
		func(a *args, _ *series) func(float64) float64 {
			c := a.number("constant", 0)
			return func(v float64) float64 { return v + c }
		})
	sigmoid = pointwise("sigmoid", constTag("sigmoid"), wrapName("sigmoid"), fixed(func(v float64) float64 {
		return 1 / (1 + math.Exp(-v))
	}))
	logit = pointwise("logit", constTag("logit"), wrapName("logit"), fixed(func(v float64) float64 {
		if v == 1 {
			return nan
		}
		r := math.Log(v / (1 - v))
		if math.IsInf(r, 0) { // log(0) raises ValueError in Python
			return nan
		}
		return r
	}))
	powFunc = pointwise("pow", argTag("factor"),
		func(a *args, s *series) string { return "pow(" + s.name + "," + pyG(a.number("factor", 0)) + ")" },
		func(a *args, _ *series) func(float64) float64 {
			f := a.number("factor", 0)
			return func(v float64) float64 { return safePow(v, f) }
		})
	squareRoot = pointwise("squareRoot", constTag("1"), wrapName("squareRoot"),
		fixed(func(v float64) float64 { return safePow(v, 0.5) }))
	invert = pointwise("invert", constTag("1"), wrapName("invert"),
		fixed(func(v float64) float64 {
			if v == 0 { // 0 ** -1 raises in Python
				return nan
			}
			return safePow(v, -1)
		}))
	offsetToZero = pointwise("offsetToZero", func(_ *args, s *series) string { return pyStrNum(aggMin(s.values)) },
		wrapName("offsetToZero"),
		func(_ *args, s *series) func(float64) float64 {
			m := aggMin(s.values)
			return func(v float64) float64 { return v - m }
		})
	roundFunc = pointwise("round",
		func(a *args, _ *series) string {
			if p := a.number("precision", 0); a.has("precision") && p != 0 {
				return a.vals["precision"].pyStr()
			}
			return "0"
		},
		func(a *args, s *series) string {
			if !a.has("precision") {
				return "round(" + s.name + ")"
			}
			return "round(" + s.name + "," + strconv.FormatInt(int64(a.number("precision", 0)), 10) + ")"
		},
		func(a *args, _ *series) func(float64) float64 {
			p := int(a.number("precision", 0))
			return func(v float64) float64 { return pyRound(v, p) }
		})
	logarithm = pointwise("log", func(a *args, _ *series) string {
		if a.has("base") {
			return a.vals["base"].pyStr()
		}
		return "10"
	},
		func(a *args, s *series) string {
			base := "10"
			if a.has("base") {
				base = a.vals["base"].pyStr()
			}
			return "log(" + s.name + ", " + base + ")"
		},
		func(a *args, _ *series) func(float64) float64 {
			base := a.number("base", 10)
			return func(v float64) float64 {
				if isNull(v) || v <= 0 {
					return nan
				}
				return math.Log(v) / math.Log(base)
			}
		})
	isNonNull = allInts(pointwise("isNonNull", constTag("1"), wrapName("isNonNull"), fixed(func(v float64) float64 {
		if isNull(v) {
			return 0
		}
		return 1
	})))
)

// allInts marks every value f's series hold as an int (graphite-web
// computes them as Python ints).
func allInts(f func(*evaluator, *args) ([]*series, error)) func(*evaluator, *args) ([]*series, error) {
	return func(ev *evaluator, a *args) ([]*series, error) {
		out, err := f(ev, a)
		for _, s := range out {
			s.markInts(nil)
		}
		return out, err
	}
}

// pyStrNum is str() of a float value, "None" for null.
func pyStrNum(v float64) string {
	if isNull(v) {
		return "None"
	}
	return pyRepr(v)
}

func minMax(ev *evaluator, a *args) ([]*series, error) {
	var out []*series
	for _, s := range a.seriesList("seriesList") {
		lo, hi := aggMin(s.values), aggMax(s.values)
		vals := make([]float64, len(s.values))
		for i, v := range s.values {
			switch {
			case isNull(v):
				vals[i] = nan
			case hi-lo == 0:
				vals[i] = 0
			default:
				vals[i] = (v - lo) / (hi - lo)
			}
		}
		out = append(out, derived(s, "minMax("+s.name+")", "", "", vals))
	}
	return out, nil
}

func changed(ev *evaluator, a *args) ([]*series, error) {
	var out []*series
	for _, s := range a.seriesList("seriesList") {
		vals := make([]float64, len(s.values))
		prev := nan
		for i, v := range s.values {
			switch {
			case isNull(prev):
				prev = v
				vals[i] = 0
			case !isNull(v) && v != prev:
				vals[i] = 1
				prev = v
			default:
				vals[i] = 0
			}
		}
		c := derived(s, "changed("+s.name+")", "", "", vals)
		c.markInts(nil) // graphite-web stores 0 and 1 as Python ints
		out = append(out, c)
	}
	return out, nil
}

func delay(ev *evaluator, a *args) ([]*series, error) {
	steps := int(a.number("steps", 0))
	var out []*series
	for _, s := range a.seriesList("seriesList") {
		n := len(s.values)
		var vals []float64
		if steps < 0 {
			k := min(-steps, n)
			vals = append(append([]float64(nil), s.values[k:]...), nulls(k)...)
		} else {
			// Python's series[:-0] is empty: delay(x, 0) has no values.
			k := min(steps, n)
			keep := 0
			if steps > 0 {
				keep = max(n-steps, 0)
			}
			vals = append(nulls(k), s.values[:keep]...)
		}
		c := s.copyWith("delay("+s.name+","+strconv.Itoa(steps)+")", vals)
		c.tags = s.tags.with("delay", strconv.Itoa(steps))
		out = append(out, c)
	}
	return out, nil
}

func interpolate(ev *evaluator, a *args) ([]*series, error) {
	limit := a.number("limit", posInf)
	var out []*series
	for _, s := range a.seriesList("seriesList") {
		c := derived(s, "interpolate("+s.name+")", "", "", append([]float64(nil), s.values...))
		v := c.values
		gap := 0
		for i := 1; i < len(v); i++ {
			switch {
			case isNull(v[i]):
				gap++
			case gap == 0:
			case isNull(v[i-gap-1]):
				gap = 0
			default:
				if float64(gap) <= limit {
					base := v[i-gap-1]
					for j := i - gap; j < i; j++ {
						v[j] = base + float64(j-(i-gap-1))*(v[i]-base)/float64(gap+1)
					}
				}
				gap = 0
			}
		}
		out = append(out, c)
	}
	return out, nil
}

func consolidateByFunc(ev *evaluator, a *args) ([]*series, error) {
	fn := a.str("consolidationFunc", "")
	if _, ok := consolidationFuncs[fn]; !ok || fn == "" {
		return nil, inputErrorf("Invalid consolidation function: '%s'", fn)
	}
	var out []*series
	for _, s := range a.seriesList("seriesList") {
		c := derived(s, "consolidateBy("+s.name+`,"`+fn+`")`, "consolidateBy", fn, s.values)
		c.consolidation = fn
		out = append(out, c)
	}
	return out, nil
}

func cumulative(ev *evaluator, a *args) ([]*series, error) {
	a.vals["consolidationFunc"] = value{kind: valString, str: "sum"}
	return consolidateByFunc(ev, a)
}

func setXFilesFactor(ev *evaluator, a *args) ([]*series, error) {
	x := a.number("xFilesFactor", 0)
	ev.req.xFilesFactor = &x
	var out []*series
	for _, s := range a.seriesList("seriesList") {
		c := *s
		c.xff = x
		c.tags = s.tags.with("xFilesFactor", a.vals["xFilesFactor"].pyStr())
		out = append(out, &c)
	}
	return out, nil
}

func integralByInterval(ev *evaluator, a *args) ([]*series, error) {
	unit := a.str("intervalUnit", "")
	sec, err := intervalSeconds(unit)
	if err != nil {
		return nil, err
	}
	interval := max(sec, -sec)
	if interval == 0 {
		return nil, inputErrorf("integralByInterval: interval %q is zero", unit)
	}
	var out []*series
	for _, s := range a.seriesList("seriesList") {
		vals := make([]float64, len(s.values))
		t := s.start
		cur := 0.0
		for i, v := range s.values {
			if floorDiv(t-ev.from, interval) != floorDiv(t-ev.from-s.step, interval) {
				cur = 0
			}
			if !isNull(v) {
				cur += v
			}
			vals[i] = cur
			t += s.step
		}
		out = append(out, derived(s, "integralByInterval("+s.name+",'"+unit+"')", "integralByInterval", unit, vals))
	}
	return out, nil
}

// floorDiv is Python's // on integers.
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func timeSlice(ev *evaluator, a *args) ([]*series, error) {
	parse := func(p, def string) (int64, error) {
		spec := a.str(p, def)
		if v, ok := a.vals[p]; ok && v.kind == valNumber {
			spec = v.pyStr()
		}
		t, err := ParseTime(spec, ev.req.now, ev.req.location())
		if err != nil {
			return 0, inputErrorf("timeSlice: invalid %s %q: %v", p, spec, err)
		}
		return t.Unix(), nil
	}
	start, err := parse("startSliceAt", "")
	if err != nil {
		return nil, err
	}
	end, err := parse("endSliceAt", "now")
	if err != nil {
		return nil, err
	}
	ss, es := strconv.FormatInt(start, 10), strconv.FormatInt(end, 10)
	var out []*series
	for _, s := range a.seriesList("seriesList") {
		vals := make([]float64, len(s.values))
		cur := ev.from
		for i, v := range s.values {
			if cur < start || cur > end {
				v = nan
			}
			vals[i] = v
			cur += s.step
		}
		c := s.copyWith("timeSlice("+s.name+", "+ss+", "+es+")", vals)
		c.tags = s.tags.with("timeSliceStart", ss).with("timeSliceEnd", es)
		out = append(out, c)
	}
	return out, nil
}

// location is the request's time zone, UTC when unset.
func (r *request) location() *time.Location {
	if r.loc == nil {
		return time.UTC
	}
	return r.loc
}
