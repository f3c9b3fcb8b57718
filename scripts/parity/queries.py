"""What the parity suite asks both systems: ranges, targets, find and expand.

Time ranges. Both daemons store against the real clock, which moves while
the suite runs, so:
- absolute ranges are computed once from t0 and sent as epoch seconds, and
  stay well inside an archive (whisper picks the archive by now - from, with
  now the real clock, so "5h" must not drift past 6 h during the run);
- "now" ranges send now=t0 too: the relative offsets resolve to the same
  instant in both;
- relative ranges without now (what Grafana sends) are resolved by each
  server at its own request time: the runner sends the pair back to back and
  keeps the answer only when both requests fell inside the same slot of the
  coarsest step the answers use (else it asks again), so both saw the same
  window.

Function targets. TEMPLATES maps each graphite-web 1.1.10 function to
targets over the fn family ({S} = fn.*, {A} = fn.a, {B} = fn.b with nulls,
{C} = a counter; MIXED adds, for every combining function, targets mixing
10 s series with a 60 s one). A function is compared when both /functions
lists name it; one listed by both with no template is reported as
uncovered.
"""

RANGES = {
    # name: (params builder, kind)
    "1h": lambda t0: {"from": t0 - 3600, "until": t0},
    "5h": lambda t0: {"from": t0 - 5 * 3600, "until": t0 - 3600},
    "odd": lambda t0: {"from": t0 - 3607, "until": t0 - 1793},
    "2d": lambda t0: {"from": t0 - 2 * 86400 - 1800, "until": t0},
    "31d": lambda t0: {"from": t0 - 31 * 86400, "until": t0},
    "now-1h": lambda t0: {"from": "-1h", "until": "now", "now": t0},
    "now-2d": lambda t0: {"from": "-2d", "until": "now", "now": t0},
    "rel-1h": lambda t0: {"from": "-1h", "until": "now"},
    "rel-6h": lambda t0: {"from": "-6h", "until": "now"},
    "rel-7d": lambda t0: {"from": "-7d", "until": "now"},
}

# (format, maxDataPoints) asked per range for plain targets. csv and raw
# ignore maxDataPoints in graphite-web; long ranges are asked with
# maxDataPoints only (as Grafana always sends it), because graphite-web takes
# seconds to format 10,000 points per series.
_SHORT = [("json", None), ("json", 100), ("json", 37), ("csv", None), ("raw", None)]
PLAIN_PLAN = {
    "1h": _SHORT, "odd": _SHORT, "now-1h": _SHORT, "rel-1h": _SHORT,
    "5h": [("json", None), ("json", 100), ("raw", None)],
    "2d": [("json", None), ("json", 100)],
    "now-2d": [("json", 100)],
    "31d": [("json", None), ("json", 100), ("raw", None)],
    "rel-6h": [("json", None), ("json", 100)],
    "rel-7d": [("json", 1000), ("json", 100)],
}

# (range, maxDataPoints) asked of every function target, in json.
FN_PLAN = [("1h", None), ("5h", 100), ("2d", None), ("rel-6h", 100)]


def plain_targets(corpus):
    """A glob per family, plus every tagged series by its full name."""
    fams = sorted({n.split(".")[0].split(";")[0] for n in corpus.names})
    out = []
    for f in fams:
        if f == "tagged":
            continue
        out.append((f, f + ".*"))
    out += [("deep", "deep.a.b.*"), ("deep", "deep.*.*.*.*"), ("deep", "deep.a.b.{c,e}"),
            ("mixed", "mixed.x.*"), ("glob", "{aligned,unaligned}.s[01]"), ("glob", "*.s?"),
            ("glob", "nosuch.*"), ("glob", "aligned.s0")]
    for name in sorted(corpus.tagged):
        out.append(("tagged", name))
    out.append(("tagged", "tagged.cpu"))
    return out


S, A, B, C = "fn.*", "fn.a", "fn.b", "fnc.count"
T = 'seriesByTag("name=tagged.cpu")'

