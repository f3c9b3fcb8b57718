package render

import (
	"sort"
	"strings"
)

// This file holds the Combine functions beyond the basic aggregates:
// aggregate and its named shortcuts, the *SeriesLists pairings, the
// *WithWildcards groupings, division and multiplication, and the grouping
// functions (groupByNodes, applyByNode, mapSeries/reduceSeries).

// xffArg returns the optional xFilesFactor argument, nil when absent.
func (a *args) xffArg() *float64 {
	if !a.has("xFilesFactor") {
		return nil
	}
	v := a.number("xFilesFactor", 0)
	return &v
}

func aggregateCall(ev *evaluator, a *args) ([]*series, error) {
	return ev.aggregateXFF(a.seriesList("seriesList"), a.str("func", ""), a.xffArg())
}

// aggregateLists pairs list1[i] with list2[i] and aggregates each pair,
// naming the result "<fn>Series(<name1>,<name2>)".
func (ev *evaluator) aggregateLists(l1, l2 []*series, fn string, xff *float64) ([]*series, error) {
	if len(l1) != len(l2) {
		return nil, inputErrorf("seriesListFirstPos and seriesListSecondPos argument must have equal length")
	}
	var out []*series
	for i := range l1 {
		res, err := ev.aggregateXFF([]*series{l1[i], l2[i]}, fn, xff)
		if err != nil {
			return nil, err
		}
		if len(res) == 0 {
			continue
		}
		r := res[0]
		r.name = r.name[:strings.Index(r.name, "Series(")] + "Series(" + l1[i].name + "," + l2[i].name + ")"
		out = append(out, r)
	}
	return out, nil
}

func aggregateSeriesLists(ev *evaluator, a *args) ([]*series, error) {
	return ev.aggregateLists(a.seriesList("seriesListFirstPos"), a.seriesList("seriesListSecondPos"), a.str("func", ""), a.xffArg())
}

func seriesListsFunc(fn string) func(*evaluator, *args) ([]*series, error) {
	return func(ev *evaluator, a *args) ([]*series, error) {
		return ev.aggregateLists(a.seriesList("seriesListFirstPos"), a.seriesList("seriesListSecondPos"), fn, nil)
	}
}

// withWildcards groups series by their name without the given node
// positions and aggregates each group, naming it by the remaining nodes.
func (ev *evaluator) withWildcards(list []*series, fn string, positions []value) ([]*series, error) {
	drop := map[int]bool{}
	for _, p := range positions {
		drop[int(p.num)] = true
	}
	keys, groups := groupBy(list, func(s *series) string {
		var kept []string
		for i, n := range strings.Split(s.name, ".") {
			if !drop[i] {
				kept = append(kept, n)
			}
		}
		return strings.Join(kept, ".")
	})
	var out []*series
	for _, k := range keys {
		res, err := ev.aggregate(groups[k], fn)
		if err != nil {
			return nil, err
		}
		if len(res) > 0 {
			res[0].name = k
			out = append(out, res[0])
		}
	}
	return out, nil
}

func withWildcardsFunc(fn string) func(*evaluator, *args) ([]*series, error) {
	return func(ev *evaluator, a *args) ([]*series, error) {
		return ev.withWildcards(a.seriesList("seriesList"), fn, a.multi)
	}
}

func aggregateWithWildcards(ev *evaluator, a *args) ([]*series, error) {
	return ev.withWildcards(a.seriesList("seriesList"), a.str("func", ""), a.multi)
}

func multiplySeries(ev *evaluator, a *args) ([]*series, error) {
	// graphite-web keeps a lone series as it is (legacy behaviour)
	if len(a.multi) == 1 && len(a.multi[0].list) == 1 {
		return a.multi[0].list, nil
	}
	return ev.aggregate(a.allSeries(), "multiply")
}

func safeDiv(x, y float64) float64 {
	if isNull(x) || isNull(y) || y == 0 {
		return nan
	}
	return x / y
}

// zipWith pairs a and b by index, padding the shorter with nulls.
func zipWith(a, b []float64, f func(x, y float64) float64) []float64 {
	out := make([]float64, max(len(a), len(b)))
	for i := range out {
		x, y := nan, nan
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		out[i] = f(x, y)
	}
	return out
}

