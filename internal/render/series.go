package render

import (
	"math"
	"slices"
	"sort"
	"strings"
)

var (
	posInf = math.Inf(1)
	nan    = math.NaN()
)

// series is a series during evaluation, shaped like graphite-web's
// TimeSeries: end may differ from start+len*step (Graphite keeps it
// separately and the output pairs values with range(start, end+1, step)).
type series struct {
	name     string
	pathExpr string // the glob or expression this series came from
	tags     tagSet
	start    int64
	end      int64
	step     int64
	values   []float64 // NaN = null
	// consolidation is how adjacent values merge when the series is drawn
	// coarser (normalize, maxDataPoints): "" means "average", else one of
	// consolidateBy's names. xff is the least fraction of non-null values
	// a merged point needs (Graphite's xFilesFactor, default 0).
	consolidation string
	xff           float64
	// mapGroup is the 1-based group mapSeries put the series in (0: none).
	mapGroup int
	// total is the length of the whole series when values is a cut of
	// it (WindowSource, read by streaming aggregates only); 0 otherwise.
	total int
	// ints marks the values graphite-web would hold as Python ints (and
	// print without ".0"); nil for none. Only valid for the values slice
	// it was made for: a copy whose values were replaced drops it.
	ints *intMarks
}

// intMarks records which values of one values slice are ints. of and n
// identify the slice (its first element and length); bits nil means all.
type intMarks struct {
	of   *float64
	n    int
	bits []bool
}

// markInts marks s's current values as ints: all of them when bits is
// nil, else those whose bit is set (bits has one entry per value).
func (s *series) markInts(bits []bool) {
	if len(s.values) == 0 {
		s.ints = nil
		return
	}
	s.ints = &intMarks{of: &s.values[0], n: len(s.values), bits: bits}
}

// intAt reports whether value i is a Python int in graphite-web.
func (s *series) intAt(i int) bool {
	m := s.ints
	if m == nil || len(s.values) != m.n || &s.values[0] != m.of {
		return false
	}
	return m.bits == nil || m.bits[i]
}

// tag is one key/value of a series' tags; values are strings as in Graphite.
type tag struct{ k, v string }

// tagSet keeps tags in insertion order, which the JSON output preserves.
type tagSet []tag

func (t tagSet) get(k string) (string, bool) {
	for _, x := range t {
		if x.k == k {
			return x.v, true
		}
	}
	return "", false
}

// with returns a copy of t with k set to v.
func (t tagSet) with(k, v string) tagSet {
	out := make(tagSet, 0, len(t)+1)
	found := false
	for _, x := range t {
		if x.k == k {
			x.v, found = v, true
		}
		out = append(out, x)
	}
	if !found {
		out = append(out, tag{k, v})
	}
	return out
}

// copyWith returns a copy of s with a new name and values; tags are shared
// (tagSet.with copies before writing).
func (s *series) copyWith(name string, values []float64) *series {
	c := *s
	c.name = name
	c.values = values
	return &c
}

// clone returns a deep copy of s's values with a new name.
func (s *series) clone(name string) *series {
	return s.copyWith(name, append([]float64(nil), s.values...))
}

func isNull(v float64) bool { return math.IsNaN(v) }

// aggFunc reduces values (nulls included) to one value, NaN for none.
type aggFunc func([]float64) float64

// aggFuncs are Graphite's aggregation functions by name, with its aliases.
var aggFuncs = map[string]aggFunc{
	"average":  aggAverage,
	"avg":      aggAverage,
	"avg_zero": aggAvgZero,
	"median":   aggMedian,
	"sum":      aggSum,
	"total":    aggSum,
	"min":      aggMin,
	"max":      aggMax,
	"diff":     aggDiff,
	"stddev":   aggStddev,
	"count":    aggCount,
	"range":    aggRange,
	"rangeOf":  aggRange,
	"multiply": aggMultiply,
	"last":     aggLast,
	"current":  aggLast,
}

// lookupAgg finds an aggregation function by name, accepting the
// deprecated "<name>Series" spellings as graphite-web does; it returns
// the canonical name without the suffix.
func lookupAgg(name string) (aggFunc, string, bool) {
	if f, ok := aggFuncs[name]; ok {
		return f, name, true
	}
	if base, ok := strings.CutSuffix(name, "Series"); ok {
		if f, ok := aggFuncs[base]; ok {
			return f, base, true
		}
	}
	return nil, name, false
}

// aggFuncNames lists the canonical names for /functions.
var aggFuncNames = []string{"average", "avg", "avg_zero", "median", "sum", "total", "min", "max", "diff", "stddev", "count", "range", "rangeOf", "multiply", "last", "current"}

// countNonNull counts the non-null values without allocating.
func countNonNull(vs []float64) int {
	n := 0
	for _, v := range vs {
		if !isNull(v) {
			n++
		}
	}
	return n
}

func nonNull(vs []float64) []float64 {
	out := make([]float64, 0, len(vs))
	for _, v := range vs {
		if !isNull(v) {
			out = append(out, v)
		}
	}
	return out
}

func aggSum(vs []float64) float64 {
	sum, n := 0.0, 0
	for _, v := range vs {
		if !isNull(v) {
			sum += v
			n++
		}
	}
	if n == 0 {
		return nan
	}
	return sum
}

func aggAverage(vs []float64) float64 {
	sum, n := 0.0, 0
	for _, v := range vs {
		if !isNull(v) {
			sum += v
			n++
		}
	}
	if n == 0 {
		return nan
	}
	return sum / float64(n)
}

func aggAvgZero(vs []float64) float64 {
	if len(vs) == 0 {
		return nan
	}
	sum := 0.0
	for _, v := range vs {
		if !isNull(v) {
			sum += v
		}
	}
	return sum / float64(len(vs))
}

