package report

import (
	"bytes"
	"fmt"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/pgts/pgts/internal/bench"
)

// Chart is one rendered PNG.
type Chart struct {
	Name  string // file name, e.g. "load-batches.png"
	Title string
	PNG   []byte
}

// Chart size: the page shows charts at its full width (up to 1,200 CSS
// pixels); 30 × 13 cm is 1,134 × 491 pixels at the PNG's 96 dpi, with room
// on the right for the legend.
const (
	chartW = 30 * vg.Centimeter
	chartH = 13 * vg.Centimeter
)

// Charts renders every chart the results allow: per-batch speed over the
// run and the same speeds sorted (load runs with per-batch timings),
// average speed per store and loader, and the insert benchmark's rates per
// step. Charts without data are left out.
func Charts(srcs []Source) ([]Chart, error) {
	var out []Chart
	add := func(name, title string, p *plot.Plot, err error) error {
		if err != nil || p == nil {
			return err
		}
		b, err := renderPNG(p)
		if err != nil {
			return fmt.Errorf("chart %s: %w", name, err)
		}
		out = append(out, Chart{Name: name, Title: title, PNG: b})
		return nil
	}
	series := batchSeries(srcs)
	p, err := batchesOverTime(series)
	if err := add("load-batches.png", "Per-batch speed over the run", p, err); err != nil {
		return nil, err
	}
	p, err = batchesSorted(series)
	if err := add("load-batches-sorted.png", "Per-batch speed, sorted", p, err); err != nil {
		return nil, err
	}
	p, err = loadAverages(loadEntries(srcs))
	if err := add("load-average.png", "Average speed per store and loader", p, err); err != nil {
		return nil, err
	}
	p, err = insertRates(srcs, false)
	if err := add("insert-steps.png", "Insert benchmark: inserts/s per load step", p, err); err != nil {
		return nil, err
	}
	p, err = insertRates(srcs, true)
	if err := add("query-steps.png", "Insert benchmark: queries/s per read+write step", p, err); err != nil {
		return nil, err
	}
	p, err = serveOverTime(srcs, "Metrics daemon: points/s stored (solid) and acknowledged (dashed)", "points/s",
		func(s bench.ServeSample) float64 { return s.Added }, func(s bench.ServeSample) float64 { return s.Acked })
	if err := add("serve-rates.png", "Metrics daemon: rate offered and stored", p, err); err != nil {
		return nil, err
	}
	p, err = serveOverTime(srcs, "Metrics daemon: cache (solid) and resident memory (dashed)", "MiB",
		func(s bench.ServeSample) float64 { return float64(s.CacheBytes) / (1 << 20) },
		func(s bench.ServeSample) float64 { return float64(s.RSS) / (1 << 20) })
	if err := add("serve-memory.png", "Metrics daemon: memory over time", p, err); err != nil {
		return nil, err
	}
	p, err = serveOverTime(srcs, "Metrics daemon: points waiting for the store (queue depth)", "points",
		func(s bench.ServeSample) float64 { return float64(s.Waiting) }, nil)
	if err := add("serve-waiting.png", "Metrics daemon: queue depth over time", p, err); err != nil {
		return nil, err
	}
	p, err = eventsRate(srcs)
	if err := add("events-rate.png", "Event workload: inserts/s over the run, checkpoints marked", p, err); err != nil {
		return nil, err
	}
	p, err = eventsWrite(srcs)
	if err := add("events-write.png", "Event workload: server writes and WAL, MB/s", p, err); err != nil {
		return nil, err
	}
	return out, nil
}