// dividePair is one quotient of divideSeries and divideSeriesLists.
func (ev *evaluator) dividePair(x, y *series) *series {
	pair, start, end, step := normalize([]*series{x, y})
	s := newSeries("divideSeries("+x.name+","+y.name+")", start, end, step, zipWith(pair[0].values, pair[1].values, safeDiv))
	s.xff = ev.req.xff(nil)
	return s
}

func divideSeries(ev *evaluator, a *args) ([]*series, error) {
	list, divisor := a.seriesList("dividendSeriesList"), a.seriesList("divisorSeries")
	var out []*series
	if len(divisor) == 0 {
		for _, s := range list {
			out = append(out, derived(s, "divideSeries("+s.name+",MISSING)", "", "", nulls(len(s.values))))
		}
		return out, nil
	}
	if len(divisor) > 1 {
		return nil, inputErrorf("divideSeries second argument must reference exactly 1 series (got %d)", len(divisor))
	}
	for _, s := range list {
		out = append(out, ev.dividePair(s, divisor[0]))
	}
	return out, ev.req.charge(len(out) * len(divisor[0].values))
}

func divideSeriesLists(ev *evaluator, a *args) ([]*series, error) {
	l1, l2 := a.seriesList("dividendSeriesList"), a.seriesList("divisorSeriesList")
	if len(l1) != len(l2) {
		return nil, inputErrorf("dividendSeriesList and divisorSeriesList argument must have equal length")
	}
	var out []*series
	for i := range l1 {
		out = append(out, ev.dividePair(l1[i], l2[i]))
	}
	return out, nil
}

func nulls(n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = nan
	}
	return out
}

func safeMul(x, y float64) float64 {
	if isNull(x) || isNull(y) {
		return nan
	}
	return x * y
}

func weightedAverage(ev *evaluator, a *args) ([]*series, error) {
	avgs, weights := a.seriesList("seriesListAvg"), a.seriesList("seriesListWeight")
	if len(avgs) != len(weights) {
		return nil, inputErrorf("weightedAverage must receive the same number of series for seriesListAvg and seriesListWeight but received respectively %d and %d", len(avgs), len(weights))
	}
	type pair struct{ avg, weight *series }
	byKey := map[string]*pair{}
	var keys []string
	get := func(k string) *pair {
		p, ok := byKey[k]
		if !ok {
			p = &pair{}
			byKey[k] = p
			keys = append(keys, k)
		}
		return p
	}
	for i := range avgs {
		get(aggKey(avgs[i], a.multi)).avg = avgs[i]
		get(aggKey(weights[i], a.multi)).weight = weights[i]
	}
	// graphite-web walks a dict here; its order only shows in the
	// sumSeries name, which weightedAverage replaces.
	sort.Strings(keys)
	var products []*series
	for _, k := range keys {
		p := byKey[k]
		if p.avg == nil || p.weight == nil {
			continue
		}
		products = append(products, newSeries("product("+p.weight.name+","+p.avg.name+")",
			p.avg.start, p.avg.end, p.avg.step, zipWith(p.avg.values, p.weight.values, safeMul)))
	}
	if len(products) == 0 {
		return nil, nil
	}
	sumP, err := ev.aggregate(products, "sum")
	if err != nil {
		return nil, err
	}
	sumW, err := ev.aggregate(weights, "sum")
	if err != nil {
		return nil, err
	}
	exprs := func(l []*series) string {
		set := map[string]bool{}
		for _, s := range l {
			set[s.pathExpr] = true
		}
		return strings.Join(sortedKeys(set), ",")
	}
	nodes := make([]string, len(a.multi))
	for i, n := range a.multi {
		nodes[i] = n.pyStr()
	}
	name := "weightedAverage(" + exprs(avgs) + ", " + exprs(weights) + ", " + strings.Join(nodes, ",") + ")"
	p := sumP[0]
	return []*series{newSeries(name, p.start, p.end, p.step, zipWith(p.values, sumW[0].values, safeDiv))}, nil
}

