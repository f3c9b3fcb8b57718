package rollup

import (
	"fmt"
	"strings"

	"github.com/pgts/pgts/internal/pg"
)

// A rollup stores partial states, not final values, so that buckets
// combine exactly (a daily rollup from an hourly one, the real-time view's
// union of stored and fresh buckets):
//
//	avg(x)       NAME_sum = sum(x), NAME_count = count(x)   → NAME_sum / NAME_count
//	sum, min, max                NAME                       → sum, min, max of NAME
//	count(*), count(x)           NAME                       → sum of NAME
//	first(x, t), last(x, t)      NAME, NAME_time = min(t) / max(t)
//	                             → pgts.first(NAME, NAME_time), pgts.last(...)

// stateColumns are the columns of the rollup's data table that hold a's
// partial state.
func stateColumns(a Agg) []string {
	switch a.Func {
	case Avg:
		return []string{a.Name + "_sum", a.Name + "_count"}
	case First, Last:
		return []string{a.Name, a.Name + "_time"}
	}
	return []string{a.Name}
}

// rawStates are the select-list items computing a's partial state from
// rows of a series table aliased r.
func rawStates(a Agg) []string {
	q := pg.QuoteIdent
	col := "r." + q(a.Column)
	switch a.Func {
	case Avg:
		return []string{"sum(" + col + ")", "count(" + col + ")"}
	case Count:
		if a.Column == "" {
			return []string{"count(*)"}
		}
		return []string{"count(" + col + ")"}
	case First:
		return []string{"pgts.first(" + col + ", r." + q(a.By) + ")", "min(r." + q(a.By) + ")"}
	case Last:
		return []string{"pgts.last(" + col + ", r." + q(a.By) + ")", "max(r." + q(a.By) + ")"}
	}
	return []string{string(a.Func) + "(" + col + ")"}
}

// combinedStates are the select-list items combining the partial states
// of p (an aggregate of the parent rollup, rows aliased r) into a's.
func combinedStates(a, p Agg) []string {
	c := stateColumns(p)
	q := func(i int) string { return "r." + pg.QuoteIdent(c[i]) }
	switch a.Func {
	case Avg:
		return []string{"sum(" + q(0) + ")", "sum(" + q(1) + ")::bigint"}
	case Count:
		return []string{"sum(" + q(0) + ")::bigint"}
	case First:
		return []string{"pgts.first(" + q(0) + ", " + q(1) + ")", "min(" + q(1) + ")"}
	case Last:
		return []string{"pgts.last(" + q(0) + ", " + q(1) + ")", "max(" + q(1) + ")"}
	}
	return []string{string(a.Func) + "(" + q(0) + ")"}
}

// finalValue is the view's column for a, from states of rows aliased s;
// floatSum says avg's sum is a float (else it is divided as numeric, as
// PostgreSQL's avg of integers and numerics is).
func finalValue(a Agg, floatSum bool) string {
	c := stateColumns(a)
	s := func(i int) string { return "s." + pg.QuoteIdent(c[i]) }
	if a.Func == Avg {
		if floatSum {
			return fmt.Sprintf("%s / nullif(%s, 0)", s(0), s(1))
		}
		return fmt.Sprintf("%s::numeric / nullif(%s, 0)", s(0), s(1))
	}
	return s(0)
}

// parentAgg finds the aggregate of the parent rollup that a is computed
// from: the same function of the same columns (count(*) for count(*)).
func parentAgg(a Agg, parent []Agg) (Agg, error) {
	for _, p := range parent {
		if p.Func == a.Func && p.Column == a.Column && p.By == a.By {
			return p, nil
		}
	}
	spec := a
	spec.Name = "x"
	s := strings.TrimSuffix(spec.String(), ` AS "x"`)
	return Agg{}, fmt.Errorf("the rollup it is built on has no %s: a rollup on a rollup combines the partial states of the same aggregates", s)
}
