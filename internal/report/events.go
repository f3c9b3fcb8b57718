package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/pgts/pgts/internal/bench"
)

// The event workload's report: a table of each store's run, its index
// sizes, the run by tenths, and two charts over the run (inserts/s with
// checkpoints marked; server write MB/s with WAL MB/s).

// WriteEvents writes the tables of one `bench events` run.
func WriteEvents(w io.Writer, res bench.EventsResult) error {
	ew := &errWriter{w: w}
	writeEvents(ew, "", res)
	return ew.err
}

const mb = 1e6 // write and WAL rates are in MB/s (10^6 bytes), as iostat shows them

func writeEvents(w io.Writer, label string, res bench.EventsResult) {
	sc := res.Scenario
	size := fmt.Sprintf("%s rows per store", group(float64(sc.Rows)))
	if sc.Rows == 0 {
		size = fmt.Sprintf("%s per store", sc.Duration)
	}
	if label != "" {
		label = ", " + label
	}
	fmt.Fprintf(w, "Event workload%s (%d sessions, one row per transaction, %s-byte documents, %s rows a week, %s", label,
		sc.Sessions, group(float64(sc.DocBytes)), group(float64(sc.WeekRows)), size)
	if sc.MemoryLimit > 0 {
		fmt.Fprintf(w, ", server memory limit %s MiB", group(float64(sc.MemoryLimit)/(1<<20)))
	}
	fmt.Fprintln(w, "):")
	head := []string{"store", "rows", "seconds", "inserts/s", "start ips", "end ips", "end/start", "p50 ms", "p99 ms", "max ms",
		"write MB/s", "write calls/s", "WAL MB/s", "device MB/s", "device writes/s", "checkpoints", "partitions", "table MiB", "index MiB", "note"}
	var rows [][]string
	for _, r := range res.Runs {
		p50, p99, mx := "", "", ""
		if l := r.Latency; l != nil {
			p50, p99, mx = f2(float64(l.P50US)/1000), f2(float64(l.P99US)/1000), f1(float64(l.MaxUS)/1000)
		}
		wr, wc := "-", "-"
		if r.WriteBytes >= 0 && r.Seconds > 0 {
			wr, wc = f1(float64(r.WriteBytes)/mb/r.Seconds), group(float64(r.WriteCalls)/r.Seconds)
		}
		wal, dev, devw := "", "-", "-"
		if r.Seconds > 0 {
			wal = f1(float64(r.WALBytes) / mb / r.Seconds)
			if r.DeviceWriteBytes >= 0 {
				dev, devw = f1(float64(r.DeviceWriteBytes)/mb/r.Seconds), group(float64(r.DeviceWrites)/r.Seconds)
			}
		}
		var idx int64
		for _, ix := range r.Indexes {
			idx += ix.Bytes
		}
		note := ""
		if !r.Complete {
			note = "incomplete: " + r.Error
		}
		rows = append(rows, []string{r.Store, group(float64(r.Rows)), f1(r.Seconds), group(r.IPS), group(r.StartIPS), group(r.EndIPS),
			f2(r.EndToStart), p50, p99, mx, wr, wc, wal, dev, devw, strconv.FormatInt(r.Checkpoints, 10), strconv.Itoa(r.Partitions),
			f1(float64(r.TableBytes) / (1 << 20)), f1(float64(idx) / (1 << 20)), note})
	}
	table(w, head, rows)
	fmt.Fprintln(w, "start and end ips: mean inserts/s of the first and the last tenth of the run's seconds")
	fmt.Fprintln(w, "write: write_bytes and syscw of the server processes (/proc/PID/io, counted when pages are dirtied);")
	fmt.Fprintln(w, "device: the data directory's block device, every program's writes (/sys/dev/block)")
	writeEventIndexes(w, res.Runs)
	writeEventTenths(w, res.Runs)
	for _, r := range res.Runs {
		if r.Advice != "" {
			fmt.Fprintf(w, "%s store: a primary key on id alone was refused: %s\n", r.Store, r.Advice)
			fmt.Fprintf(w, "%s store: used %s\n", r.Store, r.PrimaryKey)
		}
	}
	if !res.Complete {
		reason := res.Error
		if reason == "" {
			reason = "interrupted"
		}
		fmt.Fprintf(w, "incomplete run: %s\n", reason)
	}
}