TEMPLATES = {
    "absolute": ["absolute(fn.c)"],
    "add": ["add({S}, 2.5)"],
    "aggregate": ['aggregate({S}, "sum")', 'aggregate({S}, "average")', 'aggregate({S}, "max", 0.9)'],
    "aggregateLine": ['aggregateLine({S}, "avg")', 'aggregateLine({A}, "max", true)'],
    "aggregateSeriesLists": ['aggregateSeriesLists(fn.{a,b}, fn.{b,c}, "sum")'],
    "aggregateWithWildcards": ['aggregateWithWildcards({S}, "sum", 1)'],
    "alias": ['alias({A}, "x")', 'alias({S}, "all")'],
    "aliasByMetric": ["aliasByMetric({S})"],
    "aliasByNode": ["aliasByNode({S}, 1)", "aliasByNode({S}, -1)", "aliasByNode(deep.a.b.*, 0, 3)"],
    "aliasByTags": ['aliasByTags({T}, "dc")', 'aliasByTags({T}, "host", "name")'],
    "aliasQuery": [r'aliasQuery({A}, "fn\.a", "fn.b", "b is %d")'],
    "aliasSub": [r'aliasSub({S}, "fn\.(.*)", "x.\1")', r'aliasSub({A}, "(^.*$)", "\1 A")'],
    "alpha": ["alpha({A}, 0.5)"],
    "applyByNode": ['applyByNode({S}, 1, "scale(%, 2)")'],
    "areaBetween": ["areaBetween(fn.{a,c})"],
    "asPercent": ["asPercent({S})", "asPercent({S}, 100)", "asPercent({A}, {B})", "asPercent({S}, sumSeries({S}))"],
    "averageAbove": ["averageAbove({S}, 10)"],
    "averageBelow": ["averageBelow({S}, 10)"],
    "averageOutsidePercentile": ["averageOutsidePercentile({S}, 30)"],
    "averageSeries": ["averageSeries({S})", "averageSeries({A}, {B})"],
    "averageSeriesWithWildcards": ["averageSeriesWithWildcards({S}, 1)"],
    "avg": ["avg({S})"],
    "cactiStyle": ["cactiStyle({S})"],
    "changed": ["changed({A})"],
    "color": ['color({A}, "red")'],
    "compressPeriodicGaps": ["compressPeriodicGaps({B})", "compressPeriodicGaps(sparse.s60)"],
    "consolidateBy": ['consolidateBy({S}, "max")', 'consolidateBy({S}, "sum")'],
    "constantLine": ["constantLine(100)", "constantLine(1.5)"],
    "countSeries": ["countSeries({S})"],
    "cumulative": ["cumulative({S})"],
    "currentAbove": ["currentAbove({S}, 10)"],
    "currentBelow": ["currentBelow({S}, 10)"],
    "dashed": ["dashed({A})"],
    "delay": ["delay({S}, 3)"],
    "derivative": ["derivative({S})", "derivative({C})"],
    "diffSeries": ["diffSeries({S})"],
    "diffSeriesLists": ["diffSeriesLists({A}, {B})"],
    "divideSeries": ["divideSeries({S}, {A})", "divideSeries({B}, fn.c)"],
    "divideSeriesLists": ["divideSeriesLists(fn.{a,b}, fn.{b,c})"],
    "drawAsInfinite": ["drawAsInfinite({A})"],
    "exclude": ['exclude({S}, "b")'],
    "exp": ["exp(fn.c)"],
    "exponentialMovingAverage": ["exponentialMovingAverage({S}, 5)", 'exponentialMovingAverage({S}, "1min")'],
    "fallbackSeries": ["fallbackSeries(nosuch.*, {A})", "fallbackSeries({B}, {A})"],
    "filterSeries": ['filterSeries({S}, "max", ">", 20)'],
    "grep": ['grep({S}, "b")'],
    "group": ["group({A}, {B})"],
    "groupByNode": ['groupByNode({S}, 0, "sum")', "groupByNode({S}, 0)", 'groupByNode(deep.*.*.*, 2, "max")'],
    "groupByNodes": ['groupByNodes({S}, "sum", 0)', 'groupByNodes(deep.a.b.*, "sum", 0, 3)'],
    "groupByTags": ['groupByTags({T}, "sum", "dc")'],
    "highest": ['highest({S}, 2, "max")'],
    "highestAverage": ["highestAverage({S}, 2)"],
    "highestCurrent": ["highestCurrent({S}, 1)"],
    "highestMax": ["highestMax({S}, 1)"],
    "hitcount": ['hitcount({S}, "1min")', 'hitcount({S}, "10min", true)'],
    "holtWintersAberration": ["holtWintersAberration({A})"],
    "holtWintersConfidenceArea": ["holtWintersConfidenceArea({A})"],
    "holtWintersConfidenceBands": ["holtWintersConfidenceBands({A})"],
    "holtWintersForecast": ["holtWintersForecast({A})"],
    "identity": ['identity("x")'],
    "integral": ["integral({S})"],
    "integralByInterval": ['integralByInterval({S}, "10min")'],
    "interpolate": ["interpolate({B})"],
    "invert": ["invert({S})"],
    "isNonNull": ["isNonNull({S})"],
    "keepLastValue": ["keepLastValue({B})", "keepLastValue({B}, 1)"],
    "legendValue": ['legendValue({A}, "avg")'],
    "limit": ["limit({S}, 2)"],
    "lineWidth": ["lineWidth({A}, 2)"],
    "linearRegression": ["linearRegression({A})"],
    "log": ["log({A}, 10)"],
    "logit": ["logit({S})"],
    "lower": ["lower(fn.*, 1)"],
    "lowest": ['lowest({S}, 1, "average")'],
    "lowestAverage": ["lowestAverage({S}, 1)"],
    "lowestCurrent": ["lowestCurrent({S}, 1)"],
    "mapSeries": ['reduceSeries(mapSeries({S}, 0), "diffSeries", 1, "a", "b")'],
    "map": ['reduce(map({S}, 0), "sumSeries", 1, "a", "c")'],
    "maxSeries": ["maxSeries({S})"],
    "maximumAbove": ["maximumAbove({S}, 20)"],
    "maximumBelow": ["maximumBelow({S}, 20)"],
    "minMax": ["minMax({S})"],
    "minSeries": ["minSeries({S})"],
    "minimumAbove": ["minimumAbove({S}, -2)"],
    "minimumBelow": ["minimumBelow({S}, -2)"],
    "mostDeviant": ["mostDeviant({S}, 2)"],
    "movingAverage": ["movingAverage({S}, 5)", 'movingAverage({S}, "1min")', "movingAverage({B}, 6, 0.9)"],
    "movingMax": ["movingMax({S}, 5)"],
    "movingMedian": ["movingMedian({S}, 5)", 'movingMedian({B}, "2min")'],
    "movingMin": ["movingMin({S}, 5)"],
    "movingSum": ["movingSum({S}, 5)"],
    "movingWindow": ['movingWindow({S}, 5, "average")', 'movingWindow({B}, "1min", "max")'],
    "multiplySeries": ["multiplySeries({A}, fn.c)"],
    "multiplySeriesLists": ["multiplySeriesLists(fn.{a,b}, fn.{b,c})"],
    "multiplySeriesWithWildcards": ["multiplySeriesWithWildcards({S}, 1)"],
    "nPercentile": ["nPercentile({S}, 50)"],
    "nonNegativeDerivative": ["nonNegativeDerivative({C})", "nonNegativeDerivative({C}, 100)"],
    "offset": ["offset({S}, 10)"],
    "offsetToZero": ["offsetToZero({S})"],
    "pct": ["pct({S}, 100)"],
    "perSecond": ["perSecond({C})", "perSecond({C}, 100)"],
    "percentileOfSeries": ["percentileOfSeries({S}, 50)", "percentileOfSeries({S}, 50, true)"],
    "pow": ["pow({S}, 2)"],
    "powSeries": ["powSeries({A}, fn.c)"],
    "rangeOfSeries": ["rangeOfSeries({S})"],
    "reduceSeries": ['reduceSeries(mapSeries({S}, 0), "asPercent", 1, "a", "b")'],
    "reduce": ['reduce(mapSeries({S}, 0), "diffSeries", 1, "b", "a")'],
    "removeAbovePercentile": ["removeAbovePercentile({S}, 50)"],
    "removeAboveValue": ["removeAboveValue({S}, 20)"],
    "removeBelowPercentile": ["removeBelowPercentile({S}, 50)"],
    "removeBelowValue": ["removeBelowValue({S}, 20)"],
    "removeBetweenPercentile": ["removeBetweenPercentile({S}, 30)"],
    "removeEmptySeries": ["removeEmptySeries({S})", "removeEmptySeries(sparse.*)", "removeEmptySeries(old.*, 0.5)"],
    "round": ["round({S})", "round({B}, 1)"],
    "scale": ["scale({S}, 2.5)", "scale({A}, -1)"],
    "scaleToSeconds": ["scaleToSeconds({S}, 1)"],
    "secondYAxis": ["secondYAxis({A})"],
    "seriesByTag": ['seriesByTag("name=tagged.cpu")', 'seriesByTag("dc=eu")',
                    'seriesByTag("name=~tagged.*", "dc!=us")', 'seriesByTag("host=~web.*", "dc!=~e.*")'],
    "setXFilesFactor": ["setXFilesFactor({S}, 0.5)"],
    "sigmoid": ["sigmoid({S})"],
    "sin": ['sin("s")'],
    "sinFunction": ['sinFunction("s", 2, 30)'],
    "smartSummarize": ['smartSummarize({S}, "1h", "sum")', 'smartSummarize({S}, "10min", "avg")'],
    "sortBy": ['sortBy({S}, "max")', 'sortBy({S}, "average", true)'],
    "sortByMaxima": ["sortByMaxima({S})"],
    "sortByMinima": ["sortByMinima({S})"],
    "sortByName": ["sortByName({S})", "sortByName({S}, true, true)"],
    "sortByTotal": ["sortByTotal({S})"],
    "squareRoot": ["squareRoot({S})"],
    "stacked": ["stacked({S})"],
    "stddevSeries": ["stddevSeries({S})"],
    "stdev": ["stdev({S}, 5)"],
    "substr": ["substr(deep.a.b.*, 1, 3)"],
    "sum": ["sum({S})"],
    "sumSeries": ["sumSeries({S})", "sumSeries({A}, {B})", "sumSeries(sparse.*)"],
    "sumSeriesLists": ["sumSeriesLists(fn.{a,b}, fn.{b,c})"],
    "sumSeriesWithWildcards": ["sumSeriesWithWildcards({S}, 1)"],
    "summarize": ['summarize({S}, "1h")', 'summarize({S}, "10min", "max")', 'summarize({S}, "1h", "sum", true)',
                  'summarize({B}, "5min", "avg")'],
    "threshold": ["threshold(50)"],
    "time": ['time("t")'],
    "timeFunction": ['timeFunction("t", 30)'],
    "timeShift": ['timeShift({S}, "1h")', 'timeShift({S}, "-30min")', 'timeShift({A}, "+5min", false)'],
    "timeSlice": ['timeSlice({S}, "-50min", "-20min")'],
    "timeStack": ['timeStack({A}, "10min", 0, 3)'],
    "transformNull": ["transformNull({B})", "transformNull({B}, -1)", "transformNull({B}, 0, {A})"],
    "unique": ["unique({S}, {A})"],
    "upper": ["upper({S})"],
    "useSeriesAbove": ['useSeriesAbove({S}, 40, "a", "b")'],
    "weightedAverage": ["weightedAverage(fn.{a,b}, fn.{b,c}, 1)"],
    "xFilesFactor": ["xFilesFactor({S}, 0.5)"],
}

