package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/pgts/pgts/internal/bench"
)

// loadEntry is one load summary with its source's label.
type loadEntry struct {
	label string
	s     bench.LoadSummary
}

func (e loadEntry) key() string { return e.label + ":" + e.s.Key() }

// perRow returns a per-row cost (µs of CPU, bytes of WAL) or 0.
func (e loadEntry) cpuPerRow() float64 {
	if e.s.Rows == 0 || e.s.ServerCPU < 0 {
		return 0
	}
	return (e.s.ClientCPU + e.s.ServerCPU) * 1e6 / float64(e.s.Rows)
}

func (e loadEntry) walPerRow() float64 {
	if e.s.Rows == 0 {
		return 0
	}
	return e.s.WALBytes / float64(e.s.Rows)
}

func loadEntries(srcs []Source) []loadEntry {
	var out []loadEntry
	for _, src := range srcs {
		if src.Load == nil {
			continue
		}
		sums := src.Load.Summary
		if len(sums) == 0 {
			sums = bench.Summarize(src.Load.Runs)
		}
		for _, s := range sums {
			out = append(out, loadEntry{label: src.Label, s: s})
		}
	}
	return out
}

// matchBase returns the index of the entry keys[i] that base names: the
// whole key, or the part after the colon when only one key has it. An
// empty base is the first entry. -1 when nothing matches.
func matchBase(keys []string, base string) int {
	if len(keys) == 0 {
		return -1
	}
	if base == "" {
		return 0
	}
	found := -1
	for i, k := range keys {
		if k == base {
			return i
		}
		if _, after, ok := strings.Cut(k, ":"); ok && after == base {
			if found >= 0 {
				return -1
			}
			found = i
		}
	}
	return found
}

// BaseError reports a --base that names no entry.
type BaseError struct {
	Base  string
	Known []string
}

func (e *BaseError) Error() string {
	return fmt.Sprintf("base %q names no run (choose from %s)", e.Base, strings.Join(e.Known, ", "))
}

// WriteText writes every table: absolute figures of the load and insert
// results, then the ratios to the base. base selects the base entry (see
// the package glossary); "" picks the first of each kind. A base that
// names nothing of either kind is a *BaseError.
func WriteText(w io.Writer, srcs []Source, base string) error {
	loads := loadEntries(srcs)
	var inserts []Source
	for _, s := range srcs {
		if s.Insert != nil {
			inserts = append(inserts, s)
		}
	}
	lkeys := make([]string, len(loads))
	for i, e := range loads {
		lkeys[i] = e.key()
	}
	ikeys := make([]string, len(inserts))
	for i, s := range inserts {
		ikeys[i] = s.Label
	}
	lb, ib := matchBase(lkeys, base), matchBase(ikeys, base)
	if base != "" && lb < 0 && ib < 0 {
		return &BaseError{Base: base, Known: append(lkeys, ikeys...)}
	}
	if lb < 0 && len(loads) > 0 {
		lb = 0
	}
	if ib < 0 && len(inserts) > 0 {
		ib = 0
	}
	var sections []func(io.Writer)
	if len(loads) > 0 {
		sections = append(sections, func(w io.Writer) { writeLoadAbsolute(w, loads) })
		if len(loads) > 1 {
			sections = append(sections, func(w io.Writer) { writeLoadRelative(w, loads, lb) })
		}
		if hasDrift(srcs) {
			sections = append(sections, func(w io.Writer) { writeLoadDrift(w, srcs) })
		}
	}
	for _, s := range inserts {
		sections = append(sections, func(w io.Writer) {
			fmt.Fprintf(w, "Insert benchmark, %s (%s table):\n", s.Label, s.Insert.Scenario.TableKind)
			writeInsertSteps(w, *s.Insert)
		})
	}
	if len(inserts) > 1 {
		sections = append(sections, func(w io.Writer) { writeInsertRelative(w, inserts, ib) })
	}
	for _, s := range srcs {
		if s.Serve != nil {
			sections = append(sections, func(w io.Writer) { writeServeSteps(w, s.Label, s.Serve.Result) })
		}
		if s.Events != nil {
			sections = append(sections, func(w io.Writer) { writeEvents(w, s.Label, *s.Events) })
		}
		if s.Versus != nil {
			sections = append(sections, func(w io.Writer) {
				fmt.Fprintf(w, "Metrics daemon beside VictoriaMetrics, %s:\n\n", s.Label)
				// errWriter keeps the error; WriteVersusTable's own is the same one.
				_ = bench.WriteVersusTable(w, s.Versus.Result)
			})
		}
	}
	ew := &errWriter{w: w}
	for i, f := range sections {
		if i > 0 {
			fmt.Fprintln(ew)
		}
		f(ew)
	}
	return ew.err
}

