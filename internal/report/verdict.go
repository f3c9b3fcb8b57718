package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pgts/pgts/internal/bench"
)

// The verdict: every comparison a results directory allows, stated as one
// sentence with its ratio, the spread of that ratio over the repeats and
// the base it is relative to. The comparisons are the ones the tables make:
//
//	load     each store against the first store, for the same loader and
//	         workers ("into pgts … 1.05× a plain table"); each loader of the
//	         first store against that store's first loader ("2.19×
//	         psql-copy"); each store's rate at the end of its runs against
//	         its rate at the start (the loading study's question)
//	insert   each step's ips (qps for a q step) of every source against the
//	         first insert source's
//	events   inserts/s of each store against the first store's; each
//	         store's end/start
//	versus   pgts serve against VictoriaMetrics at each series count and
//	         rate: acknowledged points/s, CPU per point, RSS per series
//
// A repeat's ratio pairs the runs of the same repeat number (runs are
// interleaved, so they ran next to each other); the ratio stated is the
// median of the per-repeat ratios (of the medians, as the tables show it,
// when fewer than two repeats pair up), and the spread is the lowest and
// highest per-repeat ratio. Noisy marks a spread larger than the difference the
// ratio claims (|ratio - 1|): the repeats do not agree on the direction.

// Verdict is one comparison.
type Verdict struct {
	Source   string    // the results' label
	Subject  string    // what is measured, e.g. "pgts-binary with 2 workers"
	Base     string    // what it is relative to, e.g. "psql-copy"
	Measure  string    // the figure compared, e.g. "rows/s"
	Ratio    float64   // Subject / Base: the median of Repeats, else of the medians
	Repeats  []float64 // the per-repeat ratios (one per paired repeat)
	Sentence string
}

// Spread returns the lowest and highest per-repeat ratio; both are Ratio
// without repeats.
func (v Verdict) Spread() (lo, hi float64) {
	if len(v.Repeats) == 0 {
		return v.Ratio, v.Ratio
	}
	return slices.Min(v.Repeats), slices.Max(v.Repeats)
}

// Noisy reports whether the spread over repeats is larger than the
// difference the ratio states. One repeat has no spread and is not noisy
// (the sentence says it was one run).
func (v Verdict) Noisy() bool {
	if len(v.Repeats) < 2 {
		return false
	}
	lo, hi := v.Spread()
	return hi-lo > math.Abs(v.Ratio-1)
}

// spreadText is the parenthesis of a sentence: "(repeats 2.05–2.31)" or
// "(one run)".
func (v Verdict) spreadText() string {
	if len(v.Repeats) < 2 {
		return "(one run)"
	}
	lo, hi := v.Spread()
	return fmt.Sprintf("(repeats %.2f–%.2f)", lo, hi)
}

// Verdicts lists the comparisons of every source, in the order of the
// sources. It only reads the values it is given.
func Verdicts(srcs []Source) []Verdict {
	var out []Verdict
	var inserts []Source
	for _, src := range srcs {
		if src.Load != nil {
			out = append(out, loadVerdicts(src.Label, *src.Load)...)
		}
		if src.Insert != nil {
			inserts = append(inserts, src)
		}
	}
	out = append(out, insertVerdicts(inserts)...)
	var events []Source
	for _, src := range srcs {
		if src.Events != nil {
			events = append(events, src)
		}
	}
	out = append(out, eventsVerdicts(events)...)
	for _, src := range srcs {
		if src.Versus != nil {
			out = append(out, versusVerdicts(src.Label, src.Versus.Result)...)
		}
	}
	return out
}

