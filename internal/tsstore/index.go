package tsstore

import (
	"slices"
	"strings"
	"sync"
)

// index is the lookup structure of the series registry, so that Find and
// the tag queries of the render API answer without scanning every key:
//
//   - untagged keys sit in a tree of their dot-separated nodes (Find walks
//     it node by node, looking literal nodes up directly);
//   - tagged keys ("name;k1=v1;k2=v2") have an inverted index tag →
//     value → the ordinals of the series holding it, ascending. The
//     metric name is indexed as the tag "name", leading '~' stripped, as
//     Graphite names it. An ordinal is a tagged key's place in tagged,
//     the order of insertion.
//
// Series are never removed, so ordinals are stable and posting lists
// grow by appending. The zero value is ready.
// Safe for concurrent use: add takes the write lock, lookups the read
// lock; callers may hold a shard lock when calling add, and no method
// takes a shard lock, so index locks always come last.
type index struct {
	mu     sync.RWMutex
	root   treeNode
	tagged []string                      // the tagged keys, by ordinal
	post   map[string]map[string][]int32 // tag → value → ordinals, ascending

	// sorted caches each tag's values in order, for prefix lookups;
	// values are never removed, so a list as long as the tag's value map
	// is current. Guarded by sortMu, taken with mu held (read or write).
	sortMu sync.Mutex
	sorted map[string][]string
}

// treeNode is one node of the tree of untagged keys. Its children sit in
// a short slice while they are few (most inner nodes of a Graphite tree
// have one to a handful: host.cpu.user), in a map beyond that. A child
// that is a leaf with no children of its own (most of them) is the
// shared leafNode, so that a leaf costs only its slot in its parent.
type treeNode struct {
	few  []treeChild          // the children while at most fewChildren
	many map[string]*treeNode // the children beyond that; few is then nil
	leaf bool                 // a key ends here
}

// treeChild is a child in treeNode.few: its name (a part of a key,
// sharing the key's bytes) and node.
type treeChild struct {
	name string
	node *treeNode
}

// fewChildren is the most children a node keeps in its slice.
const fewChildren = 8

// leafNode stands for every leaf without children; never changed.
var leafNode = &treeNode{leaf: true}

// child returns the child named part, nil if none.
func (n *treeNode) child(part string) *treeNode {
	if n.many != nil {
		return n.many[part]
	}
	for i := range n.few {
		if n.few[i].name == part {
			return n.few[i].node
		}
	}
	return nil
}

// setChild adds or replaces the child named part and returns the heap
// bytes it is estimated to have taken.
func (n *treeNode) setChild(part string, c *treeNode) (bytes int64) {
	if n.many != nil {
		// One map operation, not a lookup and then an assignment: a
		// node may hold a million children, each added once.
		before := len(n.many)
		n.many[part] = c
		if len(n.many) > before {
			bytes = idxEntryBytes
		}
		return bytes
	}
	for i := range n.few {
		if n.few[i].name == part {
			n.few[i].node = c
			return 0
		}
	}
	if len(n.few) < fewChildren {
		if len(n.few) == cap(n.few) {
			bytes = idxChildBytes * int64(max(cap(n.few), 1))
		}
		n.few = append(n.few, treeChild{part, c})
		return bytes
	}
	n.many = make(map[string]*treeNode, 2*fewChildren)
	for _, k := range n.few {
		n.many[k.name] = k.node
	}
	n.many[part] = c
	bytes = idxMapBytes + fewChildren*idxEntryBytes - int64(cap(n.few))*idxChildBytes
	n.few = nil
	return bytes
}

// children calls f for each child.
func (n *treeNode) children(f func(part string, c *treeNode)) {
	for _, k := range n.few {
		f(k.name, k.node)
	}
	for part, c := range n.many {
		f(part, c)
	}
}

// hasChildren is whether any key continues below n.
func (n *treeNode) hasChildren() bool { return len(n.few) > 0 || len(n.many) > 0 }

// Estimated heap bytes of the index's parts, for the store's memory
// accounting: a new map (a small Go map's header and first group), an
// inner tree node, a child in a node's slice, an entry of a node's map
// (a string and a pointer at the map's load), a tagged key's slot in
// tagged, a posting entry.
const (
	idxMapBytes     = 208
	idxNodeBytes    = 48
	idxChildBytes   = 24
	idxEntryBytes   = 36
	idxKeyBytes     = 20
	idxPostingBytes = 6
)