// renderPNG draws the plot with its legend beside the plot area, on the
// right, so that no legend entry hides a line or a bar.
func renderPNG(p *plot.Plot) ([]byte, error) {
	c, err := draw.NewFormattedCanvas(chartW, chartH, "png")
	if err != nil {
		return nil, err
	}
	dc := draw.New(c)
	leg := p.Legend
	p.Legend = plot.NewLegend()
	r := leg.Rectangle(dc)
	if w := r.Max.X - r.Min.X; w > 0 {
		pad := vg.Points(8)
		w = min(w, chartW/3) // a longer label runs over the edge rather than squeezing the plot away
		p.Draw(draw.Crop(dc, 0, -(w + 2*pad), 0, 0))
		leg.Left, leg.Top = true, true
		top := vg.Length(0)
		if p.Title.Text != "" {
			top = p.Title.TextStyle.Rectangle(p.Title.Text).Size().Y + p.Title.Padding
		}
		leg.Draw(draw.Crop(dc, chartW-w-pad, 0, 0, -top-pad))
	} else {
		p.Draw(dc)
	}
	p.Legend = leg
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// batchRun is one load run's per-batch speeds.
type batchRun struct {
	name  string
	at    []float64 // batch start, seconds into the run
	speed []float64 // rows/s of the batch
}

// maxSeries bounds the lines of one chart: more are unreadable.
const maxSeries = 12

// batchSeries takes the first repeat of every combination that has
// per-batch timings.
func batchSeries(srcs []Source) []batchRun {
	var out []batchRun
	for _, src := range srcs {
		if src.Load == nil {
			continue
		}
		seen := map[string]bool{}
		for _, r := range src.Load.Runs {
			k := fmt.Sprintf("%s/%s/%d", r.Store, r.Loader, r.Workers)
			if seen[k] || r.Error != "" || len(r.Batches) == 0 || len(out) == maxSeries {
				continue
			}
			seen[k] = true
			br := batchRun{name: runName(srcs, src, r)}
			for _, b := range r.Batches {
				if b.DurationMS <= 0 {
					continue
				}
				br.at = append(br.at, b.StartMS/1000)
				br.speed = append(br.speed, float64(b.Rows)/(b.DurationMS/1000))
			}
			if len(br.at) > 0 {
				out = append(out, br)
			}
		}
	}
	return out
}

func newPlot(title, x, y string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.Y.Min = 0
	p.Y.Tick.Marker = groupTicks{}
	p.Add(plotter.NewGrid())
	return p
}

// groupTicks labels the y axis with thousands separators.
type groupTicks struct{}

func (groupTicks) Ticks(lo, hi float64) []plot.Tick {
	ts := plot.DefaultTicks{}.Ticks(lo, hi)
	for i := range ts {
		if ts[i].Label != "" {
			ts[i].Label = group(ts[i].Value)
		}
	}
	return ts
}

func lineStyle(i int) draw.LineStyle {
	return draw.LineStyle{Color: plotutil.Color(i), Width: vg.Points(1.2), Dashes: plotutil.Dashes(i / len(plotutil.DefaultColors))}
}

func batchesOverTime(runs []batchRun) (*plot.Plot, error) {
	if len(runs) == 0 {
		return nil, nil
	}
	p := newPlot("Per-batch speed over the run", "time into the run (s)", "rows/s of the batch")
	for i, r := range runs {
		xys := make(plotter.XYs, len(r.at))
		for j := range r.at {
			xys[j] = plotter.XY{X: r.at[j], Y: r.speed[j]}
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, err
		}
		l.LineStyle = lineStyle(i)
		p.Add(l)
		p.Legend.Add(r.name, l)
	}
	return p, nil
}

// batchesSorted draws each run's batch speeds from fastest to slowest
// against the share of batches, so runs of different lengths compare: the
// right end shows how slow the slowest batches were and how many.
func batchesSorted(runs []batchRun) (*plot.Plot, error) {
	if len(runs) == 0 {
		return nil, nil
	}
	p := newPlot("Per-batch speed, sorted from fastest to slowest", "share of batches (%)", "rows/s of the batch")
	for i, r := range runs {
		s := slices.Clone(r.speed)
		slices.Sort(s)
		slices.Reverse(s)
		xys := make(plotter.XYs, len(s))
		for j, v := range s {
			x := 100.0
			if len(s) > 1 {
				x = 100 * float64(j) / float64(len(s)-1)
			}
			xys[j] = plotter.XY{X: x, Y: v}
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, err
		}
		l.LineStyle = lineStyle(i)
		p.Add(l)
		p.Legend.Add(r.name, l)
	}
	p.X.Min, p.X.Max = 0, 100
	return p, nil
}

func loadAverages(loads []loadEntry) (*plot.Plot, error) {
	var vals plotter.Values
	var names []string
	multi := false
	for _, e := range loads {
		multi = multi || e.label != loads[0].label
	}
	for _, e := range loads {
		if e.s.Runs == 0 {
			continue
		}
		name := e.s.Key()
		if multi {
			name = e.key()
		}
		vals = append(vals, e.s.RowsPerSec)
		names = append(names, name)
	}
	if len(vals) == 0 {
		return nil, nil
	}
	p := newPlot("Average speed per store/loader/workers (median of repeats)", "", "rows/s")
	bars, err := plotter.NewBarChart(vals, vg.Points(max(8, 300/float64(len(vals)))))
	if err != nil {
		return nil, err
	}
	bars.Color = plotutil.Color(0)
	bars.LineStyle.Width = 0
	p.Add(bars)
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.5, float64(len(names))-0.5
	p.Y.Max = headroom(slices.Max(vals))
	if len(names) > 4 {
		p.X.Tick.Label.Rotation = 0.5
		p.X.Tick.Label.XAlign = draw.XRight
	}
	return p, nil
}

// insertRates draws grouped bars, one group per step and one bar per
// insert source: ips of the load steps, or qps of the q steps.
func insertRates(srcs []Source, query bool) (*plot.Plot, error) {
	var ins []Source
	var steps []string
	for _, s := range srcs {
		if s.Insert == nil {
			continue
		}
		ins = append(ins, s)
		for _, st := range s.Insert.Steps {
			if bench.IsQueryStep(st.Name) == query && st.Name != bench.StepIndex && !slices.Contains(steps, st.Name) {
				steps = append(steps, st.Name)
			}
		}
	}
	if len(steps) == 0 {
		return nil, nil
	}
	title, y := "Insert benchmark: inserts/s of the load steps", "inserts/s"
	if query {
		title, y = "Insert benchmark: queries/s with a writer at N inserts/s", "queries/s"
	}
	p := newPlot(title, "step", y)
	w := vg.Points(max(6, 240/float64(len(steps)*len(ins))))
	top := 0.0
	for i, src := range ins {
		vals := make(plotter.Values, len(steps))
		byName := map[string]bench.InsertStep{}
		for _, st := range src.Insert.Steps {
			byName[st.Name] = st
		}
		for j, name := range steps {
			vals[j] = byName[name].MainRate()
			top = max(top, vals[j])
		}
		b, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return nil, err
		}
		b.Color = plotutil.Color(i)
		b.LineStyle.Width = 0
		b.Offset = w * vg.Length(float64(i)-float64(len(ins)-1)/2)
		p.Add(b)
		p.Legend.Add(fmt.Sprintf("%s (%s)", src.Label, src.Insert.Scenario.TableKind), b)
	}
	p.NominalX(steps...)
	p.X.Min, p.X.Max = -0.5, float64(len(steps))-0.5
	p.Y.Max = headroom(top)
	return p, nil
}

