package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"html"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pgts/pgts/internal/bench"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// fixture writes two results directories, "base" and "other", each with a
// load.json and an insert.json of made-up but plausible figures.
func fixture(t *testing.T) (dirs []string) {
	t.Helper()
	root := t.TempDir()
	for i, name := range []string{"base", "other"} {
		dir := filepath.Join(root, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		k := float64(i + 1)
		var runs []bench.LoadRun
		for j, loader := range []string{"psql-pipe", "pgts-binary"} {
			r := bench.LoadRun{Store: "weekly", Loader: loader, Workers: 1 + j, Repeat: 1, Rows: 200_000, Seconds: 4 / k,
				RowsPerSec: 50_000 * k * float64(j+1), ClientCPU: 1.5, ServerCPU: 3 * k, WALBytes: 40_000_000, TableBytes: 15 << 20,
				IndexBytes: 5 << 20, Verified: true}
			for b := 0; b < 20; b++ {
				d := 200.0 / k / float64(j+1) * (1 + float64(b%7)/10)
				r.Batches = append(r.Batches, bench.BatchTiming{StartMS: float64(b) * 200, DurationMS: d, Rows: 10_000})
			}
			runs = append(runs, r)
		}
		lf := LoadFile{Runs: runs, Summary: bench.Summarize(runs), Complete: true, Command: "pgts bench load --batches 20",
			Scenario: bench.LoadScenario{MemoryLimit: 128 << 20},
			Machine: bench.Machine{Cores: 2, MemoryBytes: 8 << 30, Kernel: "6.1.0", GoVersion: "go1.26", PostgreSQL: "PostgreSQL 16.4 on x86_64",
				Settings: map[string]string{"shared_buffers": "128MB"}}}
		ir := bench.InsertResult{Scenario: bench.InsertScenario{TableKind: []string{"plain", "pgts"}[i]}, Command: "pgts bench insert",
			Machine: lf.Machine, Complete: i == 0, Rows: 1000}
		if i == 1 {
			ir.Error = "step qp100: interrupted"
		}
		for j, st := range []string{"l.i0", "l.x", "l.i1", "l.i2", "qr100", "qp100"} {
			s := bench.InsertStep{Name: st, Seconds: 10, Complete: !(i == 1 && st == "qp100"), DBGB: 0.1 * float64(j+1), MaxOpMS: 20 * k,
				CPUPerOp: 100 * k, RateP50: 900, RateP99: 1100}
			switch {
			case bench.IsQueryStep(st):
				s.Inserts, s.IPS, s.TargetIPS, s.Queries, s.QPS = 1000, 100-float64(i)*10, 100, 20000/int64(k), 2000/k
				s.WriterSlow = s.IPS < 95
				s.WKBPerIns = 2 * k
			case st != "l.x":
				s.Inserts, s.IPS, s.WKBPerIns = 100_000, 10_000/k/float64(j+1), 1.5*k
			}
			ir.Steps = append(ir.Steps, s)
		}
		writeJSONFile(t, filepath.Join(dir, "load.json"), lf)
		writeJSONFile(t, filepath.Join(dir, "insert.json"), ir)
		dirs = append(dirs, dir)
	}
	return dirs
}

func writeJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (go test -update rewrites it); got:\n%s", name, got)
	}
}

func TestTextGolden(t *testing.T) {
	dirs := fixture(t)
	srcs, err := Read(dirs)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ base, file string }{{"", "text-default.golden"}, {"other", "text-base-other.golden"},
		{"other:weekly/pgts-binary/2", "text-base-load.golden"}} {
		var b bytes.Buffer
		if err := WriteText(&b, srcs, c.base); err != nil {
			t.Fatalf("base %q: %v", c.base, err)
		}
		golden(t, c.file, b.String())
	}
	var be *BaseError
	if err := WriteText(&bytes.Buffer{}, srcs, "nosuch"); !errors.As(err, &be) {
		t.Errorf("unknown base: err = %v", err)
	}
	// weekly/psql-pipe/1 is in both sources: ambiguous without a label.
	if err := WriteText(&bytes.Buffer{}, srcs, "weekly/psql-pipe/1"); !errors.As(err, &be) {
		t.Errorf("ambiguous base: err = %v", err)
	}
}