// add indexes a key added to the registry and returns the heap bytes it
// is estimated to have taken. A key must be added once.
func (ix *index) add(key string) (bytes int64) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	metric, rest, tagged := strings.Cut(key, ";")
	if !tagged {
		n := &ix.root
		for part, rest, more := strings.Cut(key, "."); ; part, rest, more = strings.Cut(rest, ".") {
			c := n.child(part)
			switch {
			case c == nil && !more:
				bytes += n.setChild(part, leafNode)
			case c == nil || c == leafNode && more:
				// A new inner node, or a leaf that keys now continue
				// below: it needs a node of its own.
				c = &treeNode{leaf: c != nil}
				bytes += n.setChild(part, c) + idxNodeBytes
			}
			if !more {
				if c != nil && c != leafNode {
					c.leaf = true
				}
				return bytes
			}
			n = c
		}
	}
	ord := int32(len(ix.tagged))
	ix.tagged = append(ix.tagged, key)
	bytes = idxKeyBytes
	bytes += ix.post1("name", strings.TrimLeft(metric, "~"), ord)
	for rest != "" {
		var seg string
		seg, rest, _ = strings.Cut(rest, ";")
		k, v, _ := strings.Cut(seg, "=")
		bytes += ix.post1(k, v, ord)
	}
	return bytes
}

// maxAddBytes bounds what add(key) will return, whatever the index
// holds already: every node, map and posting new.
func maxAddBytes(key string) int64 {
	metric, rest, tagged := strings.Cut(key, ";")
	if !tagged {
		return int64(strings.Count(metric, ".")+1) * (idxMapBytes + idxNodeBytes + fewChildren*idxEntryBytes)
	}
	return idxKeyBytes + int64(strings.Count(rest, ";")+2)*(idxMapBytes+idxNodeBytes+idxPostingBytes)
}

// post1 appends ord to the postings of k=v, once, and returns the heap
// bytes it is estimated to have taken.
func (ix *index) post1(k, v string, ord int32) (bytes int64) {
	if ix.post == nil {
		ix.post = map[string]map[string][]int32{}
	}
	vals := ix.post[k]
	if vals == nil {
		vals = map[string][]int32{}
		ix.post[k] = vals
		bytes += idxMapBytes
	}
	p := vals[v]
	if len(p) > 0 && p[len(p)-1] == ord {
		return bytes // a tag given twice with one value
	}
	if p == nil {
		bytes += idxNodeBytes
	}
	vals[v] = append(p, ord)
	return bytes + idxPostingBytes
}

// TagCond is a condition on one tag of a tagged series for
// Store.TaggedKeysWhere: the tag's value is Value, or, when Match is not
// nil, a value for which Match is true. A series without the tag fails
// it, so a condition must not be one the empty value satisfies (Graphite's
// positive terms: "=" with a value, "=~" not matching ""); "!=" and "!=~"
// terms are the caller's to apply to what the positive ones select.
// Match is called with the index's read lock held: it must be quick and
// must not call the Store.
//
// Prefix, when not empty, is a string every value Match accepts begins
// with (render.TagTerm.ValuePrefix): only the values in that range of
// the tag's sorted values are tested, instead of every value.
type TagCond struct {
	Tag, Value string
	Match      func(value string) bool
	Prefix     string
}

