package render

import (
	"sort"
	"strings"
)

// formatPathExpressions joins the distinct path expressions of list with
// commas, in first-seen order: the inside of "sumSeries(a.*,b.c)".
func formatPathExpressions(list []*series) string {
	var seen []string
	for _, s := range list {
		if indexOf(seen, s.pathExpr) < 0 {
			seen = append(seen, s.pathExpr)
		}
	}
	return strings.Join(seen, ",")
}

// aggregate combines list into one series with the named aggregation, the
// way Graphite's aggregate() does: normalize to a common step, reduce each
// row of values (null when the row's non-null share is zero or below the
// xFilesFactor), keep the tags all inputs share, name it
// "<fn>Series(<path expressions>)". An empty list gives no series.
func (ev *evaluator) aggregate(list []*series, fn string) ([]*series, error) {
	return ev.aggregateXFF(list, fn, nil)
}

// aggregateXFF is aggregate with an explicit xFilesFactor (nil: the
// request's, from setXFilesFactor, else 0).
func (ev *evaluator) aggregateXFF(list []*series, fn string, xffArg *float64) ([]*series, error) {
	agg, fn, ok := lookupAgg(fn)
	if !ok {
		return nil, inputErrorf("Unsupported aggregation function: %s", fn)
	}
	if len(list) == 0 {
		return nil, nil
	}
	xff := ev.req.xff(xffArg)
	norm, start, end, step := normalize(list)
	name := fn + "Series(" + formatPathExpressions(norm) + ")"
	var values []float64
	rows(norm, func(row []float64) {
		n := countNonNull(row)
		if n == 0 || float64(n)/float64(len(row)) < xff {
			values = append(values, nan)
			return
		}
		values = append(values, agg(row))
	})
	if err := ev.req.charge(len(values)); err != nil {
		return nil, err
	}
	tags := tagSet{}
	for _, t := range norm[0].tags {
		shared := true
		for _, s := range norm[1:] {
			if v, ok := s.tags.get(t.k); !ok || v != t.v {
				shared = false
				break
			}
		}
		if shared {
			tags = append(tags, t)
		}
	}
	if _, ok := tags.get("name"); !ok {
		tags = tags.with("name", name)
	}
	tags = tags.with("aggregatedBy", fn)
	out := &series{name: name, pathExpr: name, tags: tags, start: start, end: end, step: step, values: values, xff: xff}
	if bits := aggregateInts(norm, values, fn); bits != nil {
		out.markInts(bits)
	}
	return []*series{out}, nil
}

// aggregateInts marks the aggregated values graphite-web computes as
// Python ints: count (safeLen) always; sum and diff when every value of
// the row is an int; min, max and last when the value they pick is (the
// first of equal ones for min and max). nil when there is none.
func aggregateInts(norm []*series, values []float64, fn string) []bool {
	switch fn {
	case "count":
	case "sum", "total", "diff", "min", "max", "last", "current":
		has := false
		for _, s := range norm {
			has = has || s.ints != nil
		}
		if !has {
			return nil
		}
	default:
		return nil
	}
	var bits []bool
	for i, v := range values {
		if isNull(v) {
			continue
		}
		isInt := true
		if fn != "count" {
			pick, allInt := -1, true
			for j, s := range norm {
				if i >= len(s.values) || isNull(s.values[i]) {
					continue
				}
				x := s.values[i]
				allInt = allInt && s.intAt(i)
				if pick < 0 || fn == "last" || fn == "current" ||
					fn == "max" && x > norm[pick].values[i] || fn == "min" && x < norm[pick].values[i] {
					pick = j
				}
			}
			switch fn {
			case "sum", "total", "diff":
				isInt = allInt
			default:
				isInt = pick >= 0 && norm[pick].intAt(i)
			}
		}
		if isInt {
			if bits == nil {
				bits = make([]bool, len(values))
			}
			bits[i] = true
		}
	}
	return bits
}

func aggregateFunc(fn string) func(*evaluator, *args) ([]*series, error) {
	return func(ev *evaluator, a *args) ([]*series, error) {
		return ev.aggregate(a.allSeries(), fn)
	}
}