// writeEventIndexes is one row per index, one size column per store.
func writeEventIndexes(w io.Writer, runs []bench.EventsRun) {
	head := []string{"index"}
	var names []string
	defs := map[string]string{}
	size := map[string]map[string]int64{}
	for _, r := range runs {
		head = append(head, r.Store+" MiB")
		size[r.Store] = map[string]int64{}
		for _, ix := range r.Indexes {
			if _, ok := defs[ix.Name]; !ok {
				names = append(names, ix.Name)
				defs[ix.Name] = ix.Definition
			}
			size[r.Store][ix.Name] = ix.Bytes
		}
	}
	if len(names) == 0 {
		return
	}
	head = append(head, "definition")
	var rows [][]string
	for _, n := range names {
		row := []string{n}
		for _, r := range runs {
			row = append(row, f1(float64(size[r.Store][n])/(1<<20)))
		}
		_, def, _ := strings.Cut(defs[n], " USING ")
		rows = append(rows, append(row, "USING "+def))
	}
	table(w, head, rows)
}

// writeEventTenths shows the run by tenths of its seconds: mean inserts/s,
// server write MB/s and the share of seconds with a checkpoint in progress.
func writeEventTenths(w io.Writer, runs []bench.EventsRun) {
	head := []string{"tenth"}
	for _, r := range runs {
		head = append(head, r.Store+" ips", r.Store+" write MB/s", r.Store+" device MB/s", r.Store+" ckpt %")
	}
	var rows [][]string
	for k := range 10 {
		row := []string{strconv.Itoa(k + 1)}
		any := false
		for _, r := range runs {
			n := len(r.Samples)
			part := r.Samples[n*k/10 : n*(k+1)/10]
			var ins, wr, dev, secs float64
			ck := 0
			for _, s := range part {
				ins += float64(s.Inserts)
				wr += float64(s.WriteBytes)
				dev += float64(s.DeviceWriteBytes)
				secs += s.Seconds
				if s.Checkpoint {
					ck++
				}
			}
			if secs == 0 {
				row = append(row, "", "", "", "")
				continue
			}
			any = true
			wrs, devs := "-", "-"
			if r.WriteBytes >= 0 {
				wrs = f1(wr / mb / secs)
			}
			if r.DeviceWriteBytes >= 0 {
				devs = f1(dev / mb / secs)
			}
			row = append(row, group(ins/secs), wrs, devs, strconv.Itoa(100*ck/len(part)))
		}
		if any {
			rows = append(rows, row)
		}
	}
	if len(rows) == 0 {
		return
	}
	fmt.Fprintln(w, "over the run, by tenths of its seconds:")
	table(w, head, rows)
}

// eventRuns lists the runs of every events source with their legend names.
func eventRuns(srcs []Source) (names []string, runs []bench.EventsRun) {
	multi := 0
	for _, s := range srcs {
		if s.Events != nil {
			multi++
		}
	}
	for _, s := range srcs {
		if s.Events == nil {
			continue
		}
		for _, r := range s.Events.Runs {
			if len(r.Samples) == 0 || len(runs) == maxSeries {
				continue
			}
			name := r.Store
			if multi > 1 {
				name = s.Label + ":" + name
			}
			names, runs = append(names, name), append(runs, r)
		}
	}
	return names, runs
}

