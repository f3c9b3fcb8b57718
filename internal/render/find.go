package render

import (
	"context"
	"net/url"
	"sort"
	"strings"
)

// lastNode is the final dot-separated node of a path.
func lastNode(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[i+1:]
	}
	return path
}

// find runs one search, drops branches when leavesOnly, sorts by node
// name (stable, branches before leaves for equal paths as sources return
// them) and refuses more than limit results.
func find(ctx context.Context, src Source, query string, leavesOnly bool, limit int) ([]Node, error) {
	if _, err := CompileGlob(query); err != nil {
		return nil, &InputError{Msg: err.Error()}
	}
	nodes, err := src.Find(ctx, query)
	if err != nil {
		return nil, err
	}
	// tagged series (name;k=v) are not part of the tree, as in
	// graphite-web; seriesByTag and /tags reach them
	kept := nodes[:0]
	for _, n := range nodes {
		if (n.Leaf || !leavesOnly) && !strings.Contains(n.Path, ";") {
			kept = append(kept, n)
		}
	}
	nodes = kept
	if len(nodes) > limit {
		return nil, inputErrorf("%q matches more than %d nodes; narrow the query", query, limit)
	}
	sort.SliceStable(nodes, func(i, j int) bool { return lastNode(nodes[i].Path) < lastNode(nodes[j].Path) })
	return nodes, nil
}

// treeJSON is graphite-web's default find format, the one Grafana's
// metric browser reads: branches first, then leaves, each name once,
// optionally led by a "*" node.
//
//	[{"text": "cpu", "id": "servers.web1.cpu", "allowChildren": 0, "expandable": 0, "leaf": 1}]
func treeJSON(nodes []Node, basePath string, wildcards bool) []any {
	branch := func(o obj) obj {
		return append(o, kv{"allowChildren", 1}, kv{"expandable", 1}, kv{"leaf", 0})
	}
	leaf := func(o obj) obj {
		return append(o, kv{"allowChildren", 0}, kv{"expandable", 0}, kv{"leaf", 1})
	}
	out := []any{}
	if len(nodes) > 1 && wildcards {
		w := obj{{"text", "*"}, {"id", basePath + "*"}}
		anyBranch := false
		for _, n := range nodes {
			anyBranch = anyBranch || !n.Leaf
		}
		if anyBranch {
			out = append(out, branch(w))
		} else {
			out = append(out, leaf(w))
		}
	}
	seen := map[string]bool{}
	var branches, leaves []any
	for _, n := range nodes {
		name := lastNode(n.Path)
		if seen[name] {
			continue
		}
		seen[name] = true
		text := name
		if u, err := url.QueryUnescape(name); err == nil {
			text = u
		}
		o := obj{{"text", text}, {"id", basePath + name}}
		if n.Leaf {
			leaves = append(leaves, leaf(o))
		} else {
			branches = append(branches, branch(o))
		}
	}
	out = append(out, branches...)
	return append(out, leaves...)
}

// completerJSON is the find format of Graphite's composer autocompleter.
func completerJSON(nodes []Node, wildcards bool) obj {
	metrics := []any{}
	for _, n := range nodes {
		path, isLeaf := n.Path, "1"
		if !n.Leaf {
			path, isLeaf = path+".", "0"
		}
		metrics = append(metrics, obj{{"path", path}, {"name", lastNode(n.Path)}, {"is_leaf", isLeaf}})
	}
	if len(metrics) > 1 && wildcards {
		metrics = append(metrics, obj{{"name", "*"}})
	}
	return obj{{"metrics", metrics}}
}

// nodesJSON is the find format=json: paths with leaf flags, sorted by path.
func nodesJSON(nodes []Node) []any {
	sorted := append([]Node(nil), nodes...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	out := []any{}
	for _, n := range sorted {
		o := obj{{"path", n.Path}, {"is_leaf", n.Leaf}}
		if n.Leaf {
			o = append(o, kv{"intervals", []any{}})
		}
		out = append(out, o)
	}
	return out
}

// nodelistJSON is the find format=nodelist: the distinct values of node
// position (negative counts from the end) across the matches.
func nodelistJSON(nodes []Node, position int) obj {
	set := map[string]bool{}
	for _, n := range nodes {
		parts := strings.Split(n.Path, ".")
		i := position
		if i < 0 {
			i += len(parts)
		}
		if i >= 0 && i < len(parts) {
			set[parts[i]] = true
		}
	}
	vals := make([]string, 0, len(set))
	for v := range set {
		vals = append(vals, v)
	}
	sort.Strings(vals)
	return obj{{"nodes", vals}}
}

// index lists every leaf path under the root, walking branches level by
// level, refusing more than limit nodes.
func index(ctx context.Context, src Source, limit int) ([]string, error) {
	var leaves []string
	seenLeaf := map[string]bool{}
	visited := 0
	queue := []string{"*"}
	for len(queue) > 0 {
		pattern := queue[0]
		queue = queue[1:]
		nodes, err := src.Find(ctx, pattern)
		if err != nil {
			return nil, err
		}
		visited += len(nodes)
		if visited > limit {
			return nil, inputErrorf("the index has more than %d nodes", limit)
		}
		for _, n := range nodes {
			if strings.Contains(n.Path, ";") {
				continue // tagged: outside the tree
			}
			if n.Leaf {
				if !seenLeaf[n.Path] {
					seenLeaf[n.Path] = true
					leaves = append(leaves, n.Path)
				}
			} else {
				queue = append(queue, globEscape(n.Path)+".*")
			}
		}
	}
	sort.Strings(leaves)
	return leaves, nil
}

// globEscape quotes glob metacharacters in a literal path by wrapping
// each in a one-character set: "a*b" becomes "a[*]b".
func globEscape(path string) string {
	if !strings.ContainsAny(path, "*?[]{}") {
		return path
	}
	var b strings.Builder
	for _, r := range path {
		if strings.ContainsRune("*?[]{}", r) {
			b.WriteString("[" + string(r) + "]")
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}