// firstPathExpression digs the first glob out of a function-wrapped name:
// "scale(a.b.c,2)" gives "a.b.c". Names that do not parse give "".
func firstPathExpression(name string) string {
	e, err := Parse(name, 64)
	if err != nil {
		return ""
	}
	for e != nil {
		switch {
		case e.Kind == ExprPath:
			return e.Str
		case e.Kind == ExprCall && len(e.Args) > 0:
			e = e.Args[0]
		default:
			return ""
		}
	}
	return ""
}

// nodeOrTag returns node n of the series' path (negative counts from the
// end) or, for a string or a node out of range, the tag of that name.
func nodeOrTag(s *series, n value, pathExpr string) string {
	if n.kind == valNumber {
		path := pathExpr
		if path == "" {
			path = s.name
		}
		path, _, _ = strings.Cut(path, ";")
		nodes := strings.Split(path, ".")
		i := int(n.num)
		if i < 0 {
			i += len(nodes)
		}
		if i >= 0 && i < len(nodes) {
			return nodes[i]
		}
	}
	v, _ := s.tags.get(n.pyStr())
	return v
}

// aggKey joins the chosen nodes of a series' path with dots; for a name
// that is a function call it uses the first path inside it.
func aggKey(s *series, nodes []value) string {
	pathExpr := ""
	if strings.HasSuffix(s.name, ")") {
		pathExpr = firstPathExpression(s.name)
	}
	parts := make([]string, len(nodes))
	for i, n := range nodes {
		parts[i] = nodeOrTag(s, n, pathExpr)
	}
	return strings.Join(parts, ".")
}

// groupBy splits list by key, keeping first-seen key order.
func groupBy(list []*series, key func(*series) string) (keys []string, groups map[string][]*series) {
	groups = map[string][]*series{}
	for _, s := range list {
		k := key(s)
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], s)
	}
	return keys, groups
}

func groupByNode(ev *evaluator, a *args) ([]*series, error) {
	node := a.vals["nodeNum"]
	return ev.groupByKey(a.seriesList("seriesList"), a.str("callback", "average"), func(s *series) string {
		return aggKey(s, []value{node})
	})
}

// safeDivPct is Graphite's safeMul(safeDiv(a, b), 100): null when a is
// null or b is null or zero.
func safeDivPct(a, b float64) float64 {
	if isNull(a) || isNull(b) || b == 0 {
		return nan
	}
	return a / b * 100
}

// sumRows is the row-wise safe sum of list (null where a row is all null).
func sumRows(list []*series) []float64 {
	var out []float64
	rows(list, func(row []float64) { out = append(out, aggSum(row)) })
	return out
}

// zipPct pairs a and b by index, padding the shorter with nulls.
func zipPct(a, b []float64) []float64 {
	out := make([]float64, max(len(a), len(b)))
	for i := range out {
		x, y := nan, nan
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		out[i] = safeDivPct(x, y)
	}
	return out
}

func newSeries(name string, start, end, step int64, values []float64) *series {
	return &series{name: name, pathExpr: name, tags: tagSet{{"name", name}}, start: start, end: end, step: step, values: values}
}

