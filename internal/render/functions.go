package render

import (
	"fmt"
	"math"
)

// param describes one function parameter, as /functions publishes it.
// Type is one of Graphite's parameter type names, which Grafana's editor
// understands: seriesList, seriesLists, float, integer, intOrInf, interval,
// intOrInterval, nodeOrTag, boolean, string, aggFunc, aggOrSeriesFunc, any.
type param struct {
	Name        string
	Type        string
	Required    bool
	Default     any // nil: none
	Multiple    bool
	Options     []string
	Suggestions []any
	// extraOptions are non-string options /functions lists (smartSummarize's
	// alignTo accepts None, True and False for compatibility).
	extraOptions []any
}

// funcDef is one series function: its metadata for /functions and its
// implementation.
type funcDef struct {
	name        string
	group       string
	signature   string // Python-style argument list, for /functions
	description string
	params      []param
	aggregator  bool     // may be the callback of groupByNode
	aliases     []string // other names graphite-web lists it under
	// unavailable, when set, says why the function cannot work here; it
	// is listed and answers this reason as a 400, never "unknown function".
	unavailable string
	impl        func(ev *evaluator, a *args) ([]*series, error)
}

func (fd *funcDef) param(name string) *param {
	for i := range fd.params {
		if fd.params[i].Name == name {
			return &fd.params[i]
		}
	}
	return nil
}

// check validates an argument against the parameter type.
func (p *param) check(fn string, v value) error {
	if v.kind == valNone && !p.Required {
		return nil
	}
	bad := func(want string) error {
		return inputErrorf("%s: argument %q must be %s", fn, p.Name, want)
	}
	isInt := v.kind == valNumber && v.num == math.Trunc(v.num) && !math.IsInf(v.num, 0)
	switch p.Type {
	case "seriesList", "seriesLists":
		if v.kind != valSeries {
			return bad("a series list")
		}
	case "float":
		if v.kind != valNumber {
			return bad("a number")
		}
	case "integer":
		if !isInt {
			return bad("an integer")
		}
	case "intOrInf":
		if !isInt && !(v.kind == valNumber && math.IsInf(v.num, 1)) {
			return bad("an integer or inf")
		}
	case "interval":
		if v.kind != valString {
			return bad("an interval string such as \"1h\"")
		}
		if d, err := ParseOffset(v.str); err != nil || d == 0 {
			return bad("an interval string such as \"1h\"")
		}
	case "intOrInterval":
		if isInt {
			return nil
		}
		if v.kind != valString {
			return bad("an integer or an interval string")
		}
		if _, err := ParseOffset(v.str); err != nil {
			return bad("an integer or an interval string")
		}
	case "node":
		if !isInt {
			return bad("a node number")
		}
	case "tag":
		if v.kind != valString {
			return bad("a tag name")
		}
	case "date":
		if v.kind != valString && v.kind != valNumber {
			return bad("a time such as \"-1d\" or a timestamp")
		}
	case "nodeOrTag":
		if !isInt && v.kind != valString {
			return bad("a node number or tag name")
		}
	case "boolean":
		switch {
		case v.kind == valBool:
		case v.kind == valNumber && (v.num == 0 || v.num == 1):
		case v.kind == valString && (v.str == "true" || v.str == "false" || v.str == "True" || v.str == "False"):
		default:
			return bad("a boolean")
		}
	case "string":
		if v.kind != valString {
			return bad("a string")
		}
	case "aggFunc":
		if _, _, ok := lookupAgg(v.str); v.kind != valString || !ok {
			return inputErrorf("%s: unsupported aggregation function %q", fn, v.str)
		}
	case "aggOrSeriesFunc":
		if v.kind != valString {
			return bad("an aggregation or series function name")
		}
		if _, _, ok := lookupAgg(v.str); !ok {
			if fd, ok := functionIndex[v.str]; !ok || !fd.aggregator {
				return inputErrorf("%s: unsupported aggregation function %q", fn, v.str)
			}
		}
	}
	return nil
}

// convert returns v as graphite-web's parameter validation hands it to
// the function: a float parameter becomes a Python float, so an integer
// literal 2 is spelled "2.0" where the function puts it into a name or a
// tag (scale's tag, constantLine's name).
func (p *param) convert(v value) value {
	if p.Type == "float" && v.kind == valNumber {
		v.isInt = false
	}
	return v
}

// functionIndex maps names and aliases to definitions; built once in init
// from the function tables so that table entries may refer to the index.
var functionIndex map[string]*funcDef

// functionNames lists every name /functions publishes (aliases included),
// in table order.
var functionNames []string

