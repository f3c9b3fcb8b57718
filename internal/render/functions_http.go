package render

import (
	"net/http"
	"sort"
	"strings"
)

func sortStrings(s []string) { sort.Strings(s) }

// info is a function's description as /functions publishes it, the shape
// Grafana's query editor parses.
func (fd *funcDef) info(name string) obj {
	params := []any{}
	for _, p := range fd.params {
		o := obj{{"name", p.Name}, {"type", p.Type}}
		if p.Required {
			o = append(o, kv{"required", true})
		}
		if p.Default != nil {
			o = append(o, kv{"default", p.Default})
		}
		if p.Multiple {
			o = append(o, kv{"multiple", true})
		}
		if opts := p.listedOptions(); len(opts) > 0 {
			o = append(o, kv{"options", opts})
		}
		if len(p.Suggestions) > 0 {
			o = append(o, kv{"suggestions", p.Suggestions})
		}
		params = append(params, o)
	}
	return obj{
		{"name", name},
		{"function", name + "(" + fd.signature + ")"},
		{"description", fd.description},
		{"module", "graphite.render.functions"},
		{"group", fd.group},
		{"params", params},
	}
}

// listedOptions is graphite-web's Param.options: the parameter's own
// options and its type's (the aggregation functions; for aggOrSeriesFunc
// also every aggregator series function), without duplicates, sorted by
// Python's str().
func (p *param) listedOptions() []any {
	set := map[string]any{}
	add := func(v any) {
		k := "None"
		switch x := v.(type) {
		case string:
			k = x
		case bool:
			k = map[bool]string{true: "True", false: "False"}[x]
		}
		set[k] = v
	}
	for _, o := range p.Options {
		add(o)
	}
	for _, o := range p.extraOptions {
		add(o)
	}
	switch p.Type {
	case "aggFunc", "aggOrSeriesFunc":
		for n := range aggFuncs {
			add(n)
		}
		if p.Type == "aggOrSeriesFunc" {
			for _, n := range functionNames {
				if functionIndex[n].aggregator {
					add(n)
				}
			}
		}
	}
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]any, len(keys))
	for i, k := range keys {
		out[i] = set[k]
	}
	return out
}

// serveFunctions answers /functions (all, or grouped=1, or one group) and
// /functions/<name>. There are no pie-chart functions: type=pie is empty.
func (h *Handler) serveFunctions(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if err := r.ParseForm(); err != nil {
		badRequest(w, "reading query: "+err.Error())
		return
	}
	pie := r.Form.Get("type") == "pie"
	if name := strings.Trim(strings.TrimPrefix(r.URL.Path, "/functions"), "/"); name != "" {
		fd, ok := functionIndex[name]
		if !ok || pie {
			http.Error(w, "Function not found: "+name, http.StatusNotFound)
			return
		}
		writeJSON(w, r, fd.info(name))
		return
	}
	grouped := strings.ToLower(r.Form.Get("grouped"))
	isGrouped := grouped == "1" || grouped == "true"
	group, hasGroup := r.Form.Get("group"), r.Form.Has("group")
	flat := map[string]any{}
	groups := map[string]any{}
	if !pie {
		for _, name := range functionNames {
			fd := functionIndex[name]
			if hasGroup && fd.group != group {
				continue
			}
			if isGrouped {
				g, _ := groups[fd.group].(map[string]any)
				if g == nil {
					g = map[string]any{}
					groups[fd.group] = g
				}
				g[name] = fd.info(name)
			} else {
				flat[name] = fd.info(name)
			}
		}
	}
	if isGrouped {
		writeJSON(w, r, groups)
		return
	}
	writeJSON(w, r, flat)
}
