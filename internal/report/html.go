package report

import (
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"path/filepath"
	"regexp"
	"slices"

	"github.com/pgts/pgts/internal/bench"
)

// page is what the HTML template shows.
type page struct {
	Command  string // the `pgts report` command line
	Verdicts []pageVerdictGroup
	Sources  []pageSource
	Blocks   []block
	Charts   []pageChart
}

type pageVerdictGroup struct {
	Source   string
	Verdicts []pageVerdict
}

type pageVerdict struct {
	Sentence string
	Noisy    bool
}

type pageSource struct {
	Label    string
	Dir      string
	Commands []string
	Machine  []machineRow
	SameAs   string     // the label of the previous source when its machine rows are the same
	Files    []pageLink // the raw JSON results
	Complete bool
}

type machineRow struct{ Name, Value string }

type pageLink struct{ Name, Href string }

type pageChart struct {
	Title string
	Name  string
	Data  template.URL // data:image/png;base64,…
}

// block is a piece of the tables' section: a line or more of text, or a
// table.
type block struct {
	Text string
	Head []cell
	Rows [][]cell
}

type cell struct {
	Text string
	Num  bool // right-aligned
}

// blocks records the text tables' output as text and whole tables, so
// that the HTML page shows tables as tables.
type blocks struct{ list []block }

func (b *blocks) Write(p []byte) (int, error) {
	if n := len(b.list); n > 0 && b.list[n-1].Head == nil {
		b.list[n-1].Text += string(p)
	} else {
		b.list = append(b.list, block{Text: string(p)})
	}
	return len(p), nil
}

// numeric matches a cell the page right-aligns: a number with thousands
// separators, decimals, a sign, a unit suffix (%, ×) or a range, or "-".
var numeric = regexp.MustCompile(`^(-|[-+]?[0-9][0-9,]*(\.[0-9]+)?(%|×)?(–[0-9][0-9,]*(\.[0-9]+)?)?)$`)

// Table keeps a table; a column is numeric when every non-empty cell of it
// is, and its header is then right-aligned too.
func (b *blocks) Table(head []string, rows [][]string) {
	num := make([]bool, len(head))
	for j := range head {
		num[j] = false
		seen := false
		for _, r := range rows {
			if j < len(r) && r[j] != "" {
				seen = true
				if !numeric.MatchString(r[j]) {
					seen = false
					break
				}
			}
		}
		num[j] = seen
	}
	bl := block{}
	for j, h := range head {
		bl.Head = append(bl.Head, cell{Text: h, Num: num[j]})
	}
	for _, r := range rows {
		var cr []cell
		for j, c := range r {
			cr = append(cr, cell{Text: c, Num: j < len(num) && num[j]})
		}
		bl.Rows = append(bl.Rows, cr)
	}
	b.list = append(b.list, bl)
}

