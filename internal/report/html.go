package report

import (
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"strings"

	"github.com/pgts/pgts/internal/bench"
)

// page is what the HTML template shows.
type page struct {
	Command string // the `pgts report` command line
	Sources []pageSource
	Text    string
	Charts  []pageChart
}

type pageSource struct {
	Label    string
	Dir      string
	Commands []string
	Machine  string
	Complete bool
}

type pageChart struct {
	Title string
	Name  string
	Data  template.URL // data:image/png;base64,…
}

var pageTmpl = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>pgts benchmark report</title>
<style>
body { font-family: sans-serif; margin: 1.5em; color: #222; background: #fff; }
pre { font-size: 13px; background: #f6f6f6; padding: 0.8em; overflow-x: auto; }
code { background: #f0f0f0; padding: 0 0.2em; }
figure { margin: 1em 0; }
img { display: block; width: 756px; height: 416px; border: 1px solid #ddd; }
.incomplete { color: #b00; font-weight: bold; }
</style>
</head>
<body>
<h1>pgts benchmark report</h1>
<p>Rendered by <code>{{.Command}}</code></p>
<h2>Results</h2>
<ul>
{{- range .Sources}}
<li><b>{{.Label}}</b> ({{.Dir}}){{if not .Complete}} <span class="incomplete">incomplete</span>{{end}}
{{- range .Commands}}<br>command: <code>{{.}}</code>{{end}}
<br>machine: {{.Machine}}</li>
{{- end}}
</ul>
<h2>Charts</h2>
{{- range .Charts}}
<figure><img src="{{.Data}}" alt="{{.Title}}" width="756" height="416"><figcaption>{{.Title}} ({{.Name}})</figcaption></figure>
{{- end}}
<h2>Tables</h2>
<pre>{{.Text}}</pre>
</body>
</html>
`))

// WriteHTML writes one self-contained page: the command lines, machines,
// the charts embedded as data: URIs and the text tables. It needs no
// network access to display.
func WriteHTML(w io.Writer, srcs []Source, text string, charts []Chart, command string) error {
	pg := page{Command: command, Text: text}
	for _, s := range srcs {
		ps := pageSource{Label: s.Label, Dir: s.Dir, Commands: s.Commands(), Complete: true}
		var m bench.Machine
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
		ps.Machine = describe(m)
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

// describe is a one-line summary of a machine.
func describe(m bench.Machine) string {
	var parts []string
	if m.Cores > 0 {
		parts = append(parts, fmt.Sprintf("%d cores", m.Cores))
	}
	if m.CPUModel != "" {
		parts = append(parts, m.CPUModel)
	}
	if m.MemoryBytes > 0 {
		parts = append(parts, fmt.Sprintf("%.1f GiB RAM", float64(m.MemoryBytes)/(1<<30)))
	}
	if m.Kernel != "" {
		parts = append(parts, "Linux "+m.Kernel)
	}
	if m.GoVersion != "" {
		parts = append(parts, m.GoVersion)
	}
	if v, _, _ := strings.Cut(m.PostgreSQL, " on "); v != "" {
		parts = append(parts, v)
	}
	for _, k := range bench.ServerSettings {
		if v, ok := m.Settings[k]; ok {
			parts = append(parts, k+"="+v)
		}
	}
	if len(parts) == 0 {
		return "not recorded"
	}
	return strings.Join(parts, ", ")
}
