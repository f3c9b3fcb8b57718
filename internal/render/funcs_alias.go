package render

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// This file holds the Alias functions beyond alias/aliasByNode/aliasSub,
// the Graph functions (which only style a PNG in graphite-web; in JSON
// they rename, restack or pass series through) and the Special ones.

func aliasByMetric(ev *evaluator, a *args) ([]*series, error) {
	var out []*series
	for _, s := range a.seriesList("seriesList") {
		out = append(out, renamed(s, substrName(s.name, -1, 0)))
	}
	return out, nil
}

// substrName is graphite-web's substr on a name: take the text inside the
// innermost parentheses, keep nodes [start:stop] (stop 0: to the end) and
// cut at the first comma.
func substrName(name string, start, stop int) string {
	left := strings.LastIndexByte(name, '(') + 1
	right := strings.IndexByte(name, ')')
	if right < 0 {
		right = len(name) + 1
	}
	clean := pySlice(name, left, right)
	nodes := strings.Split(clean, ".")
	lo, hi := start, len(nodes)
	if stop != 0 {
		hi = stop
	}
	out := strings.Join(pySliceStrings(nodes, lo, hi), ".")
	if i := strings.IndexByte(out, ','); i >= 0 {
		out = out[:i]
	}
	return out
}

// pyBounds clamps Python slice bounds [lo:hi] for a sequence of length n.
func pyBounds(lo, hi, n int) (int, int) {
	fix := func(i int) int {
		if i < 0 {
			i += n
		}
		return min(max(i, 0), n)
	}
	lo, hi = fix(lo), fix(hi)
	if hi < lo {
		hi = lo
	}
	return lo, hi
}

func pySlice(s string, lo, hi int) string {
	lo, hi = pyBounds(lo, hi, len(s))
	return s[lo:hi]
}

func pySliceStrings(s []string, lo, hi int) []string {
	lo, hi = pyBounds(lo, hi, len(s))
	return s[lo:hi]
}

func substr(ev *evaluator, a *args) ([]*series, error) {
	start, stop := int(a.number("start", 0)), int(a.number("stop", 0))
	var out []*series
	for _, s := range a.seriesList("seriesList") {
		out = append(out, renamed(s, substrName(s.name, start, stop)))
	}
	return out, nil
}

func aliasByTags(ev *evaluator, a *args) ([]*series, error) { return aliasByNode(ev, a) }

func aliasQuery(ev *evaluator, a *args) ([]*series, error) {
	re, err := compileUserRegexp("aliasQuery", a.str("search", ""))
	if err != nil {
		return nil, err
	}
	repl := pyReplacement(a.str("replace", ""))
	newName := a.str("newName", "")
	var out []*series
	for _, s := range a.seriesList("seriesList") {
		q := re.ReplaceAllString(s.name, repl)
		e, err := Parse(q, ev.req.opts.MaxDepth)
		if err != nil {
			return nil, inputErrorf("aliasQuery: query %q: %v", q, err)
		}
		res, err := ev.evalTarget(e)
		if err != nil {
			return nil, err
		}
		if len(res) == 0 {
			return nil, inputErrorf("No series found with query: %s", q)
		}
		cur := aggLast(res[0].values)
		if isNull(cur) {
			return nil, inputErrorf("Cannot get last value of series: %s", res[0].name)
		}
		name, err := pyPercent(newName, cur)
		if err != nil {
			return nil, inputErrorf("aliasQuery: newName %q: %v", newName, err)
		}
		out = append(out, renamed(s, name))
	}
	return out, nil
}

// pyPercent applies Python's "%" operator with one float argument for
// the conversions newName may hold: %d %i %s %f %g %e %r and %%, with
// flags, width and precision.
func pyPercent(format string, v float64) (string, error) {
	var b strings.Builder
	used := false
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		j := i + 1
		for j < len(format) && strings.IndexByte("-+ #0123456789.", format[j]) >= 0 {
			j++
		}
		if j >= len(format) {
			return "", fmt.Errorf("incomplete format")
		}
		spec := format[i+1 : j]
		if len(spec) > 4 {
			return "", fmt.Errorf("format width or precision too large")
		}
		switch verb := format[j]; verb {
		case '%':
			b.WriteByte('%')
		case 'd', 'i':
			b.WriteString(fmt.Sprintf("%"+spec+"d", int64(v)))
			used = true
		case 's', 'r':
			b.WriteString(fmt.Sprintf("%"+spec+"s", pyRepr(v)))
			used = true
		case 'f', 'F', 'e', 'E', 'g', 'G':
			if !strings.Contains(spec, ".") && verb != 'g' && verb != 'G' {
				spec += ".6"
			}
			b.WriteString(fmt.Sprintf("%"+spec+string(verb), v))
			used = true
		default:
			return "", fmt.Errorf("unsupported format character %q", verb)
		}
		i = j
	}
	if !used {
		return "", fmt.Errorf("not all arguments converted during string formatting")
	}
	return b.String(), nil
}