func percentileOfSeries(ev *evaluator, a *args) ([]*series, error) {
	n := a.number("n", 0)
	if n <= 0 {
		return nil, inputErrorf("The requested percent is required to be greater than 0")
	}
	list := a.seriesList("seriesList")
	if len(list) == 0 {
		return nil, nil
	}
	interp := a.boolean("interpolate", false)
	name := "percentileOfSeries(" + list[0].pathExpr + "," + pyG(n) + ")"
	norm, start, end, step := normalize(list)
	var vals []float64
	rows(norm, func(row []float64) { vals = append(vals, percentile(row, n, interp)) })
	s := newSeries(name, start, end, step, vals)
	s.xff = ev.req.xff(nil)
	return []*series{s}, ev.req.charge(len(vals))
}

// percentile is graphite-web's _getPercentile over the non-null values.
func percentile(vs []float64, n float64, interpolate bool) float64 {
	p := nonNull(vs)
	if len(p) == 0 {
		return nan
	}
	sort.Float64s(p)
	frac := n / 100 * float64(len(p)+1)
	// past the ends Python would index out of range (a 500); clamp
	frac = min(max(frac, 0), float64(len(p)+1))
	rank := int(frac)
	rankFrac := frac - float64(rank)
	if !interpolate && rankFrac > 0 {
		rank++
	}
	var out float64
	switch {
	case rank == 0:
		out = p[0]
	case rank-1 == len(p):
		out = p[len(p)-1]
	case rank-1 > len(p):
		// Python indexing past the end raises; graphite-web answers 500.
		out = p[len(p)-1]
	default:
		out = p[rank-1]
	}
	if interpolate && rank != len(p) && rank < len(p) {
		out += rankFrac * (p[rank] - out)
	}
	return out
}

func countSeries(ev *evaluator, a *args) ([]*series, error) {
	list := a.allSeries()
	if len(list) == 0 {
		s := constantSeries(ev, value{kind: valNumber, num: 0, isInt: true})
		s.pathExpr = "countSeries()"
		return []*series{s}, ev.req.charge(len(s.values))
	}
	norm, start, end, step := normalize(list)
	name := "countSeries(" + formatPathExpressions(norm) + ")"
	var vals []float64
	rows(norm, func(row []float64) { vals = append(vals, float64(len(row))) })
	s := newSeries(name, start, end, step, vals)
	s.xff = ev.req.xff(nil)
	s.markInts(nil) // int(len(row))
	return []*series{s}, ev.req.charge(len(vals))
}

func group(ev *evaluator, a *args) ([]*series, error) { return a.allSeries(), nil }

// mapSeries splits a list into groups by nodes; the groups travel as one
// list with each series marking its group, for reduceSeries.
func mapSeries(ev *evaluator, a *args) ([]*series, error) {
	keys, groups := groupBy(a.seriesList("seriesList"), func(s *series) string { return aggKey(s, a.multi) })
	var out []*series
	for i, k := range keys {
		for _, s := range groups[k] {
			c := *s
			c.mapGroup = i + 1
			out = append(out, &c)
		}
	}
	return out, nil
}

func reduceSeries(ev *evaluator, a *args) ([]*series, error) {
	fnName := a.str("reduceFunction", "")
	fd, ok := functionIndex[fnName]
	if !ok {
		return nil, inputErrorf("reduceSeries: unknown reduce function %q", fnName)
	}
	node := int(a.number("reduceNode", 0))
	matchers := make([]string, len(a.multi))
	for i, m := range a.multi {
		matchers[i] = m.pyStr()
	}
	meta := map[string][]*series{}
	var keys []string
	for _, s := range a.seriesList("seriesLists") {
		nodes := strings.Split(s.name, ".")
		node := node
		if node < 0 {
			node += len(nodes)
		}
		if node < 0 || node >= len(nodes) {
			return nil, inputErrorf("reduceSeries: series %q has no node %d", s.name, node)
		}
		i := indexOf(matchers, nodes[node])
		if i < 0 {
			continue
		}
		key := strings.Join(nodes[:node], ".") + ".reduce." + fnName
		if _, ok := meta[key]; !ok {
			meta[key] = make([]*series, len(matchers))
			keys = append(keys, key)
		}
		meta[key][i] = s
	}
	var out []*series
	for _, k := range keys {
		var lists []value
		for _, s := range meta[k] {
			var l []*series
			if s != nil {
				l = []*series{s}
			}
			lists = append(lists, value{kind: valSeries, list: l})
		}
		fa := &args{fn: fd, vals: map[string]value{}}
		// bind positionally as Python's call f(ctx, *lists) does, whatever
		// the parameter's type (asPercent's second list is its total), the
		// rest into the multiple parameter
		pi := 0
		for _, v := range lists {
			if pi >= len(fd.params) {
				return nil, inputErrorf("reduceSeries: %s takes fewer series lists", fnName)
			}
			if fd.params[pi].Multiple {
				fa.multi = append(fa.multi, v)
				continue
			}
			fa.vals[fd.params[pi].Name] = v
			pi++
		}
		res, err := fd.impl(ev, fa)
		if err != nil {
			return nil, err
		}
		if len(res) == 0 {
			continue
		}
		r := *res[0]
		r.name = k
		out = append(out, &r)
	}
	return out, nil
}

