package render

import (
	"math"
	"strconv"
)

// This file holds the Calculate functions: moving windows, exponential
// moving average, percentiles, standard deviation, linear regression and
// Holt-Winters forecasting. Those that look back re-evaluate their first
// argument over a range extended by the window, as graphite-web does.

// windowPreview returns the seconds a window reaches back: the interval,
// or the count times the largest step of list.
func windowPreview(w value, list []*series) (int64, error) {
	if w.kind == valString {
		sec, err := intervalSeconds(w.str)
		if err != nil {
			return 0, err
		}
		if max(sec, -sec) > maxLookBack {
			return 0, inputErrorf("windowSize %q reaches back more than ten years", w.str)
		}
		return max(sec, -sec), nil
	}
	if w.num < 0 {
		return 0, inputErrorf("windowSize must not be negative")
	}
	var maxStep int64
	for _, s := range list {
		maxStep = max(maxStep, s.step)
	}
	if w.num > float64(maxLookBack/max(maxStep, 1)) {
		return 0, inputErrorf("windowSize %s reaches back more than ten years", w.pyStr())
	}
	return maxStep * int64(w.num), nil
}

// maxLookBack bounds how far back a window or bootstrap may read, in
// seconds: ten years.
const maxLookBack = 10 * 365 * 86400

// windowName spells f(name,"5min") for an interval and f(name,5) for a count.
func windowName(fn, name string, w value) string {
	if w.kind == valString {
		return fn + "(" + name + `,"` + w.str + `")`
	}
	return fn + "(" + name + "," + w.pyStr() + ")"
}

// movingWindow is graphite-web's movingWindow: each point aggregates the
// windowPoints values before it (its own excluded... as graphite-web
// indexes, series[i-w:i] of the preview list), null when the non-null
// share is below xFilesFactor.
func (ev *evaluator) movingWindow(a *args, fn string) ([]*series, error) {
	orig := a.seriesList("seriesList")
	if len(orig) == 0 {
		return nil, nil
	}
	agg, fn, ok := lookupAgg(fn)
	if !ok {
		return nil, inputErrorf("Unsupported aggregation function: %s", fn)
	}
	w := a.vals["windowSize"]
	preview, err := windowPreview(w, orig)
	if err != nil {
		return nil, err
	}
	list, err := ev.withRange(ev.from-preview, ev.until).evalTarget(a.vals["seriesList"].expr)
	if err != nil {
		return nil, err
	}
	tagName := "moving" + capitalize(fn)
	var out []*series
	for _, s := range list {
		points := int(w.num)
		if w.kind == valString {
			points = int(preview / s.step)
		}
		xff := s.xff
		if a.has("xFilesFactor") {
			xff = a.number("xFilesFactor", 0)
		}
		var vals []float64
		for i := points + 1; i <= len(s.values); i++ {
			window := s.values[i-points : i]
			nn := countNonNull(window)
			if nn > 0 && points > 0 && float64(nn)/float64(points) >= xff {
				vals = append(vals, agg(window))
			} else {
				vals = append(vals, nan)
			}
		}
		c := derived(s, windowName(tagName, s.name, w), tagName, w.pyStr(), vals)
		c.start = s.start + preview
		out = append(out, c)
	}
	return out, ev.req.charge(len(out) * len(list[0].values))
}

// capitalize is Python's str.capitalize: first letter upper, rest lower.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	b := []byte(s)
	for i := range b {
		if b[i] >= 'A' && b[i] <= 'Z' {
			b[i] += 'a' - 'A'
		}
	}
	if b[0] >= 'a' && b[0] <= 'z' {
		b[0] -= 'a' - 'A'
	}
	return string(b)
}

func movingFunc(fn string) func(*evaluator, *args) ([]*series, error) {
	return func(ev *evaluator, a *args) ([]*series, error) { return ev.movingWindow(a, fn) }
}

func movingWindowCall(ev *evaluator, a *args) ([]*series, error) {
	return ev.movingWindow(a, a.str("func", "average"))
}

