package tsstore

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// bruteFind is Find by scanning every key: the first N nodes of each
// untagged key matched against the whole pattern.
func bruteFind(t *testing.T, keys []string, pattern string) []Node {
	t.Helper()
	g, err := compileGlob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	set := map[Node]bool{}
	for _, k := range keys {
		if strings.Contains(k, ";") {
			continue
		}
		parts := strings.Split(k, ".")
		if len(parts) < g.nodes {
			continue
		}
		prefix := strings.Join(parts[:g.nodes], ".")
		if g.match(prefix) {
			set[Node{Path: prefix, Leaf: len(parts) == g.nodes}] = true
		}
	}
	var out []Node
	for n := range set {
		out = append(out, n)
	}
	slices.SortFunc(out, func(a, b Node) int {
		if c := cmp.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		if a.Leaf {
			return 1
		}
		return -1
	})
	return out
}

// TestIndexFind: walking the tree of names gives what scanning every key
// with the whole pattern gives, for literal, wildcard, class, brace and
// empty nodes, leaves that are also branches, and tagged keys (never).
func TestIndexFind(t *testing.T) {
	keys := []string{"a", "a.b", "a.b.c", "a.bb.c", "a.b.d.e", "x..y", "x.y", "a.c;k=v", "a.c.d;k=v", "ab.c", "{a}.b", "a,b.c"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		keys = append(keys, fmt.Sprintf("r%d.n%d.m%d", rng.IntN(5), rng.IntN(20), rng.IntN(3)))
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	var ix index
	for _, k := range keys {
		ix.add(k)
	}
	find := func(pattern string) []Node {
		nodes, err := compileNodes(pattern)
		if err != nil {
			t.Fatal(err)
		}
		var out []Node
		ix.find(nodes, func(path string, leaf, branch bool) {
			if branch {
				out = append(out, Node{Path: path})
			}
			if leaf {
				out = append(out, Node{Path: path, Leaf: true})
			}
		})
		slices.SortFunc(out, func(a, b Node) int {
			if c := cmp.Compare(a.Path, b.Path); c != 0 {
				return c
			}
			if a.Leaf {
				return 1
			}
			return -1
		})
		return out
	}
	for _, p := range []string{"a", "a.b", "a.*", "*", "*.*", "*.*.*", "a.b*.c", "a.{b,bb}.c", "a.[b].*", "a.[!c]*",
		"x..y", "x.*.y", "a.c", "a.?", "r1.*", "r*.n1?.m[0-1]", "{r1,r3}.n{1,2}*.*", "\\{a}.b", "{a}.b", "a,b.c", "nope.*"} {
		got, want := find(p), bruteFind(t, keys, p)
		if diff := gocmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%q (-scan +index):\n%s", p, diff)
		}
	}
}

// TestIndexTaggedWhere: the inverted index selects the tagged keys
// holding every condition's value, including the name tag (leading '~'
// stripped) and regular-expression conditions, in insertion order.
func TestIndexTaggedWhere(t *testing.T) {
	var ix index
	for _, k := range []string{"cpu;dc=eu;host=a", "cpu;dc=us;host=b", "~mem;dc=eu;host=a", "disk;dc=eu", "cpu.x", "cpu;host=c"} {
		ix.add(k)
	}
	prefix := func(p string) func(string) bool { return func(v string) bool { return strings.HasPrefix(v, p) } }
	for _, c := range []struct {
		conds []TagCond
		want  []string
	}{
		{nil, []string{"cpu;dc=eu;host=a", "cpu;dc=us;host=b", "~mem;dc=eu;host=a", "disk;dc=eu", "cpu;host=c"}},
		{[]TagCond{{Tag: "name", Value: "cpu"}}, []string{"cpu;dc=eu;host=a", "cpu;dc=us;host=b", "cpu;host=c"}},
		{[]TagCond{{Tag: "name", Value: "mem"}}, []string{"~mem;dc=eu;host=a"}},
		{[]TagCond{{Tag: "dc", Value: "eu"}, {Tag: "host", Value: "a"}}, []string{"cpu;dc=eu;host=a", "~mem;dc=eu;host=a"}},
		{[]TagCond{{Tag: "host", Match: prefix("")}}, []string{"cpu;dc=eu;host=a", "cpu;dc=us;host=b", "~mem;dc=eu;host=a", "cpu;host=c"}},
		{[]TagCond{{Tag: "host", Match: prefix("b")}, {Tag: "name", Value: "cpu"}}, []string{"cpu;dc=us;host=b"}},
		{[]TagCond{{Tag: "dc", Value: "eu"}, {Tag: "host", Value: "b"}}, nil},
		{[]TagCond{{Tag: "nope", Value: "x"}}, nil},
		{[]TagCond{{Tag: "dc", Match: prefix("x")}}, nil},
	} {
		got := ix.taggedWhere(c.conds)
		if diff := gocmp.Diff(c.want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%+v (-want +got):\n%s", c.conds, diff)
		}
	}
}

