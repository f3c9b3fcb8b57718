package render

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// InputError is a problem with the request itself: bad syntax, an unknown
// function, a wrong argument or a limit. The HTTP layer answers 400 with
// "Bad Request: " and the message, as graphite-web does.
type InputError struct {
	Msg string
}

func (e *InputError) Error() string { return e.Msg }

func inputErrorf(format string, a ...any) error {
	return &InputError{Msg: fmt.Sprintf(format, a...)}
}

// IsInputError reports whether err is the client's fault (HTTP 400).
func IsInputError(err error) bool {
	var ie *InputError
	var pe *ParseError
	return errors.As(err, &ie) || errors.As(err, &pe)
}

// request is the state one /render request shares across its targets:
// the source, the limits and what has been spent of them. Not safe for
// concurrent use.
type request struct {
	ctx           context.Context
	src           Source
	opts          *Options
	maxDataPoints int
	loc           *time.Location // the request's time zone, for dates in arguments
	now           time.Time      // the request's clock
	// fetchNow is the request's now (its "now" parameter, else the
	// clock), unix seconds, which a NowSource picks resolutions by.
	fetchNow int64
	points   int // values fetched or computed so far
	series   int // series fetched so far
	// xFilesFactor is what setXFilesFactor set for the rest of the
	// request (graphite-web keeps it in the request context); nil: 0.
	xFilesFactor *float64
	// stacks are stacked()'s running totals by stack name, shared by the
	// request's targets as graphite-web shares them.
	stacks map[string][]float64
}

// xff returns arg if given, else the request's xFilesFactor, else 0.
func (r *request) xff(arg *float64) float64 {
	switch {
	case arg != nil:
		return *arg
	case r.xFilesFactor != nil:
		return *r.xFilesFactor
	}
	return 0
}

// charge spends n points of the request's budget.
func (r *request) charge(n int) error {
	r.points += n
	if r.points > r.opts.MaxPoints {
		return inputErrorf("the request needs more than %d points; shorten the range or lower maxDataPoints", r.opts.MaxPoints)
	}
	return nil
}

// evaluator evaluates expressions over one time range, (from, until] in
// unix seconds. Functions that look at other times (timeShift,
// movingAverage) evaluate their argument with a copy over another range.
type evaluator struct {
	req         *request
	from, until int64
}

// valueKind says what an evaluated argument is.
type valueKind int

const (
	valSeries valueKind = iota
	valNumber
	valString
	valBool
	valNone
)

// value is an evaluated argument.
type value struct {
	kind  valueKind
	list  []*series
	num   float64
	isInt bool
	str   string
	b     bool
	expr  *Expr // the expression it came from
}

// pyStr spells a scalar as Python's str() does, as Graphite puts it into
// tags and some names.
func (v value) pyStr() string {
	switch v.kind {
	case valNumber:
		if v.isInt {
			return strconv.FormatFloat(v.num, 'f', 0, 64)
		}
		return pyRepr(v.num)
	case valString:
		return v.str
	case valBool:
		if v.b {
			return "True"
		}
		return "False"
	case valNone:
		return "None"
	}
	return ""
}

// evalTarget evaluates a whole target to a series list.
func (ev *evaluator) evalTarget(e *Expr) ([]*series, error) {
	v, err := ev.eval(e)
	if err != nil {
		return nil, err
	}
	if v.kind != valSeries {
		return nil, inputErrorf("target %q is not a series expression", e.String())
	}
	return v.list, nil
}

func (ev *evaluator) eval(e *Expr) (value, error) {
	if err := ev.req.ctx.Err(); err != nil {
		return value{}, err
	}
	switch e.Kind {
	case ExprPath:
		list, err := ev.fetch(e.Str)
		return value{kind: valSeries, list: list, expr: e}, err
	case ExprCall:
		list, err := ev.call(e)
		return value{kind: valSeries, list: list, expr: e}, err
	case ExprNumber:
		return value{kind: valNumber, num: e.Num, isInt: e.IsInt, expr: e}, nil
	case ExprString:
		return value{kind: valString, str: e.Str, expr: e}, nil
	case ExprBool:
		return value{kind: valBool, b: e.Bool, expr: e}, nil
	}
	return value{kind: valNone, expr: e}, nil
}