var pageTmpl = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>pgts benchmark report</title>
<style>
body { font-family: sans-serif; margin: 1.5em; color: #222; background: #fff; max-width: 1200px; }
pre, .note { font-size: 13px; white-space: pre-wrap; }
code { background: #f0f0f0; padding: 0 0.2em; }
figure { margin: 1em 0; }
img { display: block; width: 100%; height: auto; border: 1px solid #ddd; }
.incomplete, .noisy { color: #b00; font-weight: bold; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: 13px; margin: 0.3em 0 1em 0; }
th, td { border-bottom: 1px solid #ddd; padding: 0.2em 0.6em; text-align: left; white-space: nowrap; }
th { background: #f3f3f3; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
#verdict li { margin: 0.3em 0; }
</style>
</head>
<body>
<h1>pgts benchmark report</h1>
<section id="verdict">
<h2>Verdict</h2>
{{- if not .Verdicts}}
<p>These results hold no comparison (a single run of a single kind).</p>
{{- end}}
{{- range .Verdicts}}
<h3>{{.Source}}</h3>
<ul>
{{- range .Verdicts}}
<li>{{.Sentence}}{{if .Noisy}} <span class="noisy">⚠ the spread over repeats is larger than the difference</span>{{end}}</li>
{{- end}}
</ul>
{{- end}}
<p>Each repeat's run is paired with the base's run of the same repeat (runs are interleaved): a ratio is the median of
those pairs' ratios, its spread their lowest and highest; "one run" has no spread. The tables below show ratios of medians.</p>
</section>
<section id="results">
<h2>Results</h2>
<p>Rendered by <code>{{.Command}}</code></p>
{{- range .Sources}}
<h3>{{.Label}}{{if not .Complete}} <span class="incomplete">incomplete</span>{{end}}</h3>
<p>Directory {{.Dir}}; raw results:{{range .Files}} <a href="{{.Href}}">{{.Name}}</a>{{end}}</p>
{{- range .Commands}}
<p>command: <code>{{.}}</code></p>
{{- end}}
{{- if .SameAs}}
<p>Machine and server settings: as for {{.SameAs}}.</p>
{{- else}}
<table class="machine">
<tr><th colspan="2">machine and server settings</th></tr>
{{- range .Machine}}
<tr><td>{{.Name}}</td><td>{{.Value}}</td></tr>
{{- end}}
</table>
{{- end}}
{{- end}}
</section>
<section id="charts">
<h2>Charts</h2>
{{- range .Charts}}
<figure><img src="{{.Data}}" alt="{{.Title}}"><figcaption>{{.Title}} ({{.Name}})</figcaption></figure>
{{- end}}
</section>
<section id="tables">
<h2>Tables</h2>
{{- range .Blocks}}
{{- if .Head}}
<div class="scroll"><table class="results">
<thead><tr>{{range .Head}}<th{{if .Num}} class="num"{{end}}>{{.Text}}</th>{{end}}</tr></thead>
<tbody>
{{- range .Rows}}
<tr>{{range .}}<td{{if .Num}} class="num"{{end}}>{{.Text}}</td>{{end}}</tr>
{{- end}}
</tbody>
</table></div>
{{- else}}
<p class="note">{{.Text}}</p>
{{- end}}
{{- end}}
</section>
</body>
</html>
`))

// resultFiles are the JSON files a results directory may hold.
var resultFiles = []string{"load.json", "insert.json", "serve.json", "events.json", "versus.json"}

// WriteHTML writes one self-contained page: the verdict, the command
// lines, machines and server settings with links to the raw results, the
// charts embedded as data: URIs and the tables (tbl, recorded by
// WriteText). It needs no network access to display. outDir is where the
// page goes: the links to the results are relative to it.
func WriteHTML(w io.Writer, srcs []Source, tbl []block, charts []Chart, command, outDir string) error {
	pg := page{Command: command, Blocks: tbl}
	for _, v := range Verdicts(srcs) {
		if n := len(pg.Verdicts); n == 0 || pg.Verdicts[n-1].Source != v.Source {
			pg.Verdicts = append(pg.Verdicts, pageVerdictGroup{Source: v.Source})
		}
		g := &pg.Verdicts[len(pg.Verdicts)-1]
		g.Verdicts = append(g.Verdicts, pageVerdict{Sentence: v.Sentence, Noisy: v.Noisy()})
	}
	for _, s := range srcs {
		ps := pageSource{Label: s.Label, Dir: s.Dir, Commands: s.Commands(), Complete: true}
		var m bench.Machine
		has := map[string]bool{"load.json": s.Load != nil, "insert.json": s.Insert != nil, "serve.json": s.Serve != nil,
			"events.json": s.Events != nil, "versus.json": s.Versus != nil}
		if s.Load != nil {
			m, ps.Complete = s.Load.Machine, s.Load.Complete
		}
		if s.Insert != nil {
			m, ps.Complete = s.Insert.Machine, ps.Complete && s.Insert.Complete
		}
		if s.Serve != nil {
			m, ps.Complete = s.Serve.Machine, ps.Complete && s.Serve.Result.Complete
		}
		if s.Events != nil {
			m, ps.Complete = s.Events.Machine, ps.Complete && s.Events.Complete
		}
		if s.Versus != nil {
			m, ps.Complete = s.Versus.Machine, ps.Complete && s.Versus.Result.Complete
		}
		for _, f := range resultFiles {
			if has[f] {
				ps.Files = append(ps.Files, pageLink{Name: f, Href: relLink(outDir, filepath.Join(s.Dir, f))})
			}
		}
		ps.Machine = machineRows(m)
		var limit int64
		if s.Load != nil {
			limit = s.Load.Scenario.MemoryLimit
		}
		if s.Events != nil && s.Events.Scenario.MemoryLimit > 0 {
			limit = s.Events.Scenario.MemoryLimit
		}
		if limit > 0 {
			ps.Machine = append(ps.Machine, machineRow{"server memory limit", fmt.Sprintf("%d MiB (cgroup)", limit>>20)})
		}
		if n := len(pg.Sources); n > 0 && slices.Equal(pg.Sources[n-1].Machine, ps.Machine) {
			ps.SameAs = pg.Sources[n-1].Label
			if pg.Sources[n-1].SameAs != "" {
				ps.SameAs = pg.Sources[n-1].SameAs
			}
		}
		pg.Sources = append(pg.Sources, ps)
	}
	for _, c := range charts {
		pg.Charts = append(pg.Charts, pageChart{Title: c.Title, Name: c.Name,
			Data: template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(c.PNG))})
	}
	if err := pageTmpl.Execute(w, pg); err != nil {
		return fmt.Errorf("writing the HTML page: %w", err)
	}
	return nil
}

// relLink is target relative to dir, as a URL path; the absolute path
// when there is none.
func relLink(dir, target string) string {
	if dir != "" {
		if ad, err := filepath.Abs(dir); err == nil {
			if at, err := filepath.Abs(target); err == nil {
				if r, err := filepath.Rel(ad, at); err == nil {
					return filepath.ToSlash(r)
				}
			}
		}
	}
	return filepath.ToSlash(target)
}

// machineRows lists a machine's description and its server settings.
func machineRows(m bench.Machine) []machineRow {
	var out []machineRow
	add := func(k, v string) {
		if v != "" {
			out = append(out, machineRow{k, v})
		}
	}
	if m.Cores > 0 {
		add("cores", fmt.Sprint(m.Cores))
	}
	add("CPU", m.CPUModel)
	if m.MemoryBytes > 0 {
		add("memory", fmt.Sprintf("%.1f GiB", float64(m.MemoryBytes)/(1<<30)))
	}
	if m.Kernel != "" {
		add("kernel", "Linux "+m.Kernel)
	}
	add("Go", m.GoVersion)
	add("server", m.PostgreSQL)
	for _, k := range bench.ServerSettings {
		add(k, m.Settings[k])
	}
	for _, w := range m.Warnings {
		add("not recorded", w)
	}
	if len(out) == 0 {
		add("machine", "not recorded")
	}
	return out
}