func exponentialMovingAverage(ev *evaluator, a *args) ([]*series, error) {
	orig := a.seriesList("seriesList")
	if len(orig) == 0 {
		return nil, nil
	}
	w := a.vals["windowSize"]
	preview, err := windowPreview(w, orig)
	if err != nil {
		return nil, err
	}
	var constant float64
	if w.kind == valString {
		constant = 2 / float64(preview+1)
	} else {
		constant = 2 / (float64(int(w.num)) + 1)
	}
	list, err := ev.withRange(ev.from-preview, ev.until).evalTarget(a.vals["seriesList"].expr)
	if err != nil {
		return nil, err
	}
	var out []*series
	for _, s := range list {
		points := int(w.num)
		if w.kind == valString {
			points = int(preview / s.step)
		}
		points = min(points, len(s.values))
		ema := aggAverage(s.values[:points])
		if isNull(ema) || ema == 0 { // safeAvg(...) or 0
			ema = 0
		}
		firstInt := ema == 0 // safeAvg(...) or 0 gave the Python int 0
		vals := []float64{pyRound(ema, 6)}
		for _, v := range s.values[points:] {
			if isNull(v) {
				vals = append(vals, nan)
				continue
			}
			ema = constant*v + (1-constant)*ema
			vals = append(vals, pyRound(ema, 6))
		}
		c := derived(s, windowName("exponentialMovingAverage", s.name, w), "exponentialMovingAverage", w.pyStr(), vals)
		c.start = s.start + preview
		if firstInt {
			bits := make([]bool, len(vals))
			bits[0] = true
			c.markInts(bits)
		}
		out = append(out, c)
	}
	return out, nil
}

func nPercentile(ev *evaluator, a *args) ([]*series, error) {
	n := a.number("n", 0)
	if n == 0 {
		return nil, inputErrorf("The requested percent is required to be greater than 0")
	}
	var out []*series
	for _, s := range a.seriesList("seriesList") {
		if countNonNull(s.values) == 0 {
			continue
		}
		p := percentile(s.values, n, false)
		count := int((s.end - s.start) / s.step)
		vals := make([]float64, max(count, 0))
		for i := range vals {
			vals[i] = p
		}
		c := s.copyWith("nPercentile("+s.name+", "+pyG(n)+")", vals)
		c.tags = s.tags.with("nPercentile", a.vals["n"].pyStr())
		out = append(out, c)
	}
	return out, nil
}

// stdevFunc is graphite-web's stdev: a running sum and sum of squares
// over the window. graphite-web squares with ** (glibc's pow, within 0.52
// ULP, not always correctly rounded) where this uses x*x (correctly
// rounded): about one square in 1600, whose exact value lies within
// 0.005 ULP of a rounding midpoint, differs in its last bit, and with it
// the deviations that follow while it stays in the running sums.
func stdevFunc(ev *evaluator, a *args) ([]*series, error) {
	points := int(a.number("points", 0))
	tol := a.number("windowTolerance", 0.1)
	var out []*series
	for _, s := range a.seriesList("seriesList") {
		vals := make([]float64, 0, len(s.values))
		valid := 0
		sum, sumSq := 0.0, 0.0
		for i, v := range s.values {
			if i >= points {
				if d := s.values[i-points]; !isNull(d) {
					valid--
					sum -= d
					sumSq -= d * d
				}
			}
			if !isNull(v) {
				valid++
				sum += v
				sumSq += v * v
			}
			if valid > 0 && float64(valid)/float64(points) >= tol {
				x := float64(valid)*sumSq - sum*sum
				if x < 0 { // math.sqrt raises ValueError: None
					vals = append(vals, nan)
				} else {
					vals = append(vals, math.Sqrt(x)/float64(valid))
				}
			} else {
				vals = append(vals, nan)
			}
		}
		c := s.copyWith("stdev("+s.name+","+strconv.Itoa(points)+")", vals)
		c.tags = s.tags.with("stdev", a.vals["points"].pyStr())
		out = append(out, c)
	}
	return out, nil
}

// linearFit is graphite-web's _linearRegressionAnalysis: the least-squares
// line through the non-null points as value = offset + t*factor.
func linearFit(s *series) (factor, offset float64, ok bool) {
	var n, sumI, sumV, sumII, sumIV float64
	for i, v := range s.values {
		if isNull(v) {
			continue
		}
		fi := float64(i)
		n++
		sumI += fi
		sumV += v
		sumII += fi * fi
		sumIV += fi * v
	}
	den := n*sumII - sumI*sumI
	if den == 0 {
		return 0, 0, false
	}
	factor = (n*sumIV - sumI*sumV) / den / float64(s.step)
	offset = (sumII*sumV-sumIV*sumI)/den - factor*float64(s.start)
	return factor, offset, true
}