func aggMedian(vs []float64) float64 {
	nn := nonNull(vs)
	if len(nn) == 0 {
		return nan
	}
	sort.Float64s(nn)
	mid := len(nn) / 2
	if len(nn)%2 == 0 {
		return (nn[mid-1] + nn[mid]) / 2
	}
	return nn[mid]
}

func aggMin(vs []float64) float64 {
	out := nan
	for _, v := range vs {
		if !isNull(v) && (isNull(out) || v < out) {
			out = v
		}
	}
	return out
}

func aggMax(vs []float64) float64 {
	out := nan
	for _, v := range vs {
		if !isNull(v) && (isNull(out) || v > out) {
			out = v
		}
	}
	return out
}

func aggDiff(vs []float64) float64 {
	nn := nonNull(vs)
	if len(nn) == 0 {
		return nan
	}
	out := nn[0]
	for _, v := range nn[1:] {
		out -= v
	}
	return out
}

func aggStddev(vs []float64) float64 {
	nn := nonNull(vs)
	if len(nn) == 0 {
		return nan
	}
	avg := aggAverage(nn)
	sum := 0.0
	for _, v := range nn {
		sum += (v - avg) * (v - avg)
	}
	return math.Sqrt(sum / float64(len(nn)))
}

func aggCount(vs []float64) float64 { return float64(countNonNull(vs)) }

func aggRange(vs []float64) float64 { return aggMax(vs) - aggMin(vs) }

func aggMultiply(vs []float64) float64 {
	if len(vs) == 0 {
		return nan
	}
	out := 1.0
	for _, v := range vs {
		if isNull(v) {
			return nan
		}
		out *= v
	}
	return out
}

func aggLast(vs []float64) float64 {
	for i := len(vs) - 1; i >= 0; i-- {
		if !isNull(vs[i]) {
			return vs[i]
		}
	}
	return nan
}

// consolidateBy merges every k adjacent values with the named
// consolidation function as Graphite's consolidating iterator does: a
// group is null unless its non-null count over k reaches xff (and is not
// zero); avg_zero counts nulls as zeros; a trailing partial group is
// divided by k for the xff test too.
func consolidateBy(vs []float64, k int, fn string, xff float64) []float64 {
	if k <= 1 {
		return vs
	}
	return consolidateInto(make([]float64, 0, (len(vs)+k-1)/k), vs, k, fn, xff)
}

// consolidateInto appends consolidateBy(vs, k, fn, xff) to dst (a copy
// of vs when k <= 1).
func consolidateInto(dst, vs []float64, k int, fn string, xff float64) []float64 {
	if k <= 1 {
		return append(dst, vs...)
	}
	dst = slices.Grow(dst, (len(vs)+k-1)/k)
	if fn == "" || fn == "average" || fn == "avg" {
		// the common case in one pass: aggAverage's sum and count
		for i := 0; i < len(vs); i += k {
			sum, n := 0.0, 0
			for _, v := range vs[i:min(i+k, len(vs))] {
				if !isNull(v) {
					sum += v
					n++
				}
			}
			if n == 0 || float64(n)/float64(k) < xff {
				dst = append(dst, nan)
				continue
			}
			dst = append(dst, sum/float64(n))
		}
		return dst
	}
	f := consolidationFuncs[fn]
	for i := 0; i < len(vs); i += k {
		g := vs[i:min(i+k, len(vs))]
		n := countNonNull(g)
		if n == 0 || float64(n)/float64(k) < xff {
			dst = append(dst, nan)
			continue
		}
		dst = append(dst, f(g))
	}
	return dst
}

// consolidationFuncs are consolidateBy's functions over a group with at
// least one non-null value.
var consolidationFuncs = map[string]aggFunc{
	"":         aggAverage,
	"average":  aggAverage,
	"avg":      aggAverage,
	"avg_zero": aggAvgZero,
	"sum":      aggSum,
	"max":      aggMax,
	"min":      aggMin,
	"first": func(vs []float64) float64 {
		for _, v := range vs {
			if !isNull(v) {
				return v
			}
		}
		return nan
	},
	"last": aggLast,
}

// consolidated returns s's values merged k to one by s's consolidation.
func (s *series) consolidated(k int) []float64 {
	return consolidateBy(s.values, k, s.consolidation, s.xff)
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

func lcm(a, b int64) int64 {
	if a == b {
		return a
	}
	return a / gcd(a, b) * b
}

// normalize brings series to a common step, the least common multiple of
// their steps, consolidating the finer ones, and returns copies plus the
// common start, end and step. Like Graphite it pairs values by index, not
// by timestamp. Callers pass at least one series.
func normalize(list []*series) (out []*series, start, end, step int64) {
	step = list[0].step
	start, end = list[0].start, list[0].end
	for _, s := range list[1:] {
		step = lcm(step, s.step)
		start = min(start, s.start)
		end = max(end, s.end)
	}
	if step <= 0 {
		step = 1
	}
	end -= (end - start) % step
	out = make([]*series, len(list))
	for i, s := range list {
		c := *s
		c.values = s.consolidated(int(step / s.step))
		out[i] = &c
	}
	return out, start, end, step
}

// rows calls f with the i-th value of every series (null where a series is
// shorter), for i up to the longest series.
func rows(list []*series, f func(row []float64)) {
	n := 0
	for _, s := range list {
		n = max(n, len(s.values))
	}
	row := make([]float64, len(list))
	for i := 0; i < n; i++ {
		for j, s := range list {
			if i < len(s.values) {
				row[j] = s.values[i]
			} else {
				row[j] = nan
			}
		}
		f(row)
	}
}