// functionTables are the per-group tables, concatenated at init.
var functionTables = [][]funcDef{functionTable, moreFunctions}

func init() {
	functionIndex = map[string]*funcDef{}
	for _, t := range functionTables {
		for i := range t {
			fd := &t[i]
			for _, name := range append([]string{fd.name}, fd.aliases...) {
				if _, dup := functionIndex[name]; dup {
					panic(fmt.Sprintf("render: function %q defined twice", name))
				}
				functionIndex[name] = fd
				functionNames = append(functionNames, name)
			}
		}
	}
}

// Functions returns the names of the series functions, aliases included.
func Functions() []string { return append([]string(nil), functionNames...) }

var (
	pSeriesList  = param{Name: "seriesList", Type: "seriesList", Required: true}
	pSeriesLists = param{Name: "seriesLists", Type: "seriesList", Required: true, Multiple: true}
	windowSugg   = []any{5, 7, 10, "1min", "5min", "10min", "30min", "1hour"}
)

func aggParam(name string, def any, required bool) param {
	return param{Name: name, Type: "aggFunc", Default: def, Required: required, Options: aggFuncNames}
}

// functionTable lists every supported function, grouped as Graphite groups
// them. Descriptions are short; see docs/render.md for the semantics.
var functionTable = []funcDef{
	{name: "sumSeries", group: "Combine", signature: "*seriesLists", aggregator: true,
		description: "Adds series together point by point; a point is null only when it is null in every series.",
		params:      []param{pSeriesLists}, impl: aggregateFunc("sum"), aliases: []string{"sum"}},
	{name: "averageSeries", group: "Combine", signature: "*seriesLists", aggregator: true,
		description: "Averages series point by point over the non-null values.",
		params:      []param{pSeriesLists}, impl: aggregateFunc("average"), aliases: []string{"avg"}},
	{name: "maxSeries", group: "Combine", signature: "*seriesLists", aggregator: true,
		description: "Takes the maximum of the series at each point.",
		params:      []param{pSeriesLists}, impl: aggregateFunc("max")},
	{name: "minSeries", group: "Combine", signature: "*seriesLists", aggregator: true,
		description: "Takes the minimum of the series at each point.",
		params:      []param{pSeriesLists}, impl: aggregateFunc("min")},
	{name: "asPercent", group: "Combine", signature: "seriesList, total=None, *nodes", aggregator: true,
		description: "Each series as a percentage of a total: the sum of the list, a number, one series, a list matched by name, or per group of nodes.",
		params: []param{pSeriesList, {Name: "total", Type: "any"},
			{Name: "nodes", Type: "nodeOrTag", Multiple: true}}, impl: asPercent, aliases: []string{"pct"}},
	{name: "groupByNode", group: "Combine", signature: "seriesList, nodeNum, callback='average'",
		description: "Groups series by the value of one node and aggregates each group; the group key becomes the name.",
		params: []param{pSeriesList, {Name: "nodeNum", Type: "nodeOrTag", Required: true},
			{Name: "callback", Type: "aggOrSeriesFunc", Default: "average", Options: aggFuncNames}}, impl: groupByNode},
	{name: "scale", group: "Transform", signature: "seriesList, factor",
		description: "Multiplies every value by factor.",
		params:      []param{pSeriesList, {Name: "factor", Type: "float", Required: true}}, impl: scaleOrOffset("scale")},
	{name: "offset", group: "Transform", signature: "seriesList, factor",
		description: "Adds factor to every non-null value.",
		params:      []param{pSeriesList, {Name: "factor", Type: "float", Required: true}}, impl: scaleOrOffset("offset")},
	{name: "derivative", group: "Transform", signature: "seriesList",
		description: "The difference between each value and the one before; null next to a null.",
		params:      []param{pSeriesList}, impl: derivative},
	{name: "nonNegativeDerivative", group: "Transform", signature: "seriesList, maxValue=None, minValue=None",
		description: "Like derivative for counters: a decrease is a wrap (with maxValue) or a reset (null).",
		params:      []param{pSeriesList, {Name: "maxValue", Type: "float"}, {Name: "minValue", Type: "float"}},
		impl:        nonNegativeDerivative("nonNegativeDerivative")},
	{name: "perSecond", group: "Transform", signature: "seriesList, maxValue=None, minValue=None",
		description: "nonNegativeDerivative divided by the step: a counter's rate per second.",
		params:      []param{pSeriesList, {Name: "maxValue", Type: "float"}, {Name: "minValue", Type: "float"}},
		impl:        nonNegativeDerivative("perSecond")},
	{name: "integral", group: "Transform", signature: "seriesList",
		description: "The running total of the non-null values.",
		params:      []param{pSeriesList}, impl: integral},
	{name: "absolute", group: "Transform", signature: "seriesList",
		description: "The absolute value of every point.",
		params:      []param{pSeriesList}, impl: absolute},
	{name: "keepLastValue", group: "Transform", signature: "seriesList, limit=inf",
		description: "Fills runs of at most limit nulls with the last value before them.",
		params:      []param{pSeriesList, {Name: "limit", Type: "intOrInf", Default: posInf}}, impl: keepLastValue},
	{name: "transformNull", group: "Transform", signature: "seriesList, default=0, referenceSeries=None",
		description: "Replaces nulls with default (only where referenceSeries has data, if given).",
		params: []param{pSeriesList, {Name: "default", Type: "float", Default: 0},
			{Name: "referenceSeries", Type: "seriesList"}}, impl: transformNull},
	{name: "summarize", group: "Transform", signature: "seriesList, intervalString, func='sum', alignToFrom=False",
		description: "Buckets points into intervals (aligned to the interval, or to from) and aggregates each bucket.",
		params: []param{pSeriesList,
			{Name: "intervalString", Type: "interval", Required: true, Suggestions: []any{"10min", "1h", "1d"}},
			aggParam("func", "sum", false), {Name: "alignToFrom", Type: "boolean", Default: false}}, impl: summarize},
	{name: "timeShift", group: "Transform", signature: "seriesList, timeShift, resetEnd=True, alignDST=False",
		description: "Draws the series as it was timeShift ago (\"1d\" means one day earlier).",
		params: []param{pSeriesList,
			{Name: "timeShift", Type: "interval", Required: true, Suggestions: []any{"1h", "6h", "12h", "1d", "2d", "7d", "14d", "30d"}},
			{Name: "resetEnd", Type: "boolean", Default: true}, {Name: "alignDst", Type: "boolean", Default: false}}, impl: timeShift},
	{name: "movingAverage", group: "Calculate", signature: "seriesList, windowSize, xFilesFactor=None",
		description: "The average of the last windowSize points (a count, or an interval such as \"5min\") at each point.",
		params: []param{pSeriesList, {Name: "windowSize", Type: "intOrInterval", Required: true, Suggestions: windowSugg},
			{Name: "xFilesFactor", Type: "float"}}, impl: movingFunc("average")},
	{name: "highestMax", group: "Filter Series", signature: "seriesList, n",
		description: "The n series with the highest maximum.",
		params:      []param{pSeriesList, {Name: "n", Type: "integer", Required: true}}, impl: rankBy(aggMax, true)},
	{name: "highestAverage", group: "Filter Series", signature: "seriesList, n",
		description: "The n series with the highest average.",
		params:      []param{pSeriesList, {Name: "n", Type: "integer", Required: true}}, impl: rankBy(aggAverage, true)},
	{name: "lowestAverage", group: "Filter Series", signature: "seriesList, n",
		description: "The n series with the lowest average (all-null series first).",
		params:      []param{pSeriesList, {Name: "n", Type: "integer", Required: true}}, impl: rankBy(aggAverage, false)},
	{name: "limit", group: "Filter Series", signature: "seriesList, n",
		description: "The first n series.",
		params:      []param{pSeriesList, {Name: "n", Type: "integer", Required: true}}, impl: limit},
	{name: "sortByMaxima", group: "Sorting", signature: "seriesList",
		description: "Sorts the series by their maximum, highest first.",
		params:      []param{pSeriesList}, impl: sortByMaxima},
	{name: "alias", group: "Alias", signature: "seriesList, newName",
		description: "Renames every series to newName.",
		params:      []param{pSeriesList, {Name: "newName", Type: "string", Required: true}}, impl: alias},
	{name: "aliasByNode", group: "Alias", signature: "seriesList, *nodes",
		description: "Renames each series to the given nodes of its path (negative counts from the end), joined by dots.",
		params:      []param{pSeriesList, {Name: "nodes", Type: "nodeOrTag", Required: true, Multiple: true}}, impl: aliasByNode},
	{name: "aliasSub", group: "Alias", signature: "seriesList, search, replace",
		description: "Renames series by a regular-expression substitution; \\1 in replace is the first group.",
		params: []param{pSeriesList, {Name: "search", Type: "string", Required: true},
			{Name: "replace", Type: "string", Required: true}}, impl: aliasSub},
	{name: "constantLine", group: "Special", signature: "value",
		description: "A horizontal line at value across the requested range.",
		params:      []param{{Name: "value", Type: "float", Required: true}}, impl: constantLine},
}