// errWriter keeps the first write error so that table code need not.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return len(p), nil
	}
	_, e.err = e.w.Write(p)
	return len(p), nil
}

// Table passes a table on to a writer that keeps tables as such (the
// HTML page's blocks), else writes it as text.
func (e *errWriter) Table(head []string, rows [][]string) {
	if t, ok := e.w.(tabler); ok {
		t.Table(head, rows)
		return
	}
	textTable(e, head, rows)
}

// tabler is a writer that takes tables whole rather than as text.
type tabler interface {
	Table(head []string, rows [][]string)
}

// table writes a table: to a tabler whole, otherwise as aligned text.
func table(w io.Writer, head []string, rows [][]string) {
	if t, ok := w.(tabler); ok {
		t.Table(head, rows)
		return
	}
	textTable(w, head, rows)
}

func textTable(w io.Writer, head []string, rows [][]string) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t")+"\t")
	}
	tw.Flush()
}

func writeLoadAbsolute(w io.Writer, loads []loadEntry) {
	fmt.Fprintln(w, "Loading, medians per run (rows/s higher is better; CPU and WAL per row lower is better):")
	head := []string{"results", "store", "loader", "workers", "runs", "rows", "rows/s", "CPU µs/row", "WAL B/row", "table MiB", "index MiB"}
	var rows [][]string
	for _, e := range loads {
		s := e.s
		runs := strconv.Itoa(s.Runs)
		if s.Failed > 0 {
			runs += fmt.Sprintf(" (+%d failed)", s.Failed)
		}
		rows = append(rows, []string{e.label, s.Store, s.Loader, strconv.Itoa(s.Workers), runs, group(float64(s.Rows)),
			group(s.RowsPerSec), f2(e.cpuPerRow()), f1(e.walPerRow()), f1(s.TableBytes / (1 << 20)), f1(s.IndexBytes / (1 << 20))})
	}
	table(w, head, rows)
}

func writeLoadRelative(w io.Writer, loads []loadEntry, base int) {
	b := loads[base]
	fmt.Fprintf(w, "Loading, relative to %s (rows/s < 1 is slower; CPU and WAL per row > 1 is worse):\n", b.key())
	head := []string{"results", "store", "loader", "workers", "rows/s", "CPU/row", "WAL/row"}
	var rows [][]string
	for _, e := range loads {
		rows = append(rows, []string{e.label, e.s.Store, e.s.Loader, strconv.Itoa(e.s.Workers),
			ratio(e.s.RowsPerSec, b.s.RowsPerSec), ratio(e.cpuPerRow(), b.cpuPerRow()), ratio(e.walPerRow(), b.walPerRow())})
	}
	table(w, head, rows)
}

// WriteInsertSteps writes the step table of one insert benchmark run.
func WriteInsertSteps(w io.Writer, res bench.InsertResult) error {
	ew := &errWriter{w: w}
	writeInsertSteps(ew, res)
	return ew.err
}