func linearRegression(ev *evaluator, a *args) ([]*series, error) {
	from, until := ev.from, ev.until
	for _, p := range []struct {
		name string
		t    *int64
	}{{"startSourceAt", &from}, {"endSourceAt", &until}} {
		v, ok := a.vals[p.name]
		if !ok || v.kind == valNone {
			continue
		}
		spec := v.pyStr()
		t, err := ParseTime(spec, ev.req.now, ev.req.location())
		if err != nil {
			return nil, inputErrorf("linearRegression: invalid %s %q: %v", p.name, spec, err)
		}
		*p.t = t.Unix()
	}
	if until <= from || until-from > maxLookBack {
		return nil, inputErrorf("linearRegression: the source range must be non-empty and at most ten years")
	}
	source, err := ev.withRange(from, until).evalTarget(a.vals["seriesList"].expr)
	if err != nil {
		return nil, err
	}
	fs, us := strconv.FormatInt(from, 10), strconv.FormatInt(until, 10)
	var out []*series
	for i, s := range a.seriesList("seriesList") {
		if i >= len(source) {
			break
		}
		factor, offset, ok := linearFit(source[i])
		if !ok {
			continue
		}
		vals := make([]float64, len(s.values))
		for j := range vals {
			vals[j] = offset + float64(s.start+int64(j)*s.step)*factor
		}
		c := derived(s, "linearRegression("+s.name+", "+fs+", "+us+")", "linearRegressions", fs+", "+us, vals)
		out = append(out, c)
	}
	return out, nil
}

// holtWinters is graphite-web's holtWintersAnalysis: predictions and
// deviations of a triple-exponential-smoothing model with alpha = gamma =
// 0.1, beta = 0.0035 and one season per seasonality.
func holtWinters(vals []float64, step, seasonality int64) (predictions, deviations []float64, err error) {
	const alpha, gamma, beta = 0.1, 0.1, 0.0035
	seasonLen := int(seasonality / step)
	if seasonLen < 2 && countNonNull(vals) > 0 {
		// graphite-web reads the season being computed and fails
		return nil, nil, inputErrorf("seasonality must span at least two steps of %ds", step)
	}
	var intercepts, slopes, seasonals []float64
	interceptNull := []bool{}
	lastSeasonal := func(i int) float64 {
		if j := i - seasonLen; j >= 0 {
			return seasonals[j]
		}
		return 0
	}
	lastDeviation := func(i int) float64 {
		if j := i - seasonLen; j >= 0 {
			return deviations[j]
		}
		return 0
	}
	nextPred := nan
	for i, actual := range vals {
		if isNull(actual) {
			intercepts = append(intercepts, 0)
			interceptNull = append(interceptNull, true)
			slopes = append(slopes, 0)
			seasonals = append(seasonals, 0)
			predictions = append(predictions, nextPred)
			deviations = append(deviations, 0)
			nextPred = nan
			continue
		}
		var lastIntercept, lastSlope, prediction float64
		if i == 0 {
			lastIntercept, lastSlope, prediction = actual, 0, actual
		} else {
			lastIntercept, lastSlope = intercepts[len(intercepts)-1], slopes[len(slopes)-1]
			if interceptNull[len(interceptNull)-1] {
				lastIntercept = actual
			}
			prediction = nextPred
		}
		ls := lastSeasonal(i)
		nextLS := lastSeasonal(i + 1)
		lsDev := lastDeviation(i)
		intercept := alpha*(actual-ls) + (1-alpha)*(lastIntercept+lastSlope)
		slope := beta*(intercept-lastIntercept) + (1-beta)*lastSlope
		seasonal := gamma*(actual-intercept) + (1-gamma)*ls
		nextPred = intercept + slope + nextLS
		p := prediction
		if isNull(p) {
			p = 0
		}
		deviation := gamma*math.Abs(actual-p) + (1-gamma)*lsDev
		intercepts = append(intercepts, intercept)
		interceptNull = append(interceptNull, false)
		slopes = append(slopes, slope)
		seasonals = append(seasonals, seasonal)
		predictions = append(predictions, prediction)
		deviations = append(deviations, deviation)
	}
	return predictions, deviations, nil
}

// hwPreview evaluates the first argument with bootstrapInterval of history
// and returns the preview list, the preview seconds and the seasonality.
func (ev *evaluator) hwPreview(a *args) ([]*series, int64, int64, error) {
	boot, err := intervalSeconds(a.str("bootstrapInterval", "7d"))
	if err != nil {
		return nil, 0, 0, err
	}
	season, err := intervalSeconds(a.str("seasonality", "1d"))
	if err != nil {
		return nil, 0, 0, err
	}
	if season <= 0 || boot < 0 || boot > maxLookBack {
		return nil, 0, 0, inputErrorf("seasonality must be positive and bootstrapInterval at most ten years")
	}
	list, err := ev.withRange(ev.from-boot, ev.until).evalTarget(a.vals["seriesList"].expr)
	return list, boot, season, err
}