// versusVerdicts compares pgts serve with VictoriaMetrics at each series
// count and offered rate: a repeat's ratio pairs the two systems' runs of
// that repeat.
func versusVerdicts(label string, res bench.VersusResult) []Verdict {
	type key struct {
		series int
		rate   float64
	}
	type pair struct{ p, v *bench.VersusRun }
	var keys []key
	byRepeat := map[key]map[int]*pair{}
	for i := range res.Runs {
		r := &res.Runs[i]
		k := key{r.Series, r.Rate}
		if byRepeat[k] == nil {
			byRepeat[k] = map[int]*pair{}
			keys = append(keys, k)
		}
		pr := byRepeat[k][r.Repeat]
		if pr == nil {
			pr = &pair{}
			byRepeat[k][r.Repeat] = pr
		}
		if r.System == bench.SystemPgts {
			pr.p = r
		} else {
			pr.v = r
		}
	}
	cond := ""
	if res.Contention {
		cond = " with one core kept busy"
	}
	var out []Verdict
	for _, k := range keys {
		reps := make([]int, 0, len(byRepeat[k]))
		for rep := range byRepeat[k] {
			reps = append(reps, rep)
		}
		slices.Sort(reps)
		ratios := func(f func(bench.VersusRun) float64) []float64 {
			var rs []float64
			for _, rep := range reps {
				pr := byRepeat[k][rep]
				if pr.p == nil || pr.v == nil || f(*pr.v) == 0 {
					continue
				}
				rs = append(rs, f(*pr.p)/f(*pr.v))
			}
			return rs
		}
		at := fmt.Sprintf("At %s series and %s points/s offered%s", group(float64(k.series)), group(k.rate), cond)
		mk := func(measure string, f func(bench.VersusRun) float64, sentence func(Verdict) string) {
			rs := ratios(f)
			if len(rs) == 0 {
				return
			}
			v := Verdict{Source: label, Subject: "pgts serve", Base: "VictoriaMetrics", Measure: measure, Ratio: bench.Median(rs)}
			if len(rs) > 1 {
				v.Repeats = rs
			}
			v.Sentence = sentence(v)
			out = append(out, v)
		}
		mk("acked points/s", func(r bench.VersusRun) float64 { return r.AckedRate }, func(v Verdict) string {
			return fmt.Sprintf("%s, pgts serve acknowledged %s the points/s of VictoriaMetrics %s.", at, times(v.Ratio), v.spreadText())
		})
		mk("CPU µs/point", bench.VersusRun.CPUPerPoint, func(v Verdict) string {
			return fmt.Sprintf("%s, pgts serve (with its PostgreSQL) used %s the CPU per point of VictoriaMetrics %s.", at, times(v.Ratio), v.spreadText())
		})
		mk("RSS after the quiet time", func(r bench.VersusRun) float64 { return float64(r.QuietRSS) }, func(v Verdict) string {
			return fmt.Sprintf("%s, pgts serve's RSS after the quiet time was %s VictoriaMetrics' (its PostgreSQL's memory not counted) %s.", at, times(v.Ratio), v.spreadText())
		})
	}
	return out
}

