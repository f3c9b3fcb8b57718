package statsd

import (
	"math"
	"slices"
	"strconv"
	"strings"
)

// timerStat is one derived series of a timer: the index of its name
// suffix in timerNames and its value.
type timerStat struct {
	name  int
	value float64
}

// The name suffixes of the statistics of every timer, after the five of
// each percentile.
var fixedTimerNames = [...]string{"std", "upper", "lower", "count", "count_ps", "sum", "sum_squares", "mean", "median"}

const (
	statStd = iota
	statUpper
	statLower
	statCount
	statCountPS
	statSum
	statSumSquares
	statMean
	statMedian
)

// timerNames returns the name suffixes of a timer's statistics for the
// percentiles pcts: the five of each percentile, then fixedTimerNames.
// summarise refers to them by index.
func timerNames(pcts []float64) []string {
	var names []string
	for _, p := range pcts {
		n := percentileNames(p)
		names = append(names, n[:]...)
	}
	return append(names, fixedTimerNames[:]...)
}

// percentileNames returns the five suffixes reported for percentile
// pct: count_P, mean_P, upper_P (lower_topP for a negative pct), sum_P,
// sum_squares_P, where P is pct with "." written "_" and "-" written
// "top", as the reference StatsD names them (90 → "90", 99.9 → "99_9",
// -10 → "top10").
func percentileNames(pct float64) [5]string {
	p := strconv.FormatFloat(pct, 'f', -1, 64)
	p = strings.Replace(p, ".", "_", 1)
	p = strings.Replace(p, "-", "top", 1)
	bound := "upper_"
	if pct < 0 {
		bound = "lower_"
	}
	return [5]string{"count_" + p, "mean_" + p, bound + p, "sum_" + p, "sum_squares_" + p}
}

// summarise computes the statistics of one flush interval of a timer
// the way the reference StatsD does (lib/process_metrics.js), appending
// them to out in its order: for each percentile count_P, mean_P,
// upper_P, sum_P, sum_squares_P, then std, upper, lower, count,
// count_ps, sum, sum_squares, mean, median. It sorts values.
//
// With the values sorted, n of them, and k = round(|pct|/100 × n):
//
//	upper_P  = values[k-1]            the largest of the lowest k
//	mean_P   = (values[0] + … + values[k-1]) / k
//	sum_P    = values[0] + … + values[k-1]
//	lower_topP (pct < 0) = values[n-k] and mean, sum over the top k
//	median   = values[n/2] for odd n, the mean of the middle two for even n
//	std      = √(Σ(v - mean)² / n)    the population standard deviation
//	count    = Σ 1/sampleRate over the samples; count_ps = count / interval
//
// A percentile with k = 0 is left out. With a single value every
// percentile reports that value and k = 1. Where the reference reads
// before the start of its cumulative sums (a top percentile covering
// all values) and reports NaN, this reports the sum of all values.
//
// An interval without values reports only count and count_ps, both 0.
func summarise(out []timerStat, pcts []float64, values []float64, count, intervalSeconds float64) []timerStat {
	n := len(values)
	fixed := 5 * len(pcts) // index of the first fixed statistic
	if n == 0 {
		return append(out, timerStat{fixed + statCount, 0}, timerStat{fixed + statCountPS, 0})
	}
	slices.Sort(values)
	lo, hi := values[0], values[n-1]
	// cum(i) and cumSq(i) are the sums of the first i values and of
	// their squares; sums accumulate in the same order as the reference
	// so results agree to the last bit.
	cum := func(i int) (float64, float64) {
		var s, sq float64
		for _, v := range values[:i] {
			s += v
			sq += v * v
		}
		return s, sq
	}
	for i, pct := range pcts {
		k := n
		bound, pSum, pSumSq, mean := hi, lo, lo*lo, lo
		if n > 1 {
			k = int(math.Round(math.Abs(pct) / 100 * float64(n)))
			if k == 0 {
				continue
			}
			if pct > 0 {
				bound = values[k-1]
				pSum, pSumSq = cum(k)
			} else {
				bound = values[n-k]
				allS, allSq := cum(n)
				restS, restSq := cum(n - k)
				pSum, pSumSq = allS-restS, allSq-restSq
			}
			mean = pSum / float64(k)
		}
		out = append(out,
			timerStat{5 * i, float64(k)},
			timerStat{5*i + 1, mean},
			timerStat{5*i + 2, bound},
			timerStat{5*i + 3, pSum},
			timerStat{5*i + 4, pSumSq})
	}
	sum, sumSq := cum(n)
	mean := sum / float64(n)
	var diffs float64
	for _, v := range values {
		diffs += (v - mean) * (v - mean)
	}
	mid := n / 2
	median := values[mid]
	if n%2 == 0 {
		median = (values[mid-1] + values[mid]) / 2
	}
	return append(out,
		timerStat{fixed + statStd, math.Sqrt(diffs / float64(n))},
		timerStat{fixed + statUpper, hi},
		timerStat{fixed + statLower, lo},
		timerStat{fixed + statCount, count},
		timerStat{fixed + statCountPS, count / intervalSeconds},
		timerStat{fixed + statSum, sum},
		timerStat{fixed + statSumSquares, sumSq},
		timerStat{fixed + statMean, mean},
		timerStat{fixed + statMedian, median})
}
