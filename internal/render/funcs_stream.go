package render

import (
	"math"
	"sort"
	"strings"
)

// Streaming aggregation: sumSeries(a.*) over 10,000 series of 10,080
// one-minute slots would hold 100 million values if every series were
// fetched before the sum; folded batch by batch it holds one batch and
// the result.
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

// add folds s; false when s's geometry differs from the series before.
func (f *foldAcc) add(s *series) bool {
	n := int64(len(s.values))
	if f.total == 0 {
		f.start, f.step, f.n = s.start, s.step, n
		f.cnt = make([]int32, n)
		if f.fn != "count" {
			f.acc = make([]float64, n)
			if f.fn == "min" || f.fn == "max" {
				for i := range f.acc {
					f.acc[i] = nan
				}
			}
		}
		f.tags = append(tagSet(nil), s.tags...)
	} else if s.start != f.start || s.step != f.step || n != f.n {
		return false
	}
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
	for i, v := range s.values {
		if isNull(v) {
			continue
		}
		f.cnt[i]++
		switch f.fn {
		case "sum", "average":
			f.acc[i] += v
		case "min":
			if math.IsNaN(f.acc[i]) || v < f.acc[i] {
				f.acc[i] = v
			}
		case "max":
			if math.IsNaN(f.acc[i]) || v > f.acc[i] {
				f.acc[i] = v
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
	f := &foldAcc{fn: fn}
	batch := 1 // until the first series tells the length of one
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
		for len(names) > 0 {
			part := names[:min(batch, len(names))]
			names = names[len(part):]
			list, err := ev.read(part, a.Str)
			if err != nil {
				return nil, true, err
			}
			held := 2 * int(f.n)
			for _, s := range list {
				held += len(s.values)
			}
			if r.points+held > r.opts.MaxPoints {
				return nil, true, inputErrorf("the request needs more than %d points; shorten the range or lower maxDataPoints", r.opts.MaxPoints)
			}
			for _, s := range list {
				if !f.add(s) {
					r.series = seriesBefore
					return nil, false, nil
				}
			}
			if f.n > 0 {
				budget := min(streamBatchPoints, max(r.opts.MaxPoints-r.points-2*int(f.n), 0)/2)
				batch = min(max(budget/int(f.n), 1), 10_000)
			}
		}
	}
	if f.total == 0 {
		// nothing to fold: the ordinary way names the empty result
		r.series = seriesBefore
		return nil, false, nil
	}
	return f.result(ev)
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
