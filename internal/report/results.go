// Package report renders benchmark results (the JSON files `pgts bench`
// writes) as text tables, PNG charts and one self-contained HTML page.
// It reads results and formats them; it measures nothing.
//
// Glossary:
//
//	source    one results directory: its load.json, insert.json, serve.json,
//	          events.json and/or versus.json
//	label     a source's name in tables and legends: its directory's base name
//	entry     one row of a table: a store/loader/workers combination of a
//	          load source, or an insert step of an insert source
//	key       how --base names an entry: label:store/loader/workers for
//	          load entries, label for insert sources (the part after the
//	          colon alone is enough when it is unambiguous)
//	ratio     an entry's figure divided by the base's, as the insert
//	          benchmark reports them: a throughput ratio < 1 is slower, a
//	          hardware-per-operation ratio (CPU, bytes written) > 1 is worse
package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/pgts/pgts/internal/bench"
)

// LoadFile is the content of load.json.
type LoadFile struct {
	Scenario bench.LoadScenario  `json:"scenario"`
	Summary  []bench.LoadSummary `json:"summary"`
	Runs     []bench.LoadRun     `json:"runs"`
	Complete bool                `json:"complete"`
	Command  string              `json:"command"`
	Machine  bench.Machine       `json:"machine"`
}

// ServeFile is the content of serve.json.
type ServeFile struct {
	Result  bench.ServeResult `json:"result"`
	Command string            `json:"command"`
	Machine bench.Machine     `json:"machine"`
}

// VersusFile is the content of versus.json: pgts serve beside
// VictoriaMetrics (`pgts bench serve --vm`).
type VersusFile struct {
	Kind    string             `json:"kind"`
	Result  bench.VersusResult `json:"result"`
	Command string             `json:"command"`
	Machine bench.Machine      `json:"machine"`
}

// Source is one results directory.
type Source struct {
	Dir    string
	Label  string
	Load   *LoadFile           // nil without load.json
	Insert *bench.InsertResult // nil without insert.json
	Serve  *ServeFile          // nil without serve.json
	Events *bench.EventsResult // nil without events.json
	Versus *VersusFile         // nil without versus.json
}

// Commands lists the command lines that produced the source's results.
func (s Source) Commands() []string {
	var out []string
	if s.Load != nil && s.Load.Command != "" {
		out = append(out, s.Load.Command)
	}
	if s.Insert != nil && s.Insert.Command != "" {
		out = append(out, s.Insert.Command)
	}
	if s.Serve != nil && s.Serve.Command != "" {
		out = append(out, s.Serve.Command)
	}
	if s.Events != nil && s.Events.Command != "" {
		out = append(out, s.Events.Command)
	}
	if s.Versus != nil && s.Versus.Command != "" {
		out = append(out, s.Versus.Command)
	}
	return out
}

// Read loads the results of every directory. A directory with none of
// load.json, insert.json, serve.json, events.json and versus.json is an error; so is a file that does not parse.
// Labels are the directories' base names, made unique with a suffix.
func Read(dirs []string) ([]Source, error) {
	if len(dirs) == 0 {
		return nil, errors.New("no results directory given")
	}
	seen := map[string]int{}
	var out []Source
	for _, d := range dirs {
		s := Source{Dir: d, Label: filepath.Base(filepath.Clean(d))}
		if n := seen[s.Label]; n > 0 {
			s.Label += "#" + strconv.Itoa(n+1)
		}
		seen[filepath.Base(filepath.Clean(d))]++
		var lf LoadFile
		okLoad, err := readJSON(filepath.Join(d, "load.json"), &lf)
		if err != nil {
			return nil, err
		}
		if okLoad {
			s.Load = &lf
		}
		var ir bench.InsertResult
		okIns, err := readJSON(filepath.Join(d, "insert.json"), &ir)
		if err != nil {
			return nil, err
		}
		if okIns {
			s.Insert = &ir
		}
		var sf ServeFile
		okServe, err := readJSON(filepath.Join(d, "serve.json"), &sf)
		if err != nil {
			return nil, err
		}
		if okServe {
			s.Serve = &sf
		}
		var ev bench.EventsResult
		okEvents, err := readJSON(filepath.Join(d, "events.json"), &ev)
		if err != nil {
			return nil, err
		}
		if okEvents {
			s.Events = &ev
		}
		var vf VersusFile
		okVersus, err := readJSON(filepath.Join(d, "versus.json"), &vf)
		if err != nil {
			return nil, err
		}
		if okVersus {
			s.Versus = &vf
		}
		if !okLoad && !okIns && !okServe && !okEvents && !okVersus {
			return nil, fmt.Errorf("results directory %q: no load.json, insert.json, serve.json, events.json or versus.json", d)
		}
		out = append(out, s)
	}
	return out, nil
}

// readJSON decodes path into v; a missing file is (false, nil).
func readJSON(path string, v any) (bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading results: %w", err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("parsing results %q: %w", path, err)
	}
	return true, nil
}