func TestReadErrors(t *testing.T) {
	if _, err := Read([]string{t.TempDir()}); err == nil || !strings.Contains(err.Error(), "no load.json") {
		t.Errorf("empty dir: %v", err)
	}
	d := t.TempDir()
	os.WriteFile(filepath.Join(d, "insert.json"), []byte("{"), 0o644)
	if _, err := Read([]string{d}); err == nil || !strings.Contains(err.Error(), "parsing results") {
		t.Errorf("bad JSON: %v", err)
	}
}

// checkPNG decodes a chart and checks its size and that it is not blank:
// many pixels are neither white nor grey (the lines and bars).
func checkPNG(t *testing.T, name string, b []byte) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if r := img.Bounds(); r.Dx() < 600 || r.Dy() < 300 {
		t.Errorf("%s: %v, too small", name, r)
	}
	if n := colored(img, img.Bounds()); n < 500 {
		t.Errorf("%s: only %d coloured pixels: blank chart?", name, n)
	}
}

// colored counts the saturated pixels of r (chart colours, not text).
func colored(img image.Image, r image.Rectangle) int {
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			hi, lo := max(cr, cg, cb)>>8, min(cr, cg, cb)>>8
			if hi-lo > 80 {
				n++
			}
		}
	}
	return n
}

func TestRender(t *testing.T) {
	dirs := fixture(t)
	out := t.TempDir()
	res, text, err := Render(Options{Dirs: dirs, Out: out, Command: "pgts report base other"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"load-batches.png", "load-batches-sorted.png", "load-average.png", "insert-steps.png", "query-steps.png"}
	checkCharts(t, res.Charts, want)
	if b, err := os.ReadFile(res.Text); err != nil || string(b) != text || !strings.Contains(text, "qp100") {
		t.Errorf("report.txt: %v", err)
	}
	page, err := os.ReadFile(res.HTML)
	if err != nil {
		t.Fatal(err)
	}
	html := string(page)
	if n := strings.Count(html, `src="data:image/png;base64,`); n != len(want) {
		t.Errorf("%d embedded images, want %d", n, len(want))
	}
	for _, s := range []string{"pgts report base other", "pgts bench load --batches 20", "PostgreSQL 16.4", "incomplete",
		`<section id="verdict">`, "pgts-binary with 2 workers loaded 2.00× psql-pipe into weekly native partitions (one run).",
		"shared_buffers", "<td>server memory limit</td><td>128 MiB (cgroup)</td>", "Machine and server settings: as for base.",
		`<th class="num">rows/s</th>`} {
		if !strings.Contains(html, s) {
			t.Errorf("page lacks %q", s)
		}
	}
	// The raw results are linked relative to the page.
	links := regexp.MustCompile(`<a href="([^"]+)">(load|insert)\.json</a>`).FindAllStringSubmatch(html, -1)
	if len(links) != 4 {
		t.Errorf("%d links to results, want 4", len(links))
	}
	for _, l := range links {
		if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(l[1]))); err != nil || filepath.IsAbs(l[1]) {
			t.Errorf("link %q does not lead to the results from %s: %v", l[1], out, err)
		}
	}
	if i, j := strings.Index(html, `id="verdict"`), strings.Index(html, `id="tables"`); i < 0 || j < i {
		t.Error("the verdict does not come before the tables")
	}
	if !strings.HasPrefix(text, "Verdict") {
		t.Errorf("report.txt does not open with the verdict:\n%s", text[:min(len(text), 300)])
	}
	if strings.Contains(html, "http://") || strings.Contains(html, "https://") {
		t.Error("the page refers to the network")
	}
	checkInBrowser(t, res.HTML, len(want))
}

// browserCheck is what the page shows in Chromium, gathered by a script
// appended to a copy of it (the page itself has none).
type browserCheck struct {
	Verdicts  int   `json:"verdicts"`   // sentences of the verdict section
	Tables    int   `json:"tables"`     // tables of results
	NumCells  int   `json:"num_cells"`  // cells styled as numbers
	NumRight  int   `json:"num_right"`  // of those, right-aligned as rendered
	Images    []int `json:"images"`     // naturalWidth of each chart; 0 when it did not load
	FullWidth int   `json:"full_width"` // charts drawn at least 90% of their section's width
}

