package render

import (
	"bytes"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Image rendering for format=png and format=svg, for people who embed
// graph links: one line per series (gaps where values are null), a time
// axis in the request's zone, a legend. It draws with the project's chart
// library (gonum/plot), not graphite-web's cairo renderer, so pictures
// resemble but do not copy graphite-web's; the query parameters honoured
// are width and height (pixels, graphite-web's defaults 330 × 250),
// title, hideLegend, yMin, yMax, vtitle and lineWidth.

// Image size bounds, pixels.
const (
	defaultImageW = 330
	defaultImageH = 250
	maxImageSide  = 4096
)

// renderImage draws list as a PNG or SVG; format is "png" or "svg".
func renderImage(list []*series, format string, q url.Values, loc *time.Location) ([]byte, error) {
	px := func(name string, def int) (int, error) {
		v := q.Get(name)
		if v == "" {
			return def, nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxImageSide {
			return 0, inputErrorf("%s must be a whole number of pixels from 1 to %d, not %q", name, maxImageSide, v)
		}
		return n, nil
	}
	w, err := px("width", defaultImageW)
	if err != nil {
		return nil, err
	}
	h, err := px("height", defaultImageH)
	if err != nil {
		return nil, err
	}
	p := plot.New()
	p.Title.Text = q.Get("title")
	p.Y.Label.Text = q.Get("vtitle")
	p.X.Tick.Marker = plot.TimeTicks{Format: "15:04", Time: func(t float64) time.Time { return time.Unix(int64(t), 0).In(loc) }}
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	width := 1.2
	if v, err := strconv.ParseFloat(q.Get("lineWidth"), 64); err == nil && v > 0 && v < 100 {
		width = v
	}
	hideLegend := q.Get("hideLegend") == "true" || q.Get("hideLegend") == "1"
	for i, s := range list {
		style := draw.LineStyle{Color: plotutil.Color(i), Width: vg.Points(width)}
		var first *plotter.Line
		for _, run := range runs(s) {
			l, err := plotter.NewLine(run)
			if err != nil {
				return nil, fmt.Errorf("drawing %q: %w", s.name, err)
			}
			l.LineStyle = style
			p.Add(l)
			if first == nil {
				first = l
			}
		}
		if first != nil && !hideLegend {
			p.Legend.Add(s.name, first)
		}
	}
	if len(list) == 0 || p.X.Min > p.X.Max {
		p.Title.Text = "No Data"
	}
	for _, b := range []struct {
		param string
		f     *float64
	}{{"yMin", &p.Y.Min}, {"yMax", &p.Y.Max}} {
		if v, err := strconv.ParseFloat(q.Get(b.param), 64); err == nil && !math.IsNaN(v) && !math.IsInf(v, 0) {
			*b.f = v
		}
	}
	wt, err := p.WriterTo(vg.Length(w)*vg.Inch/96, vg.Length(h)*vg.Inch/96, format)
	if err != nil {
		return nil, fmt.Errorf("rendering %s: %w", format, err)
	}
	var buf bytes.Buffer
	if _, err := wt.WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("rendering %s: %w", format, err)
	}
	return buf.Bytes(), nil
}

// runs splits a series into its stretches of non-null, finite values.
func runs(s *series) []plotter.XYs {
	var out []plotter.XYs
	var cur plotter.XYs
	for _, pt := range datapoints(nil, s.values, s.start, s.end, s.step) {
		if isNull(pt.v) || math.IsInf(pt.v, 0) {
			if len(cur) > 0 {
				out = append(out, cur)
				cur = nil
			}
			continue
		}
		cur = append(cur, plotter.XY{X: float64(pt.ts), Y: pt.v})
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}