# Mixed steps: every combining function (graphite-web's "Combine" group)
# over 10 s series and a 60 s one ({M}, a summarize of fn.c; {MA} the same
# named fn.m so that it groups with fn.*). Appended to TEMPLATES.
# groupByTags has none: a summarize keeps no tags to group it with others.
M = 'summarize(fn.c, "1min", "sum")'
MA = 'aliasSub(summarize(fn.c, "1min", "sum"), "^.*$", "fn.m")'
MIXED = {
    "aggregate": ['aggregate(group({A}, {M}), "sum")', 'aggregate(group({M}, {B}), "max")'],
    "aggregateSeriesLists": ['aggregateSeriesLists(fn.{a,b}, group({M}, fn.c), "sum")'],
    "sumSeries": ["sumSeries({A}, {M})"],
    "sumSeriesLists": ["sumSeriesLists({A}, {M})"],
    "sumSeriesWithWildcards": ["sumSeriesWithWildcards(group({S}, {MA}), 1)"],
    "averageSeriesWithWildcards": ["averageSeriesWithWildcards(group({S}, {MA}), 1)"],
    "multiplySeriesWithWildcards": ["multiplySeriesWithWildcards(group({S}, {MA}), 1)"],
    "aggregateWithWildcards": ['aggregateWithWildcards(group({S}, {MA}), "max", 1)'],
    "diffSeries": ["diffSeries({A}, {M})"],
    "diffSeriesLists": ["diffSeriesLists({A}, {M})"],
    "averageSeries": ["averageSeries({M}, {B})"],
    "stddevSeries": ["stddevSeries({A}, {M})"],
    "minSeries": ["minSeries({A}, {M})"],
    "maxSeries": ["maxSeries({M}, {A})"],
    "rangeOfSeries": ["rangeOfSeries({A}, {M})"],
    "percentileOfSeries": ["percentileOfSeries(group({A}, {B}, {M}), 50)"],
    "asPercent": ["asPercent({A}, {M})", "asPercent({M}, {A})", "asPercent({S}, {M})", "asPercent(group({A}, {M}))",
                  "asPercent(group({A}, {M}), 50)", "asPercent(group({A}, {M}), group({B}, fn.c))",
                  "asPercent(group({S}, {MA}), None, 0)"],
    "divideSeriesLists": ["divideSeriesLists({A}, {M})"],
    "divideSeries": ["divideSeries({A}, {M})", "divideSeries({M}, {B})"],
    "multiplySeries": ["multiplySeries({A}, {M})"],
    "multiplySeriesLists": ["multiplySeriesLists({A}, {M})"],
    "weightedAverage": ['weightedAverage({A}, aliasSub({M}, "^.*$", "fn.a"), 1)'],
    "powSeries": ["powSeries({A}, {M})"],
    "countSeries": ["countSeries({A}, {M})"],
    "group": ["group({A}, {M})"],
    # graphite-web cannot answer a mapSeries on its own (a list of lists)
    "mapSeries": ['reduceSeries(mapSeries(group(aliasSub({A}, "^.*$", "fn.x.a"), aliasSub({M}, "^.*$", "fn.x.m")), 1), '
                  '"diffSeries", 2, "m", "a")'],
    "reduceSeries": ['reduceSeries(mapSeries(group(aliasSub({A}, "^.*$", "fn.x.a"), aliasSub({M}, "^.*$", "fn.x.m")), 1), '
                     '"asPercent", 2, "a", "m")'],
    "applyByNode": ["applyByNode({S}, 0, \"sumSeries(%.a, summarize(fn.c, '1min', 'sum'))\")"],
    "groupByNode": ['groupByNode(group({S}, {MA}), 0, "sum")'],
    "groupByNodes": ['groupByNodes(group({S}, {MA}), "average", 0)'],
}
for _name, _targets in MIXED.items():
    TEMPLATES[_name] = TEMPLATES.get(_name, []) + _targets

