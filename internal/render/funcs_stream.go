package render

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// Streaming aggregation: sumSeries(a.*) over 10,000 series of 10,080
// one-minute slots would hold 100 million values if every series were
// fetched before the sum; folded a part at a time it holds one part and
// the result. Over a WindowSource (the store) a part is a cut of slots of
// every series (foldWindows: each storage segment read once per cut);
// otherwise a batch of series (foldBatches), as drawn here:
//
//	names (sorted) ─> batch 1 ─> Fetch ─> fold into acc ─┐
//	                  batch 2 ─> Fetch ─> fold into acc ─┤  acc: per slot the
//	                  …                                  │  running sum (or min,
//	                                                     │  max) and count of
//	                  acc ─> xFilesFactor ─> one series <┘  non-null values
//
// The series are folded in the order graphite-web adds them (each path
// expression's series sorted by name, the expressions in argument order),
// so sums and averages are the same floats as aggregate()'s. The fold
// applies only while every series read has the same start, step and
// length, which is what one store returns for one range; otherwise the
// call is evaluated again the ordinary way (normalize() consolidates
// series of different steps, which needs each series whole).

// streamAggregates are the functions folded while reading, by canonical
// name, with the aggregation each applies.
var streamAggregates = map[string]string{
	"sumSeries":     "sum",
	"averageSeries": "average",
	"minSeries":     "min",
	"maxSeries":     "max",
	"countSeries":   "count",
}

// streamBatchPoints bounds the values one batch of a streaming aggregate
// reads at once (8 bytes each), below the request's own limit.
const streamBatchPoints = 4_000_000

// foldAcc is the running state of a streaming aggregate. Not safe for
// concurrent use.
type foldAcc struct {
	fn             string
	start, step, n int64
	acc            []float64 // running sum, min or max per slot
	cnt            []int32   // non-null values per slot
	total          int       // series folded
	tags           tagSet    // tags every series folded so far shares
	exprs          []string  // path expressions that gave series, first-seen order
}

// add folds s, whose values are those at indexes [off, off+len) of a
// series of total values; false when its geometry differs from the series
// before. A series counts (xFilesFactor, tags, name) when its cut at 0 is
// folded: the caller folds each series' cut at 0 first.
func (f *foldAcc) add(s *series, off, total int64) bool {
	if f.total == 0 && off == 0 {
		f.start, f.step, f.n = s.start, s.step, total
		f.cnt = make([]int32, total)
		if f.fn != "count" {
			f.acc = make([]float64, total)
			if f.fn == "min" || f.fn == "max" {
				for i := range f.acc {
					f.acc[i] = nan
				}
			}
		}
		f.tags = append(tagSet(nil), s.tags...)
	} else if s.start != f.start+off*f.step || s.step != f.step || total != f.n || off+int64(len(s.values)) > f.n {
		return false
	}
	if off == 0 {
		f.total++
		if len(f.exprs) == 0 || f.exprs[len(f.exprs)-1] != s.pathExpr && indexOf(f.exprs, s.pathExpr) < 0 {
			f.exprs = append(f.exprs, s.pathExpr)
		}
		if f.total > 1 {
			kept := f.tags[:0]
			for _, t := range f.tags {
				if v, ok := s.tags.get(t.k); ok && v == t.v {
					kept = append(kept, t)
				}
			}
			f.tags = kept
		}
	}
	if f.fn == "count" {
		return true
	}
	// one loop per function: a switch per value would cost a string
	// comparison for each of millions of values
	cnt, acc := f.cnt[off:], f.acc[off:]
	acc = acc[:len(s.values)]
	cnt = cnt[:len(s.values)]
	switch f.fn {
	case "sum", "average":
		for i, v := range s.values {
			if !isNull(v) {
				cnt[i]++
				acc[i] += v
			}
		}
	case "min":
		for i, v := range s.values {
			if !isNull(v) {
				cnt[i]++
				if math.IsNaN(acc[i]) || v < acc[i] {
					acc[i] = v
				}
			}
		}
	case "max":
		for i, v := range s.values {
			if !isNull(v) {
				cnt[i]++
				if math.IsNaN(acc[i]) || v > acc[i] {
					acc[i] = v
				}
			}
		}
	}
	return true
}

// streamable reports whether call e of an aggregate can be folded while
// reading: positional arguments only, each an untagged path expression.
func streamable(e *Expr) bool {
	if len(e.Args) == 0 || len(e.Kwargs) > 0 {
		return false
	}
	for _, a := range e.Args {
		if a.Kind != ExprPath || strings.Contains(a.Str, ";") {
			return false
		}
	}
	return true
}

// streamAggregate evaluates call e of fd by folding its series batch by
// batch as they are read (see the top of this file). done is false when
// the call is not one it folds, or its series did not share one geometry:
// the caller then evaluates the call the ordinary way, with the request's
// budget as it was before.
func (ev *evaluator) streamAggregate(fd *funcDef, e *Expr) (out []*series, done bool, err error) {
	fn, ok := streamAggregates[fd.name]
	if !ok || !streamable(e) {
		return nil, false, nil
	}
	r := ev.req
	seriesBefore := r.series
	var pats []patternNames
	for _, a := range e.Args {
		names, err := ev.leafNames(a.Str)
		if err != nil {
			return nil, true, err
		}
		if len(names) == 0 {
			continue
		}
		sort.Strings(names)
		if err := ev.countSeries(len(names), a.Str); err != nil {
			return nil, true, err
		}
		pats = append(pats, patternNames{a.Str, names})
	}
	f := &foldAcc{fn: fn}
	var ok2 bool
	if ws, isWS := r.src.(WindowSource); isWS {
		ok2, err = ev.foldWindows(ws, f, pats)
	} else {
		ok2, err = ev.foldBatches(f, pats)
	}
	if err != nil {
		return nil, true, err
	}
	if !ok2 || f.total == 0 {
		// geometries differ, or nothing to fold: the ordinary way
		// (which also names the empty result)
		r.series = seriesBefore
		return nil, false, nil
	}
	return f.result(ev)
}