func writeInsertSteps(w io.Writer, res bench.InsertResult) {
	head := []string{"step", "seconds", "ips", "qps", "target ips", "cpupq µs", "wkbpi", "dbgb", "maxop ms", "rate p50", "rate p99", "note"}
	var rows [][]string
	for _, st := range res.Steps {
		qps, target := "", ""
		if bench.IsQueryStep(st.Name) {
			qps, target = group(st.QPS), group(st.TargetIPS)
		}
		var notes []string
		if st.WriterSlow {
			notes = append(notes, "writer short")
		}
		if !st.Complete {
			notes = append(notes, "incomplete")
		}
		wkbpi := f3(st.WKBPerIns)
		if st.Inserts == 0 {
			wkbpi = ""
		}
		ips := group(st.IPS)
		if st.Inserts == 0 {
			ips = ""
		}
		cpupq := f1(st.CPUPerOp)
		if st.Inserts == 0 && st.Queries == 0 {
			cpupq = ""
		}
		rows = append(rows, []string{st.Name, f1(st.Seconds), ips, qps, target, cpupq, wkbpi,
			f3(st.DBGB), f1(st.MaxOpMS), group(st.RateP50), group(st.RateP99), strings.Join(notes, ", ")})
	}
	table(w, head, rows)
	if !res.Complete {
		reason := res.Error
		if reason == "" {
			reason = "interrupted"
		}
		fmt.Fprintf(w, "incomplete run: %s\n", reason)
	}
}

func writeInsertRelative(w io.Writer, inserts []Source, base int) {
	b := inserts[base]
	fmt.Fprintf(w, "Insert benchmark, relative to %s (ips and qps < 1 is slower; cpupq, wkbpi and maxop > 1 is worse):\n", b.Label)
	head := []string{"results", "step", "ips|qps", "cpupq", "wkbpi", "maxop", "dbgb"}
	baseSteps := map[string]bench.InsertStep{}
	for _, st := range b.Insert.Steps {
		baseSteps[st.Name] = st
	}
	var rows [][]string
	for _, src := range inserts {
		for _, st := range src.Insert.Steps {
			bs, ok := baseSteps[st.Name]
			if !ok {
				continue
			}
			rows = append(rows, []string{src.Label, st.Name, ratio(st.MainRate(), bs.MainRate()), ratio(st.CPUPerOp, bs.CPUPerOp),
				ratio(st.WKBPerIns, bs.WKBPerIns), ratio(st.MaxOpMS, bs.MaxOpMS), ratio(st.DBGB, bs.DBGB)})
		}
	}
	table(w, head, rows)
}

func ratio(a, b float64) string {
	if b <= 0 || a < 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", a/b)
}

func f1(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }
func f2(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }
func f3(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) }

// group writes a number rounded to an integer with thousands separators.
func group(x float64) string {
	s := strconv.FormatInt(int64(x+0.5), 10)
	if x < 0 {
		s = strconv.FormatInt(int64(x-0.5), 10)
	}
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// writeServeSteps is the daemon benchmark's step table and its verdict.
func writeServeSteps(w io.Writer, label string, r bench.ServeResult) {
	fmt.Fprintf(w, "Metrics daemon, %s (Graphite over TCP, %gs windows, archives %s):\n", label, r.Scenario.WindowS,
		strings.Join(r.Scenario.Archives, ", "))
	head := []string{"series", "offered/s", "acked/s", "sustained", "peak cache MiB", "peak RSS MiB", "drain s", "daemon CPU s", "server CPU s", "reason"}
	var rows [][]string
	for _, st := range r.Steps {
		rows = append(rows, []string{group(float64(st.Series)), group(st.Rate), group(st.AckedRate), strconv.FormatBool(st.Sustained),
			f1(float64(st.PeakCache) / (1 << 20)), f1(float64(st.PeakRSS) / (1 << 20)), f1(st.DrainSeconds), f1(st.DaemonCPU),
			f1(st.ServerCPU), st.Reason})
	}
	table(w, head, rows)
	for _, n := range r.Scenario.Series {
		fmt.Fprintf(w, "highest sustained rate with %s series: %s points/s\n", group(float64(n)), group(r.Best[strconv.Itoa(n)]))
	}
}