// loadVerdicts compares the stores and the loaders of one load source.
func loadVerdicts(label string, lf LoadFile) []Verdict {
	sums := lf.Summary
	if len(sums) == 0 {
		sums = bench.Summarize(lf.Runs)
	}
	var ok []bench.LoadSummary
	for _, s := range sums {
		if s.Runs > 0 && s.RowsPerSec > 0 {
			ok = append(ok, s)
		}
	}
	if len(ok) == 0 {
		return nil
	}
	sc := lf.Scenario
	var out []Verdict
	// Stores against the first store, per loader and workers.
	firstStore := ok[0].Store
	for _, s := range ok {
		if s.Store == firstStore {
			continue
		}
		i := slices.IndexFunc(ok, func(b bench.LoadSummary) bool {
			return b.Store == firstStore && b.Loader == s.Loader && b.Workers == s.Workers
		})
		if i < 0 {
			continue
		}
		b := ok[i]
		v := Verdict{Source: label, Subject: storeName(s.Store, sc), Base: storeName(b.Store, sc), Measure: "rows/s",
			Ratio: s.RowsPerSec / b.RowsPerSec, Repeats: repeatRatios(lf.Runs, s, b, rowsPerSec)}
		v.useRepeats()
		v.Sentence = fmt.Sprintf("Into %s, %s loaded %s as fast as into %s %s.", v.Subject, loaderName(s.Loader, s.Workers),
			times(v.Ratio), v.Base, v.spreadText())
		out = append(out, v)
	}
	// Loaders of the first store against its first loader.
	var base *bench.LoadSummary
	for i, s := range ok {
		if s.Store != firstStore {
			continue
		}
		if base == nil {
			base = &ok[i]
			continue
		}
		v := Verdict{Source: label, Subject: loaderName(s.Loader, s.Workers), Base: loaderName(base.Loader, base.Workers),
			Measure: "rows/s", Ratio: s.RowsPerSec / base.RowsPerSec, Repeats: repeatRatios(lf.Runs, s, *base, rowsPerSec)}
		v.useRepeats()
		v.Sentence = fmt.Sprintf("%s loaded %s %s into %s %s.", v.Subject, times(v.Ratio), v.Base, storeName(s.Store, sc), v.spreadText())
		out = append(out, v)
	}
	// The end of each run against its start.
	for _, s := range ok {
		var rs []float64
		for _, r := range lf.Runs {
			if r.Store == s.Store && r.Loader == s.Loader && r.Workers == s.Workers && r.Error == "" {
				if start, end := bench.TenthRates(r.Batches); start > 0 {
					rs = append(rs, end/start)
				}
			}
		}
		if len(rs) == 0 {
			continue
		}
		v := Verdict{Source: label, Subject: storeName(s.Store, sc), Base: "its rate at the start", Measure: "end/start",
			Ratio: bench.Median(rs)}
		if len(rs) > 1 {
			v.Repeats = rs
		}
		v.Sentence = fmt.Sprintf("Loading into %s with %s ended at %s its starting rate, last tenth of the batches against the first %s.",
			v.Subject, loaderName(s.Loader, s.Workers), times(v.Ratio), v.spreadText())
		out = append(out, v)
	}
	return out
}

func rowsPerSec(r bench.LoadRun) float64 { return r.RowsPerSec }

// useRepeats states the median of the per-repeat ratios, when there are
// any, so that the ratio lies within its spread.
func (v *Verdict) useRepeats() {
	if len(v.Repeats) >= 2 {
		v.Ratio = bench.Median(v.Repeats)
	}
}

// repeatRatios pairs the successful runs of a and b by repeat number and
// returns f(a)/f(b) for each pair; nil with fewer than two pairs.
func repeatRatios(runs []bench.LoadRun, a, b bench.LoadSummary, f func(bench.LoadRun) float64) []float64 {
	of := func(s bench.LoadSummary) map[int]float64 {
		m := map[int]float64{}
		for _, r := range runs {
			if r.Store == s.Store && r.Loader == s.Loader && r.Workers == s.Workers && r.Error == "" {
				m[r.Repeat] = f(r)
			}
		}
		return m
	}
	ma, mb := of(a), of(b)
	var reps []int
	for rep := range ma {
		if mb[rep] > 0 {
			reps = append(reps, rep)
		}
	}
	if len(reps) < 2 {
		return nil
	}
	slices.Sort(reps)
	out := make([]float64, len(reps))
	for i, rep := range reps {
		out[i] = ma[rep] / mb[rep]
	}
	return out
}