// headroom leaves space above the highest bar.
func headroom(top float64) float64 {
	if top <= 0 {
		return 1
	}
	return top * 1.25
}

// serveOverTime draws one line per daemon benchmark step of the per-second
// samples: solid for first, dashed for second (when not nil), against
// the seconds into the step.
func serveOverTime(srcs []Source, title, y string, first, second func(bench.ServeSample) float64) (*plot.Plot, error) {
	var p *plot.Plot
	i := 0
	for _, src := range srcs {
		if src.Serve == nil {
			continue
		}
		for _, st := range src.Serve.Result.Steps {
			if len(st.Samples) == 0 {
				continue
			}
			if p == nil {
				p = newPlot(title, "seconds into the step", y)
			}
			name := fmt.Sprintf("%s series at %s/s", group(float64(st.Series)), group(st.Rate))
			for k, f := range []func(bench.ServeSample) float64{first, second} {
				if f == nil {
					continue
				}
				xys := make(plotter.XYs, len(st.Samples))
				for j, sm := range st.Samples {
					xys[j] = plotter.XY{X: sm.T, Y: f(sm)}
				}
				l, err := plotter.NewLine(xys)
				if err != nil {
					return nil, err
				}
				l.LineStyle = lineStyle(i)
				if k == 1 {
					l.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
				} else {
					p.Legend.Add(name, l)
				}
				p.Add(l)
			}
			i++
		}
	}
	return p, nil
}
