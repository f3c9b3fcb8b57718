package render

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// This file holds the Filter Series, Filter Data and Sorting functions:
// which series to keep, which values to blank, in which order.

// operators are filterSeries' comparisons; a null value passes !=, < and
// <= and fails the others, as graphite-web's operatorFuncs do.
var operators = map[string]func(v, t float64) bool{
	"=":  func(v, t float64) bool { return !isNull(v) && v == t },
	"!=": func(v, t float64) bool { return isNull(v) || v != t },
	">":  func(v, t float64) bool { return !isNull(v) && v > t },
	">=": func(v, t float64) bool { return !isNull(v) && v >= t },
	"<":  func(v, t float64) bool { return isNull(v) || v < t },
	"<=": func(v, t float64) bool { return isNull(v) || v <= t },
}

func filterBy(list []*series, fn, op string, threshold float64) ([]*series, error) {
	agg, _, ok := lookupAgg(fn)
	if !ok {
		return nil, inputErrorf("Unsupported aggregation function: %s", fn)
	}
	cmp, ok := operators[op]
	if !ok {
		return nil, inputErrorf("Unsupported operator: %s", op)
	}
	var out []*series
	for _, s := range list {
		if cmp(agg(s.values), threshold) {
			out = append(out, s)
		}
	}
	return out, nil
}

func filterSeries(ev *evaluator, a *args) ([]*series, error) {
	return filterBy(a.seriesList("seriesList"), a.str("func", ""), a.str("operator", ""), a.number("threshold", 0))
}

func filterFunc(fn, op string) func(*evaluator, *args) ([]*series, error) {
	return func(ev *evaluator, a *args) ([]*series, error) {
		return filterBy(a.seriesList("seriesList"), fn, op, a.number("n", 0))
	}
}

func highestLowest(desc bool, fixedFn string) func(*evaluator, *args) ([]*series, error) {
	return func(ev *evaluator, a *args) ([]*series, error) {
		fn := fixedFn
		if fn == "" {
			fn = a.str("func", "average")
		}
		agg, _, _ := lookupAgg(fn)
		return pyHead(sortSeries(a.seriesList("seriesList"), agg, desc), int(a.number("n", 1))), nil
	}
}

func sortBy(ev *evaluator, a *args) ([]*series, error) {
	agg, _, _ := lookupAgg(a.str("func", "average"))
	return sortSeries(a.seriesList("seriesList"), agg, a.boolean("reverse", false)), nil
}

func sortByTotal(ev *evaluator, a *args) ([]*series, error) {
	return sortSeries(a.seriesList("seriesList"), aggSum, true), nil
}

func sortByMinima(ev *evaluator, a *args) ([]*series, error) {
	var kept []*series
	for _, s := range a.seriesList("seriesList") {
		if m := aggMax(s.values); !isNull(m) && m > 0 {
			kept = append(kept, s)
		}
	}
	return sortSeries(kept, aggMin, false), nil
}

var digitRun = regexp.MustCompile(`\d+`)

// natKey pads every run of digits to ten places, graphite-web's natural
// sort key.
func natKey(name string) string {
	return digitRun.ReplaceAllStringFunc(name, func(d string) string {
		n, err := strconv.ParseUint(d, 10, 64)
		if err != nil {
			return d
		}
		return fmt.Sprintf("%010d", n)
	})
}

func sortByName(ev *evaluator, a *args) ([]*series, error) {
	out := append([]*series(nil), a.seriesList("seriesList")...)
	key := func(s *series) string { return s.name }
	if a.boolean("natural", false) {
		key = func(s *series) string { return natKey(s.name) }
	}
	rev := a.boolean("reverse", false)
	sort.SliceStable(out, func(i, j int) bool {
		if rev {
			return key(out[i]) > key(out[j])
		}
		return key(out[i]) < key(out[j])
	})
	return out, nil
}

func mostDeviant(ev *evaluator, a *args) ([]*series, error) {
	type dev struct {
		sigma float64
		s     *series
	}
	var devs []dev
	for _, s := range a.seriesList("seriesList") {
		mean := aggAverage(s.values)
		if isNull(mean) {
			continue
		}
		sq := 0.0
		for _, v := range s.values {
			if !isNull(v) {
				sq += (v - mean) * (v - mean)
			}
		}
		devs = append(devs, dev{sq / float64(countNonNull(s.values)), s})
	}
	sort.SliceStable(devs, func(i, j int) bool { return devs[i].sigma > devs[j].sigma })
	n := int(a.number("n", 0))
	var out []*series
	for i := 0; i < len(devs) && i < n; i++ {
		out = append(out, devs[i].s)
	}
	return out, nil
}

// blank returns a renamed copy of every series with the values for which
// drop is true set to null.
func blank(list []*series, name func(*series) string, drop func(s *series) func(float64) bool) []*series {
	var out []*series
	for _, s := range list {
		d := drop(s)
		vals := make([]float64, len(s.values))
		for i, v := range s.values {
			if d == nil || !d(v) {
				vals[i] = v
			} else {
				vals[i] = nan
			}
		}
		out = append(out, derived(s, name(s), "", "", vals))
	}
	return out
}

func removeValue(fn string, above bool) func(*evaluator, *args) ([]*series, error) {
	return func(ev *evaluator, a *args) ([]*series, error) {
		n := a.number("n", 0)
		return blank(a.seriesList("seriesList"),
			func(s *series) string { return fn + "(" + s.name + ", " + pyG(n) + ")" },
			func(*series) func(float64) bool {
				if above {
					return func(v float64) bool { return !isNull(v) && v > n }
				}
				return func(v float64) bool { return isNull(v) || v < n }
			}), nil
	}
}