// formatUnits is graphite-web's format_units with no step.
func formatUnits(v float64, system, units string) (float64, string) {
	systems := map[string][]struct {
		p string
		n float64
	}{
		"binary": {{"Pi", math.Pow(1024, 5)}, {"Ti", math.Pow(1024, 4)}, {"Gi", math.Pow(1024, 3)}, {"Mi", 1024 * 1024}, {"Ki", 1024}},
		"si":     {{"P", 1e15}, {"T", 1e12}, {"G", 1e9}, {"M", 1e6}, {"k", 1e3}},
	}
	for _, u := range systems[system] {
		if math.Abs(v) >= u.n {
			v2 := v / u.n
			if v2-math.Floor(v2) < 1e-11 && v > 1 {
				v2 = math.Floor(v2)
			}
			return v2, u.p + units
		}
	}
	if v-math.Floor(v) < 1e-11 && v > 1 {
		v = math.Floor(v)
	}
	return v, units
}

func legendValue(ev *evaluator, a *args) ([]*series, error) {
	types := make([]string, len(a.multi))
	for i, v := range a.multi {
		types[i] = v.pyStr()
	}
	system := ""
	if n := len(types); n > 0 && (types[n-1] == "si" || types[n-1] == "binary") {
		system, types = types[n-1], types[:n-1]
	}
	var out []*series
	for _, s := range a.seriesList("seriesList") {
		name := s.name
		for _, t := range types {
			agg, _, ok := lookupAgg(t)
			val := "(?)"
			var num float64
			if ok {
				num = agg(s.values)
				val = pyStrNum(num)
			}
			if system == "" {
				name += " (" + t + ": " + val + ")"
				continue
			}
			formatted := "None"
			switch {
			case !ok:
				formatted = val
			case !isNull(num):
				v, p := formatUnits(num, system, "")
				formatted = fmt.Sprintf("%.2f%s", v, p)
			}
			name = fmt.Sprintf("%-20s%-5s%-10s", name, t, formatted)
		}
		out = append(out, renamed(s, name))
	}
	return out, nil
}

func cactiStyle(ev *evaluator, a *args) ([]*series, error) {
	list := a.seriesList("seriesList")
	if len(list) == 0 {
		return list, nil
	}
	system, units := a.str("system", ""), a.str("units", "")
	f := func(x float64) string {
		switch {
		case system != "" && units != "":
			v, p := formatUnits(x, system, units)
			return fmt.Sprintf("%.2f %s", v, p)
		case system != "":
			v, p := formatUnits(x, system, "")
			return fmt.Sprintf("%.2f%s", v, p)
		case units != "":
			return fmt.Sprintf("%.2f %s", x, units)
		}
		return fmt.Sprintf("%.2f", x)
	}
	orThree := func(v float64) float64 {
		if isNull(v) || v == 0 {
			return 3
		}
		return math.Trunc(v)
	}
	nameLen, lastLen, maxLen, minLen := 0, 0, 0, 0
	for _, s := range list {
		nameLen = max(nameLen, len(s.name))
		lastLen = max(lastLen, len(f(orThree(aggLast(s.values))))+3)
		maxLen = max(maxLen, len(f(orThree(aggMax(s.values))))+3)
		minLen = max(minLen, len(f(orThree(aggMin(s.values))))+3)
	}
	cell := func(v float64) string {
		if isNull(v) {
			return "nan"
		}
		return f(v)
	}
	var out []*series
	for _, s := range list {
		name := fmt.Sprintf("%-*s Current:%-*s Max:%-*s Min:%-*s ", nameLen, s.name,
			lastLen, cell(aggLast(s.values)), maxLen, cell(aggMax(s.values)), minLen, cell(aggMin(s.values)))
		out = append(out, renamed(s, name))
	}
	return out, nil
}