func TestIntersectUnionSorted(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		var lists [][]int32
		sets := []map[int32]bool{}
		for range 1 + rng.IntN(4) {
			m := map[int32]bool{}
			for range rng.IntN(30) {
				m[int32(rng.IntN(60))] = true
			}
			var l []int32
			for v := range m {
				l = append(l, v)
			}
			slices.Sort(l)
			lists, sets = append(lists, l), append(sets, m)
		}
		var wantU, wantI []int32
		for v := int32(0); v < 60; v++ {
			in, all := false, true
			for _, m := range sets {
				in = in || m[v]
				all = all && m[v]
			}
			if in {
				wantU = append(wantU, v)
			}
			if all {
				wantI = append(wantI, v)
			}
		}
		gotI := lists[0]
		for _, l := range lists[1:] {
			gotI = intersectSorted(gotI, l)
		}
		if !slices.Equal(unionSorted(lists), wantU) || !slices.Equal(gotI, wantI) {
			t.Fatalf("lists %v: union %v want %v, intersection %v want %v", lists, unionSorted(lists), wantU, gotI, wantI)
		}
	}
}

// TestIndexTaggedWherePrefix: a regular-expression condition with the
// literal prefix of its values tests only the values in the prefix's
// range of the sorted values (Match is never called outside it) and
// selects what the scan of every value selects, also after new values
// were added since the last lookup.
func TestIndexTaggedWherePrefix(t *testing.T) {
	var ix index
	rng := rand.New(rand.NewPCG(3, 4))
	add := func(n int) {
		for range n {
			ix.add(fmt.Sprintf("m;dc=dc%d;host=h%d", rng.IntN(4), rng.IntN(3000)))
		}
	}
	add(2000)
	for round := range 2 {
		for _, p := range []string{"h1", "h12", "h2999", "h", "x", "h10", ""} {
			calls := 0
			cond := TagCond{Tag: "host", Prefix: p, Match: func(v string) bool {
				calls++
				if !strings.HasPrefix(v, p) {
					t.Errorf("prefix %q: Match called with %q", p, v)
				}
				return strings.HasPrefix(v, p) && strings.HasSuffix(v, "9")
			}}
			got := ix.taggedWhere([]TagCond{cond})
			scan := ix.taggedWhere([]TagCond{{Tag: "host", Match: func(v string) bool { return strings.HasPrefix(v, p) && strings.HasSuffix(v, "9") }}})
			if diff := gocmp.Diff(scan, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("round %d prefix %q (-scan +prefix):\n%s", round, p, diff)
			}
			all := 0
			for v := range ix.post["host"] {
				if strings.HasPrefix(v, p) {
					all++
				}
			}
			if calls != all {
				t.Errorf("round %d prefix %q: Match called %d times, %d values have the prefix", round, p, calls, all)
			}
		}
		add(500) // new values: the sorted list must follow
	}
}

// TestIndexTagNamesValues: the tags and the values of one tag come from
// the index, sorted, filtered by prefix and limited.
func TestIndexTagNamesValues(t *testing.T) {
	var ix index
	for _, k := range []string{"cpu;dc=eu;host=a", "cpu;dc=us;host=b", "~mem;dc=eu;host=ab", "disk;zone=1", "cpu.x"} {
		ix.add(k)
	}
	if got, want := ix.tagNames(), []string{"dc", "host", "name", "zone"}; !slices.Equal(got, want) {
		t.Errorf("tagNames: %q, want %q", got, want)
	}
	for _, c := range []struct {
		tag, prefix string
		limit       int
		want        []string
	}{
		{"host", "", 0, []string{"a", "ab", "b"}},
		{"host", "a", 0, []string{"a", "ab"}},
		{"host", "", 2, []string{"a", "ab"}},
		{"name", "", 0, []string{"cpu", "disk", "mem"}},
		{"host", "c", 0, nil},
		{"nope", "", 0, nil},
	} {
		if got := ix.tagValues(c.tag, c.prefix, c.limit); !slices.Equal(got, c.want) {
			t.Errorf("tagValues(%q, %q, %d): %q, want %q", c.tag, c.prefix, c.limit, got, c.want)
		}
	}
}

// TestMaxAddBytes: what adding a key accounts never exceeds the bound
// Add reserves for it beforehand, into an empty index or a full one.
func TestMaxAddBytes(t *testing.T) {
	keys := []string{"a", "a.b.c", "a.b.d", "x.y", "cpu;host=a", "cpu;host=a;dc=x", "cpu;host=b;dc=x", "~m;t=1;t=1", "m;a=;b=c"}
	for _, fresh := range []bool{true, false} {
		ix := &index{}
		for _, k := range keys {
			if fresh {
				ix = &index{}
			}
			if got, bound := ix.add(k), maxAddBytes(k); got > bound {
				t.Errorf("add(%q) accounted %d bytes, over its bound %d", k, got, bound)
			}
		}
	}
}