func removePercentile(fn string, above bool) func(*evaluator, *args) ([]*series, error) {
	return func(ev *evaluator, a *args) ([]*series, error) {
		n := a.number("n", 0)
		if n == 0 {
			return nil, inputErrorf("The requested percent is required to be greater than 0")
		}
		// graphite-web computes the percentile with nPercentile, whose copy
		// shares the tag dictionary: the series gains an nPercentile tag
		var list []*series
		for _, s := range a.seriesList("seriesList") {
			c := *s
			if countNonNull(s.values) > 0 {
				c.tags = s.tags.with("nPercentile", a.vals["n"].pyStr())
			}
			list = append(list, &c)
		}
		return blank(list,
			func(s *series) string { return fn + "(" + s.name + ", " + pyG(n) + ")" },
			func(s *series) func(float64) bool {
				if countNonNull(s.values) == 0 || s.end-s.start < s.step {
					return nil // nPercentile gave nothing: the series stays
				}
				p := percentile(s.values, n, false)
				if above {
					return func(v float64) bool { return !isNull(v) && v > p }
				}
				return func(v float64) bool { return isNull(v) || v < p }
			}), nil
	}
}

func removeEmptySeries(ev *evaluator, a *args) ([]*series, error) {
	x := a.number("xFilesFactor", 0)
	var out []*series
	for _, s := range a.seriesList("seriesList") {
		n := countNonNull(s.values)
		if n > 0 && float64(n)/float64(len(s.values)) >= x {
			out = append(out, s)
		}
	}
	return out, nil
}

func averageOutsidePercentile(ev *evaluator, a *args) ([]*series, error) {
	list := a.seriesList("seriesList")
	n := a.number("n", 0)
	avgs := make([]float64, len(list))
	for i, s := range list {
		avgs[i] = aggAverage(s.values)
	}
	if n < 50 {
		n = 100 - n
	}
	lo, hi := percentile(avgs, 100-n, false), percentile(avgs, n, false)
	var out []*series
	for i, s := range list {
		if !pyLess(lo, avgs[i]) || !pyLess(avgs[i], hi) {
			out = append(out, s)
		}
	}
	return out, nil
}

// pyLess is Python 3's a < b where None compares only by raising; the
// callers reach it only with numbers, and a null here means "not less".
func pyLess(a, b float64) bool { return !isNull(a) && !isNull(b) && a < b }

func removeBetweenPercentile(ev *evaluator, a *args) ([]*series, error) {
	list := a.seriesList("seriesList")
	n := a.number("n", 0)
	if n < 50 {
		n = 100 - n
	}
	if len(list) == 0 {
		return nil, nil
	}
	cols := len(list[0].values)
	for _, s := range list {
		cols = min(cols, len(s.values)) // zip stops at the shortest
	}
	lo, hi := make([]float64, cols), make([]float64, cols)
	col := make([]float64, len(list))
	for i := 0; i < cols; i++ {
		for j, s := range list {
			col[j] = s.values[i]
		}
		lo[i], hi[i] = percentile(col, 100-n, false), percentile(col, n, false)
	}
	var out []*series
	for _, s := range list {
		for i, v := range s.values {
			if i >= cols {
				break // graphite-web would raise IndexError here
			}
			if !(pyLess(lo[i], v) && pyLess(v, hi[i])) {
				out = append(out, s)
				break
			}
		}
	}
	return out, nil
}

// compileUserRegexp compiles a user's pattern with the length bound.
func compileUserRegexp(fn, pattern string) (*regexp.Regexp, error) {
	if len(pattern) > maxRegexpLen {
		return nil, inputErrorf("%s: pattern longer than %d bytes", fn, maxRegexpLen)
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, inputErrorf("%s: invalid regular expression %q: %v", fn, pattern, err)
	}
	return re, nil
}

func grepOrExclude(keep bool) func(*evaluator, *args) ([]*series, error) {
	return func(ev *evaluator, a *args) ([]*series, error) {
		re, err := compileUserRegexp(a.fn.name, a.str("pattern", ""))
		if err != nil {
			return nil, err
		}
		var out []*series
		for _, s := range a.seriesList("seriesList") {
			if re.MatchString(s.name) == keep {
				out = append(out, s)
			}
		}
		return out, nil
	}
}

func unique(ev *evaluator, a *args) ([]*series, error) {
	seen := map[string]bool{}
	var out []*series
	for _, s := range a.allSeries() {
		if !seen[s.name] {
			seen[s.name] = true
			out = append(out, s)
		}
	}
	return out, nil
}

func fallbackSeries(ev *evaluator, a *args) ([]*series, error) {
	if l := a.seriesList("seriesList"); len(l) > 0 {
		return l, nil
	}
	return a.seriesList("fallback"), nil
}

func useSeriesAbove(ev *evaluator, a *args) ([]*series, error) {
	re, err := compileUserRegexp("useSeriesAbove", a.str("search", ""))
	if err != nil {
		return nil, err
	}
	repl := pyReplacement(a.str("replace", ""))
	v := a.number("value", 0)
	var names []string
	for _, s := range a.seriesList("seriesList") {
		if m := aggMax(s.values); !isNull(m) && m > v {
			names = append(names, re.ReplaceAllString(s.name, repl))
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	e, err := Parse("group("+strings.Join(names, ",")+")", ev.req.opts.MaxDepth)
	if err != nil {
		return nil, inputErrorf("useSeriesAbove: replaced names do not parse: %v", err)
	}
	list, err := ev.evalTarget(e)
	if err != nil {
		return nil, err
	}
	var out []*series
	for _, s := range list {
		if len(s.values) > 0 {
			out = append(out, s)
		}
	}
	return out, nil
}