// patternNames are the sorted leaf names of one path expression.
type patternNames struct {
	expr  string
	names []string
}

// held checks that a cut of list held beside the fold stays within the
// request's point limit.
func (ev *evaluator) held(f *foldAcc, list []*series) error {
	r := ev.req
	n := 2 * int(f.n)
	for _, s := range list {
		n += len(s.values)
	}
	if r.points+n > r.opts.MaxPoints {
		return inputErrorf("the request needs more than %d points; shorten the range or lower maxDataPoints", r.opts.MaxPoints)
	}
	return nil
}

// batchBudget is the values one read of a fold may hold.
func (ev *evaluator) batchBudget(f *foldAcc) int {
	r := ev.req
	return min(streamBatchPoints, max(r.opts.MaxPoints-r.points-2*int(f.n), 0)/2)
}

// foldBatches folds the series a batch of names at a time, each whole;
// false when their geometries differ.
func (ev *evaluator) foldBatches(f *foldAcc, pats []patternNames) (bool, error) {
	batch := 1 // until the first series tells the length of one
	for _, p := range pats {
		names := p.names
		for len(names) > 0 {
			part := names[:min(batch, len(names))]
			names = names[len(part):]
			list, err := ev.read(part, p.expr)
			if err != nil {
				return false, err
			}
			if err := ev.held(f, list); err != nil {
				return false, err
			}
			for _, s := range list {
				if !f.add(s, 0, int64(len(s.values))) {
					return false, nil
				}
			}
			if f.n > 0 {
				batch = min(max(ev.batchBudget(f)/int(f.n), 1), 10_000)
			}
		}
	}
	return true, nil
}

// foldWindows folds every series a cut of slots at a time: each cut of
// each expression's series is one FetchWindow, which reads each storage
// segment once, where batches of sorted names would read a segment once
// per batch that holds some of its series. false when the geometries
// differ.
func (ev *evaluator) foldWindows(ws WindowSource, f *foldAcc, pats []patternNames) (bool, error) {
	r := ev.req
	most := 1
	for _, p := range pats {
		most = max(most, len(p.names))
	}
	w := max(ev.batchBudget(f)/most, 1)
	// the series of each expression its first cut returned: later cuts
	// fold those only (a series registered meanwhile is not counted)
	present := make([]map[string]bool, len(pats))
	for lo := 0; lo == 0 || lo < int(f.n); lo += w {
		for i, p := range pats {
			data, err := ws.FetchWindow(r.ctx, p.names, ev.from, ev.until, r.fetchNow, r.maxDataPoints, lo, lo+w)
			if err != nil {
				return false, fmt.Errorf("fetching %q: %w", p.expr, err)
			}
			list, err := toSeries(data, p.expr)
			if err != nil {
				return false, err
			}
			if err := ev.held(f, list); err != nil {
				return false, err
			}
			if lo == 0 {
				present[i] = make(map[string]bool, len(list))
			}
			for _, s := range list {
				if lo == 0 {
					present[i][s.name] = true
				} else if !present[i][s.name] {
					continue
				}
				if !f.add(s, int64(lo), int64(max(s.total, len(s.values)))) {
					return false, nil
				}
			}
		}
		if lo == 0 {
			if f.total == 0 {
				return true, nil
			}
			w = max(ev.batchBudget(f)/most, 1)
		}
	}
	return true, nil
}

// result turns the fold into the aggregate series, as aggregateXFF and
// countSeries name, tag and null it.
func (f *foldAcc) result(ev *evaluator) ([]*series, bool, error) {
	xff := ev.req.xff(nil)
	end := f.start + f.n*f.step
	values := make([]float64, f.n)
	if f.fn == "count" {
		for i := range values {
			values[i] = float64(f.total)
		}
		name := "countSeries(" + strings.Join(f.exprs, ",") + ")"
		s := newSeries(name, f.start, end, f.step, values)
		s.xff = xff
		s.markInts(nil) // int(len(row))
		return []*series{s}, true, ev.req.charge(len(values))
	}
	for i := range values {
		n := f.cnt[i]
		switch {
		case n == 0 || float64(n)/float64(f.total) < xff:
			values[i] = nan
		case f.fn == "average":
			values[i] = f.acc[i] / float64(n)
		default:
			values[i] = f.acc[i]
		}
	}
	name := f.fn + "Series(" + strings.Join(f.exprs, ",") + ")"
	tags := f.tags
	if _, ok := tags.get("name"); !ok {
		tags = tags.with("name", name)
	}
	tags = tags.with("aggregatedBy", f.fn)
	s := &series{name: name, pathExpr: name, tags: tags, start: f.start, end: end, step: f.step, values: values, xff: xff}
	return []*series{s}, true, ev.req.charge(len(values))
}