// tail drops the first k values (all when there are fewer).
func tail(vs []float64, k int64) []float64 {
	return vs[min(max(k, 0), int64(len(vs))):]
}

func holtWintersForecast(ev *evaluator, a *args) ([]*series, error) {
	list, boot, season, err := ev.hwPreview(a)
	if err != nil {
		return nil, err
	}
	var out []*series
	for _, s := range list {
		pred, _, err := holtWinters(s.values, s.step, season)
		if err != nil {
			return nil, err
		}
		name := "holtWintersForecast(" + s.name + ")"
		c := s.copyWith(name, tail(pred, boot/s.step))
		c.pathExpr = name
		c.tags = s.tags.with("holtWintersForecast", "1").with("holtWintersDeviation", "1")
		c.start = s.start + boot
		out = append(out, c)
	}
	return out, nil
}

// hwBands returns, per preview series, its lower and upper bands.
func (ev *evaluator) hwBands(a *args) ([]*series, error) {
	list, boot, season, err := ev.hwPreview(a)
	if err != nil {
		return nil, err
	}
	delta := a.number("delta", 3)
	var out []*series
	for _, s := range list {
		pred, dev, err := holtWinters(s.values, s.step, season)
		if err != nil {
			return nil, err
		}
		k := boot / s.step
		f, d := tail(pred, k), tail(dev, k)
		upper, lower := make([]float64, len(f)), make([]float64, len(f))
		for i := range f {
			if isNull(f[i]) {
				upper[i], lower[i] = nan, nan
				continue
			}
			upper[i], lower[i] = f[i]+delta*d[i], f[i]-delta*d[i]
		}
		// graphite-web gives both bands the same tag dictionary
		tags := s.tags.with("holtWintersForecast", "1").with("holtWintersDeviation", "1").
			with("holtWintersConfidenceUpper", "1").with("holtWintersConfidenceLower", "1")
		mk := func(name string, vals []float64) *series {
			c := s.copyWith(name, vals)
			c.tags, c.start = tags, s.start+boot
			return c
		}
		out = append(out, mk("holtWintersConfidenceLower("+s.name+")", lower), mk("holtWintersConfidenceUpper("+s.name+")", upper))
	}
	return out, nil
}

func holtWintersConfidenceBands(ev *evaluator, a *args) ([]*series, error) { return ev.hwBands(a) }

func holtWintersConfidenceArea(ev *evaluator, a *args) ([]*series, error) {
	bands, err := ev.hwBands(a)
	if err != nil {
		return nil, err
	}
	if len(bands) != 2 {
		return nil, inputErrorf("areaBetween series argument must reference *exactly* 2 series")
	}
	upper := bands[1]
	name := "holtWintersConfidenceArea(" + upper.pathExpr + ")"
	tags := upper.tags.with("holtWintersConfidenceArea", "1")
	var out []*series
	for _, b := range bands {
		c := *b
		c.name, c.pathExpr, c.tags = name, name, tags
		out = append(out, &c)
	}
	return out, nil
}

func holtWintersAberration(ev *evaluator, a *args) ([]*series, error) {
	bands, err := ev.hwBands(a)
	if err != nil {
		return nil, err
	}
	byName := map[string]*series{}
	for _, b := range bands {
		byName[b.name] = b
	}
	var out []*series
	for _, s := range a.seriesList("seriesList") {
		lower, upper := byName["holtWintersConfidenceLower("+s.name+")"], byName["holtWintersConfidenceUpper("+s.name+")"]
		if lower == nil || upper == nil {
			return nil, inputErrorf("holtWintersAberration: no bands for %q", s.name)
		}
		vals := make([]float64, len(s.values))
		at := func(l []float64, i int) float64 {
			if i < len(l) {
				return l[i]
			}
			return nan
		}
		for i, v := range s.values {
			u, l := at(upper.values, i), at(lower.values, i)
			switch {
			case isNull(v):
				vals[i] = 0
			case !isNull(u) && v > u:
				vals[i] = v - u
			case !isNull(l) && v < l:
				vals[i] = v - l
			default:
				vals[i] = 0
			}
		}
		name := "holtWintersAberration(" + s.name + ")"
		out = append(out, derived(s, name, "holtWintersAberration", "1", vals))
	}
	return out, nil
}