# Functions whose answer cannot be the same twice (random) or that need a
# store Graphite's defaults do not have: compared never, reported as such.
NOT_COMPARED = {
    "randomWalk": "random values",
    "randomWalkFunction": "random values",
    "events": "needs graphite-web's events database",
    "verticalLine": "draws on a graph; answers no data in json",
}


def function_targets(name):
    out = []
    for t in TEMPLATES.get(name, []):
        t = t.replace("{MA}", MA).replace("{M}", M)
        out.append(t.replace("{S}", S).replace("{A}", A).replace("{B}", B).replace("{C}", C).replace("{T}", T))
    return out


FIND_QUERIES = [
    ("*", {}), ("*", {"format": "completer"}), ("*", {"format": "json"}), ("*", {"format": "nodelist"}),
    ("aligned.*", {}), ("*.*", {}), ("a*", {"wildcards": "1"}), ("{aligned,sparse}.*", {}),
    ("mixed.*", {}), ("mixed.x.*", {}), ("deep.a.b.*", {"leavesOnly": "1"}), ("nosuch.*", {}),
    ("tagged.*", {}), ("*.s[0-1]", {}), ("deep.*.*.*.*", {}), ("aligned.s0", {}),
    ("fn.*", {"format": "completer"}), ("tagged*", {}), ("_tagged.*", {}),
]

EXPAND_QUERIES = [
    {"query": "aligned.*"}, {"query": "*"}, {"query": ["fn.*", "deep.a.*"]},
    {"query": "*.*", "leavesOnly": "1"}, {"query": ["fn.*", "aligned.s[01]"], "groupByExpr": "1"},
    {"query": "mixed.*"}, {"query": "nosuch"},
]