// asPercent follows graphite-web 1.1.10, whose normalize only marks each
// series with the points it merges (valuesPerPoint), a mark the next
// normalize of that series replaces and a new series does not inherit:
//   - one series per total (a single series with a single total
//     included): each pair normalized on its own, the result at the
//     pair's step, from the earlier start;
//   - one total for several series: the series normalized together with
//     the total, each result keeping its own start and step (graphite-web
//     labels the merged values with the finer step);
//   - a number: the series normalized together, compared with as many
//     copies of the number as the first series has raw values;
//   - nodes: groups and totals summed and paired from the series as
//     fetched, not as normalized with the whole list.
func asPercent(ev *evaluator, a *args) ([]*series, error) {
	orig := a.seriesList("seriesList")
	if len(orig) == 0 {
		return nil, nil
	}
	list, _, _, _ := normalize(orig)
	total, hasTotal := a.vals["total"]
	if hasTotal && total.kind == valNone {
		hasTotal = false
	}
	var out []*series
	emit := func(s *series) error {
		if err := ev.req.charge(len(s.values)); err != nil {
			return err
		}
		out = append(out, s)
		return nil
	}
	if len(a.multi) > 0 {
		if err := asPercentByNodes(orig, list, total, hasTotal, a.multi, emit); err != nil {
			return nil, err
		}
		return out, nil
	}
	var totalValues []float64
	var totalText string
	switch {
	case !hasTotal:
		totalValues = sumRows(list)
		totalText = "sumSeries(" + formatPathExpressions(list) + ")"
	case total.kind == valSeries:
		if len(total.list) != 1 && len(total.list) != len(list) {
			return nil, inputErrorf("asPercent second argument must be missing, a single digit, reference exactly 1 series or reference the same number of series as the first argument")
		}
		if len(total.list) == 1 && len(list) > 1 {
			norm, _, _, _ := normalize(append(append([]*series(nil), list...), total.list...))
			list = norm[:len(list)]
			totalValues = norm[len(list)].values
			totalText = total.list[0].name
		} else {
			s1 := append([]*series(nil), orig...)
			s2 := append([]*series(nil), total.list...)
			byName := func(l []*series) {
				sort.SliceStable(l, func(i, j int) bool { return l[i].name < l[j].name })
			}
			byName(s1)
			byName(s2)
			for i := range s1 {
				pair, start, end, step := normalize([]*series{s1[i], s2[i]})
				name := "asPercent(" + s1[i].name + "," + s2[i].name + ")"
				if err := emit(newSeries(name, start, end, step, zipPct(pair[0].values, pair[1].values))); err != nil {
					return nil, err
				}
			}
			return out, nil
		}
	case total.kind == valNumber:
		totalValues = make([]float64, len(orig[0].values))
		for i := range totalValues {
			totalValues[i] = total.num
		}
		totalText = total.pyStr()
	default:
		return nil, inputErrorf("asPercent: total must be a series list or a number")
	}
	for i, s := range list {
		name := "asPercent(" + s.name + "," + totalText + ")"
		o := orig[i]
		if err := emit(newSeries(name, o.start, o.end, o.step, zipPct(s.values, totalValues))); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// asPercentByNodes is asPercent with nodes: series and totals are grouped
// by the nodes' key and each series is divided by its group's total. orig
// are the series as fetched, norm the same normalized together: a series
// without a total has as many nulls as its normalized values.
func asPercentByNodes(orig, norm []*series, total value, hasTotal bool, nodes []value, emit func(*series) error) error {
	key := func(s *series) string { return aggKey(s, nodes) }
	keys, meta := groupBy(orig, key)
	normOf := make(map[*series]*series, len(orig))
	for i, s := range orig {
		normOf[s] = norm[i]
	}
	totals := map[string]*series{}
	sumGroup := func(g []*series) *series {
		if len(g) == 1 {
			return g[0]
		}
		norm, start, end, step := normalize(g)
		return newSeries("sumSeries("+formatPathExpressions(g)+")", start, end, step, sumRows(norm))
	}
	switch {
	case !hasTotal:
		for _, k := range keys {
			totals[k] = sumGroup(meta[k])
		}
	case total.kind == valSeries:
		tkeys, tgroups := groupBy(total.list, key)
		for _, k := range tkeys {
			if _, ok := meta[k]; !ok {
				keys = append(keys, k)
			}
			totals[k] = sumGroup(tgroups[k])
		}
	default:
		return inputErrorf("asPercent: total must be None or a seriesList when nodes are given")
	}
	for _, k := range keys {
		group, ok := meta[k]
		if !ok {
			t := totals[k]
			vals := make([]float64, len(t.values))
			for i := range vals {
				vals[i] = nan
			}
			if err := emit(newSeries("asPercent(MISSING,"+t.name+")", t.start, t.end, t.step, vals)); err != nil {
				return err
			}
			continue
		}
		for _, s := range group {
			t, ok := totals[k]
			if !ok {
				s := normOf[s]
				vals := make([]float64, len(s.values))
				for i := range vals {
					vals[i] = nan
				}
				if err := emit(newSeries("asPercent("+s.name+",MISSING)", s.start, s.end, s.step, vals)); err != nil {
					return err
				}
				continue
			}
			pair, start, end, step := normalize([]*series{s, t})
			name := "asPercent(" + s.name + "," + t.name + ")"
			if err := emit(newSeries(name, start, end, step, zipPct(pair[0].values, pair[1].values))); err != nil {
				return err
			}
		}
	}
	return nil
}