func changeCase(upper bool) func(*evaluator, *args) ([]*series, error) {
	return func(ev *evaluator, a *args) ([]*series, error) {
		conv := strings.ToLower
		if upper {
			conv = strings.ToUpper
		}
		var out []*series
		for _, s := range a.seriesList("seriesList") {
			if len(a.multi) == 0 {
				out = append(out, renamed(s, conv(s.name)))
				continue
			}
			r := []rune(s.name)
			for _, p := range a.multi {
				i := int(p.num)
				if i < 0 {
					i += len(r)
				}
				if i >= 0 && i < len(r) {
					r[i] = []rune(conv(string(r[i])))[0]
				}
			}
			out = append(out, renamed(s, string(r)))
		}
		return out, nil
	}
}

// passThrough is a Graph function that only styles a PNG.
func passThrough(ev *evaluator, a *args) ([]*series, error) { return a.seriesList("seriesList"), nil }

// styleRename is a Graph function that renames and tags, like
// secondYAxis and drawAsInfinite.
func styleRename(fn string) func(*evaluator, *args) ([]*series, error) {
	return func(ev *evaluator, a *args) ([]*series, error) {
		var out []*series
		for _, s := range a.seriesList("seriesList") {
			c := renamed(s, fn+"("+s.name+")")
			c.tags = s.tags.with(fn, "1")
			out = append(out, c)
		}
		return out, nil
	}
}

func dashed(ev *evaluator, a *args) ([]*series, error) {
	l := a.number("dashLength", 5)
	tag := "5"
	if a.has("dashLength") {
		tag = a.vals["dashLength"].pyStr()
	}
	var out []*series
	for _, s := range a.seriesList("seriesList") {
		c := renamed(s, "dashed("+s.name+", "+pyG(l)+")")
		c.tags = s.tags.with("dashed", tag)
		out = append(out, c)
	}
	return out, nil
}

// stacked adds each series onto the running total of the ones before it
// in the same stack, across the request's targets as graphite-web does.
func stacked(ev *evaluator, a *args) ([]*series, error) {
	name := a.str("stack", "__DEFAULT__")
	if ev.req.stacks == nil {
		ev.req.stacks = map[string][]float64{}
	}
	total := ev.req.stacks[name]
	var out []*series
	for _, s := range a.seriesList("seriesList") {
		vals := make([]float64, len(s.values))
		for i, v := range s.values {
			if len(total) <= i {
				total = append(total, 0)
			}
			if isNull(v) {
				vals[i] = nan
				continue
			}
			total[i] += v
			vals[i] = total[i]
		}
		if name == "__DEFAULT__" {
			c := s.copyWith("stacked("+s.name+")", vals)
			c.tags = s.tags.with("stacked", name)
			out = append(out, c)
		} else {
			out = append(out, s.copyWith(s.name, vals))
		}
	}
	ev.req.stacks[name] = total
	return out, nil
}

func areaBetween(ev *evaluator, a *args) ([]*series, error) {
	list := a.seriesList("seriesList")
	if len(list) != 2 {
		return nil, inputErrorf("areaBetween series argument must reference *exactly* 2 series")
	}
	upper := list[1]
	tags := upper.tags.with("areaBetween", "1")
	name := "areaBetween(" + upper.pathExpr + ")"
	lo, up := renamed(list[0], name), renamed(upper, name)
	lo.tags, up.tags = tags, tags
	return []*series{lo, up}, nil
}

func threshold(ev *evaluator, a *args) ([]*series, error) {
	s := constantSeries(ev, a.vals["value"])
	if l := a.str("label", ""); l != "" {
		s.name = l
	}
	return []*series{s}, ev.req.charge(len(s.values))
}

func aggregateLine(ev *evaluator, a *args) ([]*series, error) {
	agg, _, _ := lookupAgg(a.str("func", "average"))
	var out []*series
	for _, s := range a.seriesList("seriesList") {
		v := agg(s.values)
		name := "aggregateLine(" + s.name + ", None)"
		if !isNull(v) {
			name = "aggregateLine(" + s.name + ", " + pyG(v) + ")"
		}
		if a.boolean("keepStep", false) {
			vals := make([]float64, len(s.values))
			for i := range vals {
				vals[i] = v
			}
			out = append(out, s.copyWith(name, vals))
			continue
		}
		cv := value{kind: valNumber, num: v}
		if isNull(v) {
			cv = value{kind: valNone, num: nan} // constantLine(None): its tag name is "None"
		}
		c := constantSeries(ev, cv)
		c.name, c.pathExpr = name, name
		out = append(out, c)
	}
	return out, nil
}