// fetch resolves a glob to its leaf metrics and reads them. Series come
// back sorted by name, named by their path, tagged {"name": path}.
func (ev *evaluator) fetch(pattern string) ([]*series, error) {
	if strings.Contains(pattern, ";") {
		// a tagged series by its name: graphite-web looks it up exactly
		// (no glob), as carbon filed it, keys sorted
		return ev.fetchNames([]string{pattern}, pattern)
	}
	names, err := ev.leafNames(pattern)
	if err != nil {
		return nil, err
	}
	return ev.fetchNames(names, pattern)
}

// leafNames resolves an untagged glob to the names of its leaf metrics,
// each once, in no particular order.
func (ev *evaluator) leafNames(pattern string) ([]string, error) {
	r := ev.req
	nodes, err := r.src.Find(r.ctx, pattern)
	if err != nil {
		return nil, fmt.Errorf("finding %q: %w", pattern, err)
	}
	seen := map[string]bool{}
	var names []string
	for _, n := range nodes {
		// tagged series live outside the tree, as in graphite-web: a glob
		// never selects them, seriesByTag does
		if n.Leaf && !seen[n.Path] && !strings.Contains(n.Path, ";") {
			seen[n.Path] = true
			names = append(names, n.Path)
		}
	}
	return names, nil
}

// countSeries spends n series of the request's budget.
func (ev *evaluator) countSeries(n int, pattern string) error {
	r := ev.req
	r.series += n
	if r.series > r.opts.MaxSeries {
		return inputErrorf("the request matches more than %d series; narrow the pattern %q", r.opts.MaxSeries, pattern)
	}
	return nil
}