// eventsRate draws inserts/s against seconds into the run, one line per
// store, with a mark under the line for every second a checkpoint was in
// progress.
func eventsRate(srcs []Source) (*plot.Plot, error) {
	names, runs := eventRuns(srcs)
	if len(runs) == 0 {
		return nil, nil
	}
	p := newPlot("Event workload: inserts/s over the run, thin: each second, thick: 30 s means (marks: checkpoint in progress)",
		"seconds into the run", "inserts/s")
	top := 0.0
	for _, r := range runs {
		for _, s := range r.Samples {
			top = max(top, s.IPS)
		}
	}
	for i, r := range runs {
		xys := make(plotter.XYs, len(r.Samples))
		var marks plotter.XYs
		for j, s := range r.Samples {
			xys[j] = plotter.XY{X: s.T, Y: s.IPS}
			if s.Checkpoint {
				marks = append(marks, plotter.XY{X: s.T, Y: top * (0.02 + 0.03*float64(i))})
			}
		}
		l, err := plotter.NewLine(xys)
		if err != nil {
			return nil, err
		}
		l.LineStyle = lineStyle(i)
		l.LineStyle.Width = vg.Points(0.4)
		mean, err := plotter.NewLine(movingMean(xys, 30))
		if err != nil {
			return nil, err
		}
		mean.LineStyle = lineStyle(i)
		mean.LineStyle.Width = vg.Points(2.5)
		p.Add(l, mean)
		p.Legend.Add(names[i], mean)
		if len(marks) > 0 {
			sc, err := plotter.NewScatter(marks)
			if err != nil {
				return nil, err
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: lineStyle(i).Color, Radius: vg.Points(1.5), Shape: draw.BoxGlyph{}}
			p.Add(sc)
			p.Legend.Add(names[i]+": checkpoint", sc)
		}
	}
	p.Y.Max = headroom(top)
	p.X.Min = 0
	return p, nil
}

// eventsWrite draws the server's write MB/s (solid), WAL MB/s (dashed)
// and the device's MB/s (dotted) against seconds into the run, one colour
// per store.
func eventsWrite(srcs []Source) (*plot.Plot, error) {
	names, runs := eventRuns(srcs)
	if len(runs) == 0 {
		return nil, nil
	}
	p := newPlot("Event workload: MB/s written by the server (solid), WAL (dashed), device (dotted); 10 s means",
		"seconds into the run", "MB/s")
	for i, r := range runs {
		var wr, wal, dev plotter.XYs
		for _, s := range r.Samples {
			if s.Seconds <= 0 {
				continue
			}
			if s.WriteBytes >= 0 {
				wr = append(wr, plotter.XY{X: s.T, Y: float64(s.WriteBytes) / mb / s.Seconds})
			}
			wal = append(wal, plotter.XY{X: s.T, Y: float64(s.WALBytes) / mb / s.Seconds})
			if s.DeviceWriteBytes >= 0 {
				dev = append(dev, plotter.XY{X: s.T, Y: float64(s.DeviceWriteBytes) / mb / s.Seconds})
			}
		}
		for k, xys := range []plotter.XYs{wr, wal, dev} {
			if len(xys) == 0 {
				continue
			}
			l, err := plotter.NewLine(movingMean(xys, 10))
			if err != nil {
				return nil, err
			}
			l.LineStyle = lineStyle(i)
			switch k {
			case 0:
				p.Legend.Add(names[i]+" server", l)
			case 1:
				l.LineStyle.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
				p.Legend.Add(names[i]+" WAL", l)
			case 2:
				l.LineStyle.Dashes = []vg.Length{vg.Points(1), vg.Points(2)}
				p.Legend.Add(names[i]+" device", l)
			}
			p.Add(l)
		}
	}
	p.X.Min = 0
	return p, nil
}

// movingMean returns, at each point, the mean of the y values of the
// window points ending there (fewer at the start): per-second rates of a
// busy server are too noisy to read a trend from.
func movingMean(xys plotter.XYs, window int) plotter.XYs {
	out := make(plotter.XYs, len(xys))
	sum := 0.0
	for i, xy := range xys {
		sum += xy.Y
		if i >= window {
			sum -= xys[i-window].Y
		}
		out[i] = plotter.XY{X: xy.X, Y: sum / float64(min(i+1, window))}
	}
	return out
}