const checkScript = `<pre id="check"></pre>
<script>
window.addEventListener('load', function () {
  var num = document.querySelectorAll('table.results td.num'), right = 0;
  num.forEach(function (c) { if (getComputedStyle(c).textAlign === 'right') right++; });
  var imgs = Array.prototype.slice.call(document.images);
  var sec = document.getElementById('charts').clientWidth;
  document.getElementById('check').textContent = JSON.stringify({
    verdicts: document.querySelectorAll('#verdict li').length,
    tables: document.querySelectorAll('table.results').length,
    num_cells: num.length, num_right: right,
    images: imgs.map(function (i) { return i.complete ? i.naturalWidth : 0; }),
    full_width: imgs.filter(function (i) { return i.clientWidth >= 0.9 * sec; }).length
  });
});
</script>
</body>`

// checkInBrowser loads the page in headless Chromium and checks, in the
// DOM Chromium built, that the verdict and the tables are there, that
// numbers are right-aligned and that every chart loaded (a naturalWidth)
// and is drawn at the page's full width.
func checkInBrowser(t *testing.T, page string, charts int) {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium is needed to check the HTML report (make test installs it: apt-get install chromium): %v", err)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	probe := filepath.Join(filepath.Dir(page), "probe.html")
	if err := os.WriteFile(probe, []byte(strings.Replace(string(b), "</body>", checkScript, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(probe)
	cmd := exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--window-size=1300,900", "--user-data-dir="+t.TempDir(), "--virtual-time-budget=10000", "--dump-dom", "file://"+probe)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	dom, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium: %v\n%s", err, stderr.String())
	}
	m := regexp.MustCompile(`(?s)<pre id="check">(.*?)</pre>`).FindSubmatch(dom)
	if m == nil || len(m[1]) == 0 {
		t.Fatalf("the check script did not run; DOM:\n%.2000s", dom)
	}
	var c browserCheck
	if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &c); err != nil {
		t.Fatalf("check result %q: %v", m[1], err)
	}
	if c.Verdicts == 0 || c.Tables == 0 || c.NumCells == 0 || c.NumRight != c.NumCells {
		t.Errorf("in the browser: %d verdict sentences, %d tables, %d of %d number cells right-aligned", c.Verdicts, c.Tables,
			c.NumRight, c.NumCells)
	}
	if len(c.Images) != charts || c.FullWidth != charts {
		t.Errorf("in the browser: %d images (%d at full width), want %d", len(c.Images), c.FullWidth, charts)
	}
	for i, w := range c.Images {
		if w < 600 {
			t.Errorf("chart %d: naturalWidth %d: not loaded", i, w)
		}
	}
}

// TestServeReport renders a daemon benchmark's results: its step table and
// its three charts.
func TestServeReport(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "serve")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	res := bench.ServeResult{Scenario: bench.ServeScenario{Series: []int{1000}, Rates: []float64{500, 1000}, WindowS: 10,
		Archives: []string{"10s:6h"}}, Best: map[string]float64{"1000": 500}, Complete: true}
	for i, rate := range []float64{500, 1000} {
		st := bench.ServeStep{Series: 1000, Rate: rate, AckedRate: rate * (1 - 0.1*float64(i)), PeakCache: 5 << 20, PeakRSS: 50 << 20,
			Sustained: i == 0}
		if i == 1 {
			st.Reason = "acknowledged 900 points/s, under 98% of 1000"
		}
		for s := 0; s < 12; s++ {
			st.Samples = append(st.Samples, bench.ServeSample{T: float64(s), Acked: rate, Added: rate - float64(s%3), CacheBytes: int64(s) << 18,
				RSS: 40<<20 + int64(s)<<20, Waiting: int64(i * s * 10)})
		}
		res.Steps = append(res.Steps, st)
	}
	writeJSONFile(t, filepath.Join(dir, "serve.json"), ServeFile{Result: res, Command: "pgts bench serve --series 1000"})
	out, text, err := Render(Options{Dirs: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"highest sustained rate with 1,000 series: 500 points/s", "under 98% of 1000", "sustained"} {
		if !strings.Contains(text, s) {
			t.Errorf("text lacks %q:\n%s", s, text)
		}
	}
	want := []string{"serve-rates.png", "serve-memory.png", "serve-waiting.png"}
	checkCharts(t, out.Charts, want)
}

// checkCharts checks the chart files' names, in order, and that each is a
// PNG of the expected size with drawn content.
func checkCharts(t *testing.T, charts, want []string) {
	t.Helper()
	if len(charts) != len(want) {
		t.Fatalf("charts %v, want %v", charts, want)
	}
	for i, p := range charts {
		if filepath.Base(p) != want[i] {
			t.Errorf("chart %d = %s, want %s", i, p, want[i])
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		checkPNG(t, p, b)
	}
}