func identity(ev *evaluator, a *args) ([]*series, error) {
	name := a.str("name", "")
	out, err := ev.wave(name, 60, func(t int64) float64 { return float64(t) })
	if err != nil {
		return nil, err
	}
	out[0].pathExpr = `identity("` + name + `")`
	out[0].markInts(nil) // list(range(start, end, step))
	return out, nil
}

func timeFunction(ev *evaluator, a *args) ([]*series, error) {
	return ev.wave(a.str("name", ""), int64(a.number("step", 60)), func(t int64) float64 { return float64(t) })
}

func compressPeriodicGaps(ev *evaluator, a *args) ([]*series, error) {
	var out []*series
	for _, s := range a.seriesList("seriesList") {
		c := renamed(s, "compressPeriodicGaps("+s.name+")")
		c.pathExpr = c.name
		out = append(out, compressGaps(c))
	}
	return out, nil
}

// compressGaps is graphite-web's _compressPeriodicGaps: when values come
// every k-th step with nulls between, resummarize at k steps with "last".
// Truthiness is Python's: a zero value counts as missing here.
func compressGaps(s *series) *series {
	first, second := 0, 0
	for i, v := range s.values {
		if !isNull(v) && v != 0 {
			if first > 0 {
				second = i
				break
			}
			first = i
		}
	}
	guess := second - first
	third := second + guess
	truthy := func(i int) bool { return !isNull(s.values[i]) && s.values[i] != 0 }
	if guess <= 1 || third > len(s.values)-2 || !truthy(third) || !isNull(s.values[third-1]) || !isNull(s.values[third+1]) {
		return s
	}
	interval := int64(guess) * s.step
	newStart := s.start + int64(first)*s.step
	vals, _ := summarizeValues(s, aggLast, interval, newStart, s.end)
	c := *s
	c.values, c.start, c.step = vals, newStart, interval
	c.end = newStart + interval*int64(len(vals)-1)
	return &c
}

func events(ev *evaluator, a *args) ([]*series, error) {
	return nil, inputErrorf("events is not available: pgts keeps no events store")
}

// wave builds the series of time/sin/randomWalk: one value every step
// seconds from the start of the range while before its end.
func (ev *evaluator) wave(name string, step int64, f func(t int64) float64) ([]*series, error) {
	if step <= 0 {
		return nil, inputErrorf("step must be positive")
	}
	if (ev.until-ev.from)/step > int64(ev.req.opts.MaxPoints) {
		return nil, inputErrorf("more than %d points; raise the step", ev.req.opts.MaxPoints)
	}
	var vals []float64
	for t := ev.from; t < ev.until; t += step {
		vals = append(vals, f(t))
	}
	s := newSeries(name, ev.from, ev.until, step, vals)
	s.xff = ev.req.xff(nil)
	return []*series{s}, ev.req.charge(len(vals))
}

func sinFunction(ev *evaluator, a *args) ([]*series, error) {
	amp := a.number("amplitude", 1)
	return ev.wave(a.str("name", ""), int64(a.number("step", 60)), func(t int64) float64 {
		return sinRounded(float64(t)) * amp
	})
}

func randomWalk(ev *evaluator, a *args) ([]*series, error) {
	cur := 0.0
	out, err := ev.wave(a.str("name", ""), int64(a.number("step", 60)), func(int64) float64 {
		v := cur
		cur += rand.Float64() - 0.5
		return v
	})
	if err == nil && len(out) > 0 && len(out[0].values) > 0 {
		bits := make([]bool, len(out[0].values))
		bits[0] = true // x(0) is the Python int 0
		out[0].markInts(bits)
	}
	return out, err
}

func verticalLine(ev *evaluator, a *args) ([]*series, error) {
	spec := a.vals["ts"].pyStr()
	t, err := ParseTime(spec, ev.req.now, ev.req.location())
	if err != nil {
		return nil, inputErrorf("verticalLine: invalid ts %q: %v", spec, err)
	}
	ts := t.Unix()
	if ts < ev.from {
		return nil, inputErrorf("verticalLine(): timestamp %d exists before start of range", ts)
	}
	if ts > ev.until {
		return nil, inputErrorf("verticalLine(): timestamp %d exists after end of range", ts)
	}
	name := a.str("label", "")
	s := newSeries(name, ts, ts, 1, []float64{1, 1})
	s.xff = ev.req.xff(nil)
	return []*series{s}, nil
}