// storeName says what a load store is, in words.
func storeName(store string, sc bench.LoadScenario) string {
	switch {
	case store == "plain":
		return "a plain table"
	case store == "weekly", store == "monthly":
		return store + " native partitions"
	case store == "pgts":
		iv := sc.Interval
		if iv == 0 {
			iv = 7 * 24 * time.Hour
		}
		return fmt.Sprintf("a pgts series table (%s partitions)", durationWords(iv))
	case strings.HasPrefix(store, "timescaledb"):
		chunk := "default 7-day"
		if d, ok := bench.TimescaleChunkOf(store); ok && d > 0 {
			chunk = durationWords(d)
		}
		return fmt.Sprintf("a TimescaleDB hypertable (%s chunks)", chunk)
	}
	return store
}

// durationWords writes 1h as "1-hour", 168h as "7-day", 90m as "90-minute".
func durationWords(d time.Duration) string {
	switch {
	case d%(24*time.Hour) == 0:
		return fmt.Sprintf("%d-day", d/(24*time.Hour))
	case d%time.Hour == 0:
		return fmt.Sprintf("%d-hour", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%d-minute", d/time.Minute)
	}
	return d.String()
}

// loaderName names a loader with its workers; psql's loaders are one
// stream, so their workers go unsaid.
func loaderName(loader string, workers int) string {
	if strings.HasPrefix(loader, "psql-") {
		return loader
	}
	if workers == 1 {
		return loader + " with 1 worker"
	}
	return fmt.Sprintf("%s with %d workers", loader, workers)
}

func times(r float64) string { return fmt.Sprintf("%.2f×", r) }

// insertVerdicts compares the insert sources' table kinds step by step:
// the first source's kind is the base. Sources of one kind are its
// repeats, paired in order with the base kind's (a study runs them
// plain, pgts, pgts, plain, …), and a step's ratio is the median of the
// pairs' ratios.
func insertVerdicts(srcs []Source) []Verdict {
	if len(srcs) < 2 {
		return nil
	}
	var kinds []string
	byKind := map[string][]Source{}
	for _, s := range srcs {
		k := s.Insert.Scenario.TableKind
		if _, ok := byKind[k]; !ok {
			kinds = append(kinds, k)
		}
		byKind[k] = append(byKind[k], s)
	}
	if len(kinds) < 2 {
		// Sources of one kind: compare each with the first.
		var out []Verdict
		for _, s := range srcs[1:] {
			out = append(out, insertStepVerdicts(s.Label, s.Label, srcs[0].Label, []Source{srcs[0]}, []Source{s})...)
		}
		return out
	}
	base := byKind[kinds[0]]
	var out []Verdict
	for _, k := range kinds[1:] {
		subj := byKind[k]
		label := subj[0].Label
		if len(subj) > 1 {
			label = k + " table, " + strconv.Itoa(len(subj)) + " runs"
		}
		out = append(out, insertStepVerdicts(label, tableKindName(k), tableKindName(kinds[0]), base, subj)...)
	}
	return out
}

// insertStepVerdicts states, step by step, subj's rate against base's,
// pairing their runs in order.
func insertStepVerdicts(label, subjName, baseName string, base, subj []Source) []Verdict {
	steps := func(s Source) map[string]bench.InsertStep {
		m := map[string]bench.InsertStep{}
		for _, st := range s.Insert.Steps {
			m[st.Name] = st
		}
		return m
	}
	var out []Verdict
	for _, st := range subj[0].Insert.Steps {
		var rs []float64
		for i := 0; i < len(subj) && i < len(base); i++ {
			a, b := steps(subj[i])[st.Name], steps(base[i])[st.Name]
			if a.MainRate() > 0 && b.MainRate() > 0 {
				rs = append(rs, a.MainRate()/b.MainRate())
			}
		}
		if len(rs) == 0 {
			continue
		}
		unit := "inserts/s"
		if bench.IsQueryStep(st.Name) {
			unit = "queries/s"
		}
		v := Verdict{Source: label, Subject: subjName, Base: baseName, Measure: st.Name + " " + unit, Ratio: bench.Median(rs)}
		if len(rs) > 1 {
			v.Repeats = rs
		}
		v.Sentence = fmt.Sprintf("Step %s on %s ran at %s the %s of %s %s.", st.Name, subjName, times(v.Ratio), unit, baseName, v.spreadText())
		out = append(out, v)
	}
	return out
}

func tableKindName(kind string) string {
	if kind == "pgts" {
		return "a pgts series table"
	}
	return "a plain table"
}

// eventsVerdicts compares the stores of the event workload runs: each
// store's inserts/s against the first store's of the same run (the stores
// of one run ran one after the other), and each store's end/start. Runs
// of a study are its repeats (stores in alternating order); a ratio is
// the median over them.
func eventsVerdicts(srcs []Source) []Verdict {
	if len(srcs) == 0 {
		return nil
	}
	label := srcs[0].Label
	if len(srcs) > 1 {
		label = "events, " + strconv.Itoa(len(srcs)) + " runs"
	}
	var stores []string // in the first run's order, the base first
	for _, r := range srcs[0].Events.Runs {
		if r.IPS > 0 {
			stores = append(stores, r.Store)
		}
	}
	if len(stores) == 0 {
		return nil
	}
	of := func(src Source, store string) (bench.EventsRun, bool) {
		for _, r := range src.Events.Runs {
			if r.Store == store && r.IPS > 0 {
				return r, true
			}
		}
		return bench.EventsRun{}, false
	}
	verdict := func(rs []float64, v Verdict) Verdict {
		v.Ratio = bench.Median(rs)
		if len(rs) > 1 {
			v.Repeats = rs
		}
		return v
	}
	sessions := srcs[0].Events.Scenario.Sessions
	var out []Verdict
	for _, st := range stores[1:] {
		var rs []float64
		for _, src := range srcs {
			a, ok1 := of(src, st)
			b, ok2 := of(src, stores[0])
			if ok1 && ok2 {
				rs = append(rs, a.IPS/b.IPS)
			}
		}
		v := verdict(rs, Verdict{Source: label, Subject: eventStoreName(st), Base: eventStoreName(stores[0]), Measure: "inserts/s"})
		v.Sentence = fmt.Sprintf("%d sessions committing one row each inserted into %s at %s the rate of %s %s.",
			sessions, v.Subject, times(v.Ratio), v.Base, v.spreadText())
		out = append(out, v)
	}
	for _, st := range stores {
		var rs []float64
		for _, src := range srcs {
			if r, ok := of(src, st); ok && r.EndToStart > 0 {
				rs = append(rs, r.EndToStart)
			}
		}
		if len(rs) == 0 {
			continue
		}
		v := verdict(rs, Verdict{Source: label, Subject: eventStoreName(st), Base: "its rate at the start", Measure: "end/start"})
		v.Sentence = fmt.Sprintf("Inserting into %s ended at %s its starting rate, last tenth of the run against the first %s.",
			v.Subject, times(v.Ratio), v.spreadText())
		out = append(out, v)
	}
	return out
}

func eventStoreName(store string) string {
	if store == "pgts" {
		return "a weekly pgts series table"
	}
	return "a plain table"
}

// WriteVerdict writes the verdict as text: one line per comparison under
// its source's label, noisy ones flagged; nothing without comparisons.
func WriteVerdict(w io.Writer, srcs []Source) error {
	vs := Verdicts(srcs)
	if len(vs) == 0 {
		return nil
	}
	ew := &errWriter{w: w}
	fmt.Fprintln(ew, "Verdict (each repeat's run against the base's run of the same repeat: the median of those ratios, and their lowest and highest):")
	last := ""
	for _, v := range vs {
		if v.Source != last {
			fmt.Fprintf(ew, "%s:\n", v.Source)
			last = v.Source
		}
		flag := ""
		if v.Noisy() {
			flag = " [spread larger than the difference]"
		}
		fmt.Fprintf(ew, "  - %s%s\n", v.Sentence, flag)
	}
	fmt.Fprintln(ew)
	return ew.err
}
