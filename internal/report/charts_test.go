package report

import (
	"bytes"
	"image/png"
	"testing"

	"gonum.org/v1/plot/plotter"
)

// TestLegendBesidePlot draws a line across the whole data area at its top,
// where a legend inside the plot would sit, and checks that the legend's
// thumbnail is drawn to the right of the line's end, apart from it: the
// legend is outside the plot area.
func TestLegendBesidePlot(t *testing.T) {
	p := newPlot("legend", "x", "y")
	l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 10}, {X: 10, Y: 10}})
	if err != nil {
		t.Fatal(err)
	}
	l.LineStyle = lineStyle(0)
	p.Add(l)
	p.Legend.Add("a line", l)
	b, err := renderPNG(p)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	r := img.Bounds()
	var cols []int // x of every column holding a coloured pixel
	for x := r.Min.X; x < r.Max.X; x++ {
		for y := r.Min.Y; y < r.Max.Y; y++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			if max(cr, cg, cb)>>8-min(cr, cg, cb)>>8 > 80 {
				cols = append(cols, x)
				break
			}
		}
	}
	// Runs of adjacent coloured columns: the line, then the thumbnail.
	var runs [][2]int
	for _, x := range cols {
		if n := len(runs); n > 0 && runs[n-1][1] == x-1 {
			runs[n-1][1] = x
		} else {
			runs = append(runs, [2]int{x, x})
		}
	}
	if len(runs) != 2 || runs[1][0]-runs[0][1] < 10 || runs[0][1]-runs[0][0] < r.Dx()/2 {
		t.Errorf("coloured column runs %v in a %d-pixel-wide chart: want the line over half the width, then the legend's thumbnail apart from it", runs, r.Dx())
	}
}
