package render

import (
	"math"
	"regexp"
	"sort"
	"strings"
)

// sortKey is Graphite's keyFunc: a series with no data sorts as -inf.
func sortKey(f aggFunc, s *series) float64 {
	v := f(s.values)
	if isNull(v) {
		return math.Inf(-1)
	}
	return v
}

// sortSeries sorts a copy of list by key, stably, highest first if desc.
func sortSeries(list []*series, f aggFunc, desc bool) []*series {
	out := append([]*series(nil), list...)
	keys := make(map[*series]float64, len(out))
	for _, s := range out {
		keys[s] = sortKey(f, s)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if desc {
			return keys[out[i]] > keys[out[j]]
		}
		return keys[out[i]] < keys[out[j]]
	})
	return out
}

// pyHead is Python's list[:n]: negative n drops from the end.
func pyHead(list []*series, n int) []*series {
	if n < 0 {
		n += len(list)
	}
	return list[:max(0, min(n, len(list)))]
}

func rankBy(f aggFunc, desc bool) func(*evaluator, *args) ([]*series, error) {
	return func(ev *evaluator, a *args) ([]*series, error) {
		return pyHead(sortSeries(a.seriesList("seriesList"), f, desc), int(a.number("n", 1))), nil
	}
}

func limit(ev *evaluator, a *args) ([]*series, error) {
	return pyHead(a.seriesList("seriesList"), int(a.number("n", 0))), nil
}

func sortByMaxima(ev *evaluator, a *args) ([]*series, error) {
	return sortSeries(a.seriesList("seriesList"), aggMax, true), nil
}

// renamed returns a shallow copy of s with a new display name; the path
// expression (used by aggregate names) stays.
func renamed(s *series, name string) *series {
	c := *s
	c.name = name
	return &c
}

func alias(ev *evaluator, a *args) ([]*series, error) {
	name := a.str("newName", "")
	var out []*series
	for _, s := range a.seriesList("seriesList") {
		out = append(out, renamed(s, name))
	}
	return out, nil
}

func aliasByNode(ev *evaluator, a *args) ([]*series, error) {
	var out []*series
	for _, s := range a.seriesList("seriesList") {
		out = append(out, renamed(s, aggKey(s, a.multi)))
	}
	return out, nil
}

// maxRegexpLen bounds aliasSub's pattern.
const maxRegexpLen = 1024

func aliasSub(ev *evaluator, a *args) ([]*series, error) {
	search := a.str("search", "")
	if len(search) > maxRegexpLen {
		return nil, inputErrorf("aliasSub: search pattern longer than %d bytes", maxRegexpLen)
	}
	re, err := regexp.Compile(search)
	if err != nil {
		return nil, inputErrorf("aliasSub: invalid regular expression %q: %v", search, err)
	}
	repl := pyReplacement(a.str("replace", ""))
	var out []*series
	for _, s := range a.seriesList("seriesList") {
		out = append(out, renamed(s, re.ReplaceAllString(s.name, repl)))
	}
	return out, nil
}

// pyReplacement turns a Python re.sub replacement ("\1", "\g<name>") into
// a Go regexp template ("${1}", "${name}"), escaping literal '$'.
func pyReplacement(r string) string {
	var b strings.Builder
	for i := 0; i < len(r); i++ {
		c := r[i]
		switch {
		case c == '$':
			b.WriteString("$$")
		case c == '\\' && i+1 < len(r):
			n := r[i+1]
			switch {
			case n >= '0' && n <= '9':
				j := i + 1
				for j < len(r) && j < i+3 && r[j] >= '0' && r[j] <= '9' {
					j++
				}
				b.WriteString("${" + r[i+1:j] + "}")
				i = j - 1
			case n == 'g' && i+2 < len(r) && r[i+2] == '<':
				end := strings.IndexByte(r[i+3:], '>')
				if end < 0 {
					b.WriteString(`\g`)
					i++
					continue
				}
				b.WriteString("${" + r[i+3:i+3+end] + "}")
				i += 3 + end
			case n == 'n':
				b.WriteByte('\n')
				i++
			case n == 't':
				b.WriteByte('\t')
				i++
			case n == '\\':
				b.WriteByte('\\')
				i++
			default:
				b.WriteByte(c)
			}
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func constantLine(ev *evaluator, a *args) ([]*series, error) {
	s := constantSeries(ev, a.vals["value"])
	return []*series{s}, ev.req.charge(len(s.values))
}

// constantSeries is constantLine's series: three points, at from, the
// middle and until, named by the value as Python's str() spells it.
func constantSeries(ev *evaluator, v value) *series {
	step := max((ev.until-ev.from)/2, 1)
	name := v.pyStr()
	s := &series{
		name: name, pathExpr: "constantLine(" + name + ")", tags: tagSet{{"name", name}},
		start: ev.from, end: ev.until, step: step, values: []float64{v.num, v.num, v.num},
		xff: ev.req.xff(nil),
	}
	if v.isInt {
		s.markInts(nil) // the literal, a Python int
	}
	return s
}