// fetchNames reads the named series; each gets pathExpr as its path
// expression and the tags its name carries. Series come back sorted by
// name.
func (ev *evaluator) fetchNames(names []string, pattern string) ([]*series, error) {
	r := ev.req
	if len(names) == 0 {
		return nil, nil
	}
	sort.Strings(names)
	if err := ev.countSeries(len(names), pattern); err != nil {
		return nil, err
	}
	if r.opts.MinStep > 0 {
		per := (ev.until - ev.from) / r.opts.MinStep
		if per*int64(len(names)) > int64(r.opts.MaxPoints-r.points) {
			return nil, inputErrorf("%q over this range could need %d points, more than the limit %d; shorten the range", pattern, per*int64(len(names)), r.opts.MaxPoints)
		}
	}
	out, err := ev.read(names, pattern)
	if err != nil {
		return nil, err
	}
	for _, s := range out {
		if err := r.charge(len(s.values)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// read fetches the named series from the source without charging the
// request's budget; the series come back sorted by name.
func (ev *evaluator) read(names []string, pattern string) ([]*series, error) {
	r := ev.req
	var data []Series
	var err error
	if ns, ok := r.src.(NowSource); ok {
		data, err = ns.FetchAt(r.ctx, names, ev.from, ev.until, r.fetchNow, r.maxDataPoints)
	} else {
		data, err = r.src.Fetch(r.ctx, names, ev.from, ev.until, r.maxDataPoints)
	}
	if err != nil {
		return nil, fmt.Errorf("fetching %q: %w", pattern, err)
	}
	return toSeries(data, pattern)
}

// toSeries turns what a Source returned for pattern into series sorted
// by name, tagged as their names say.
func toSeries(data []Series, pattern string) ([]*series, error) {
	out := make([]*series, 0, len(data))
	for _, d := range data {
		if d.Step <= 0 {
			return nil, fmt.Errorf("fetching %q: series %q has step %d", pattern, d.Name, d.Step)
		}
		out = append(out, &series{
			name:     d.Name,
			pathExpr: pattern,
			tags:     seriesTags(d.Name),
			start:    d.Start,
			end:      d.Start + int64(len(d.Values))*d.Step,
			step:     d.Step,
			values:   d.Values,
			total:    d.Total,
		})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

// call evaluates a function call.
func (ev *evaluator) call(e *Expr) ([]*series, error) {
	fd, ok := functionIndex[e.Str]
	if !ok {
		return nil, inputErrorf("Received request for unknown function: %s", e.Str)
	}
	if fd.unavailable != "" {
		return nil, inputErrorf("%s is not available: %s", e.Str, fd.unavailable)
	}
	if out, done, err := ev.streamAggregate(fd, e); done || err != nil {
		return out, err
	}
	a, err := ev.bind(fd, e)
	if err != nil {
		return nil, err
	}
	out, err := fd.impl(ev, a)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// args are a call's arguments bound to the function's parameters.
type args struct {
	fn    *funcDef
	call  *Expr
	vals  map[string]value // single parameters given
	multi []value          // the values of the multiple parameter, if any
}

func (a *args) has(name string) bool {
	v, ok := a.vals[name]
	return ok && v.kind != valNone
}

// bind matches positional and keyword arguments to fd's parameters,
// evaluates them and checks their types.
func (ev *evaluator) bind(fd *funcDef, e *Expr) (*args, error) {
	a := &args{fn: fd, call: e, vals: map[string]value{}}
	pi := 0
	for _, x := range e.Args {
		if pi >= len(fd.params) {
			return nil, inputErrorf("%s: too many arguments (at most %d)", fd.name, len(fd.params))
		}
		p := &fd.params[pi]
		v, err := ev.eval(x)
		if err != nil {
			return nil, err
		}
		if err := p.check(fd.name, v); err != nil {
			return nil, err
		}
		v = p.convert(v)
		if p.Multiple {
			a.multi = append(a.multi, v)
			continue
		}
		a.vals[p.Name] = v
		pi++
	}
	for _, kw := range e.Kwargs {
		p := fd.param(kw.Name)
		if p == nil {
			return nil, inputErrorf("%s: unknown argument %q", fd.name, kw.Name)
		}
		if _, dup := a.vals[p.Name]; dup || (p.Multiple && len(a.multi) > 0) {
			return nil, inputErrorf("%s: argument %q given twice", fd.name, kw.Name)
		}
		v, err := ev.eval(kw.Value)
		if err != nil {
			return nil, err
		}
		if err := p.check(fd.name, v); err != nil {
			return nil, err
		}
		v = p.convert(v)
		if p.Multiple {
			a.multi = append(a.multi, v)
		} else {
			a.vals[p.Name] = v
		}
	}
	for i := range fd.params {
		p := &fd.params[i]
		if !p.Required {
			continue
		}
		if p.Multiple && len(a.multi) == 0 || !p.Multiple && !a.has(p.Name) {
			return nil, inputErrorf("%s: missing required argument %q", fd.name, p.Name)
		}
	}
	return a, nil
}

// seriesList returns the series of parameter name (nil if absent).
func (a *args) seriesList(name string) []*series { return a.vals[name].list }

// number returns parameter name, or def when it is absent or None.
func (a *args) number(name string, def float64) float64 {
	if v, ok := a.vals[name]; ok && v.kind == valNumber {
		return v.num
	}
	return def
}

// str returns parameter name, or def when absent.
func (a *args) str(name, def string) string {
	if v, ok := a.vals[name]; ok && v.kind == valString {
		return v.str
	}
	return def
}

// boolean returns parameter name, or def when absent.
func (a *args) boolean(name string, def bool) bool {
	v, ok := a.vals[name]
	if !ok {
		return def
	}
	switch v.kind {
	case valBool:
		return v.b
	case valNumber:
		return v.num != 0
	case valString:
		return v.str == "true" || v.str == "True"
	}
	return def
}

// allSeries flattens the multiple parameter's series lists.
func (a *args) allSeries() []*series {
	var out []*series
	for _, v := range a.multi {
		out = append(out, v.list...)
	}
	return out
}

// withRange returns an evaluator over another range sharing the budget.
func (ev *evaluator) withRange(from, until int64) *evaluator {
	return &evaluator{req: ev.req, from: from, until: until}
}