// taggedWhere returns the tagged keys satisfying every condition (every
// tagged key when there is none), in ordinal order.
func (ix *index) taggedWhere(conds []TagCond) []string {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if len(conds) == 0 {
		return append(make([]string, 0, len(ix.tagged)), ix.tagged...)
	}
	var cur []int32
	// Exact conditions first: their lists are ready, usually short.
	conds = slices.Clone(conds)
	slices.SortStableFunc(conds, func(a, b TagCond) int {
		switch {
		case (a.Match == nil) == (b.Match == nil):
			return 0
		case a.Match == nil:
			return -1
		}
		return 1
	})
	for i, c := range conds {
		var list []int32
		vals := ix.post[c.Tag]
		if c.Match == nil {
			list = vals[c.Value]
		} else {
			var lists [][]int32
			if c.Prefix != "" {
				sv := ix.sortedValues(c.Tag)
				for _, v := range sv[sortSearch(sv, c.Prefix):] {
					if !strings.HasPrefix(v, c.Prefix) {
						break
					}
					if c.Match(v) {
						lists = append(lists, vals[v])
					}
				}
			} else {
				for v, p := range vals {
					if c.Match(v) {
						lists = append(lists, p)
					}
				}
			}
			list = unionSorted(lists)
		}
		if i == 0 {
			cur = list
		} else {
			cur = intersectSorted(cur, list)
		}
		if len(cur) == 0 {
			return nil
		}
	}
	out := make([]string, len(cur))
	for i, o := range cur {
		out[i] = ix.tagged[o]
	}
	return out
}

// sortedValues returns the values of tag k in order, sorting them again
// when values were added since the last call. ix.mu must be held (read
// or write); the slice must not be modified.
func (ix *index) sortedValues(k string) []string {
	vals := ix.post[k]
	ix.sortMu.Lock()
	defer ix.sortMu.Unlock()
	sv := ix.sorted[k]
	if len(sv) != len(vals) {
		sv = make([]string, 0, len(vals))
		for v := range vals {
			sv = append(sv, v)
		}
		slices.Sort(sv)
		if ix.sorted == nil {
			ix.sorted = map[string][]string{}
		}
		ix.sorted[k] = sv
	}
	return sv
}

// sortSearch returns the index of the first of sorted values >= p.
func sortSearch(sorted []string, p string) int {
	i, _ := slices.BinarySearch(sorted, p)
	return i
}

// tagNames returns the tags of the tagged keys ("name" included), sorted.
func (ix *index) tagNames() []string {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	out := make([]string, 0, len(ix.post))
	for k := range ix.post {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// tagValues returns the values of tag k beginning with prefix, sorted,
// at most limit of them (0: all).
func (ix *index) tagValues(k, prefix string, limit int) []string {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.post[k] == nil {
		return nil
	}
	sv := ix.sortedValues(k)
	var out []string
	for _, v := range sv[sortSearch(sv, prefix):] {
		if !strings.HasPrefix(v, prefix) || limit > 0 && len(out) >= limit {
			break
		}
		out = append(out, v)
	}
	return out
}

// unionSorted merges ascending lists into one ascending list without
// duplicates; one list is returned as is (not to be modified).
func unionSorted(lists [][]int32) []int32 {
	switch len(lists) {
	case 0:
		return nil
	case 1:
		return lists[0]
	}
	n := 0
	for _, l := range lists {
		n += len(l)
	}
	out := make([]int32, 0, n)
	for _, l := range lists {
		out = append(out, l...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// intersectSorted returns the ordinals in both ascending lists, in a new
// slice.
func intersectSorted(a, b []int32) []int32 {
	if len(a) > len(b) {
		a, b = b, a
	}
	out := make([]int32, 0, len(a))
	j := 0
	for _, x := range a {
		// Gallop over b: a is usually much shorter.
		k, found := slices.BinarySearch(b[j:], x)
		j += k
		if found {
			out = append(out, x)
			j++
		}
		if j >= len(b) {
			break
		}
	}
	return out
}

// find walks the tree of untagged keys with the per-node matchers of a
// pattern and calls emit for each node reached at the pattern's depth:
// path is its dotted path; leaf is whether a key ends there, branch
// whether longer keys continue below it.
func (ix *index) find(nodes []nodeMatcher, emit func(path string, leaf, branch bool)) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	var walk func(n *treeNode, depth int, path string)
	walk = func(n *treeNode, depth int, path string) {
		visit := func(part string, c *treeNode) {
			p := part
			if depth > 0 {
				p = path + "." + part
			}
			if depth == len(nodes)-1 {
				emit(p, c.leaf, c.hasChildren())
				return
			}
			walk(c, depth+1, p)
		}
		m := nodes[depth]
		if m.re == nil {
			if c := n.child(m.literal); c != nil {
				visit(m.literal, c)
			}
			return
		}
		n.children(func(part string, c *treeNode) {
			if m.re.MatchString(part) {
				visit(part, c)
			}
		})
	}
	walk(&ix.root, 0, "")
}
