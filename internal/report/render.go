package report

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Options configure Render.
type Options struct {
	Dirs    []string // results directories, in the order tables list them
	Out     string   // output directory; "" means Dirs[0]
	Base    string   // the base of the ratios (see the package glossary); "" is the first
	Command string   // the command line shown on the HTML page
}

// Validate checks the options.
func (o *Options) Validate() error {
	if len(o.Dirs) == 0 {
		return errors.New("no results directory given")
	}
	return nil
}

// Output names the files Render wrote.
type Output struct {
	Text   string   // report.txt
	Charts []string // the PNG files
	HTML   string   // report.html
}

// Render reads the results of o.Dirs and writes report.txt (the verdict,
// then the tables), one PNG per chart and report.html into o.Out, replacing earlier reports there (the
// results themselves are never touched). It returns the text too.
func Render(o Options) (Output, string, error) {
	if err := o.Validate(); err != nil {
		return Output{}, "", err
	}
	srcs, err := Read(o.Dirs)
	if err != nil {
		return Output{}, "", err
	}
	out := o.Out
	if out == "" {
		out = o.Dirs[0]
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return Output{}, "", fmt.Errorf("report directory: %w", err)
	}
	var text bytes.Buffer
	if err := WriteVerdict(&text, srcs); err != nil {
		return Output{}, "", err
	}
	if err := WriteText(&text, srcs, o.Base); err != nil {
		return Output{}, "", err
	}
	var tbl blocks
	if err := WriteText(&tbl, srcs, o.Base); err != nil {
		return Output{}, "", err
	}
	charts, err := Charts(srcs)
	if err != nil {
		return Output{}, "", err
	}
	res := Output{Text: filepath.Join(out, "report.txt"), HTML: filepath.Join(out, "report.html")}
	if err := os.WriteFile(res.Text, text.Bytes(), 0o644); err != nil {
		return Output{}, "", fmt.Errorf("writing the report: %w", err)
	}
	for _, c := range charts {
		p := filepath.Join(out, c.Name)
		if err := os.WriteFile(p, c.PNG, 0o644); err != nil {
			return Output{}, "", fmt.Errorf("writing chart: %w", err)
		}
		res.Charts = append(res.Charts, p)
	}
	var page bytes.Buffer
	if err := WriteHTML(&page, srcs, tbl.list, charts, o.Command, out); err != nil {
		return Output{}, "", err
	}
	if err := os.WriteFile(res.HTML, page.Bytes(), 0o644); err != nil {
		return Output{}, "", fmt.Errorf("writing the HTML page: %w", err)
	}
	return res, text.String(), nil
}