func groupByNodes(ev *evaluator, a *args) ([]*series, error) {
	return ev.groupByKey(a.seriesList("seriesList"), a.str("callback", "average"), func(s *series) string {
		return aggKey(s, a.multi)
	})
}

// groupByKey groups list by key and reduces each group with callback, an
// aggregation or an aggregator series function; the key names the result.
func (ev *evaluator) groupByKey(list []*series, callback string, key func(*series) string) ([]*series, error) {
	keys, groups := groupBy(list, key)
	var out []*series
	for _, k := range keys {
		var res []*series
		var err error
		// graphite-web tries a series function of that name first: "sum"
		// and "avg" are sumSeries and averageSeries, "multiplySeries" keeps
		// a lone series as it is.
		if fd, ok := functionIndex[callback]; ok {
			res, err = fd.impl(ev, &args{fn: fd, vals: map[string]value{"seriesList": {kind: valSeries, list: groups[k]}},
				multi: []value{{kind: valSeries, list: groups[k]}}})
		} else {
			res, err = ev.aggregate(groups[k], callback)
		}
		if err != nil {
			return nil, err
		}
		if len(res) == 0 {
			continue
		}
		r := *res[0]
		r.name = k
		out = append(out, &r)
	}
	return out, nil
}

func applyByNode(ev *evaluator, a *args) ([]*series, error) {
	list := a.seriesList("seriesList")
	node := int(a.number("nodeNum", 0))
	tmpl := a.str("templateFunction", "")
	newName := a.str("newName", "")
	set := map[string]bool{}
	for _, s := range list {
		nodes := strings.Split(s.name, ".")
		set[strings.Join(nodes[:min(max(node+1, 0), len(nodes))], ".")] = true
	}
	if len(list) == 0 {
		return nil, nil
	}
	last := list[len(list)-1]
	var out []*series
	for _, prefix := range sortedKeys(set) {
		target := strings.ReplaceAll(tmpl, "%", prefix)
		e, err := Parse(target, ev.req.opts.MaxDepth)
		if err != nil {
			return nil, inputErrorf("applyByNode: template gives %q: %v", target, err)
		}
		res, err := ev.evalTarget(e)
		if err != nil {
			return nil, err
		}
		for _, r := range res {
			c := *r
			if newName != "" {
				c.name = strings.ReplaceAll(newName, "%", prefix)
			}
			c.pathExpr = prefix
			c.start, c.end = last.start, last.end
			out = append(out, &c)
		}
	}
	return out, nil
}

func powSeries(ev *evaluator, a *args) ([]*series, error) {
	list := a.allSeries()
	if len(list) == 0 {
		return nil, nil
	}
	norm, start, end, step := normalize(list)
	names := make([]string, len(norm))
	for i, s := range norm {
		names[i] = s.name
	}
	var vals []float64
	rows(norm, func(row []float64) {
		v := row[0]
		for _, x := range row[1:] {
			v = safePow(v, x)
		}
		vals = append(vals, v)
	})
	s := newSeries("powSeries("+strings.Join(names, ",")+")", start, end, step, vals)
	s.xff = ev.req.xff(nil)
	return []*series{s}, ev.req.charge(len(vals))
}
