package tsstore

import (
	"errors"
	"strings"
	"testing"
)

func TestGlob(t *testing.T) {
	for _, c := range []struct {
		pattern string
		match   []string
		miss    []string
	}{
		{"a.b", []string{"a.b"}, []string{"a.bc", "a", "axb"}},
		{"a.*", []string{"a.b", "a.", "a.xyz"}, []string{"a.b.c", "b.a"}},
		{"a?c", []string{"abc", "a-c"}, []string{"ac", "a.c", "abbc"}},
		{"[a-c]x", []string{"ax", "cx"}, []string{"dx", ".x"}},
		{"[!a-c]x", []string{"dx"}, []string{"ax", ".x"}},
		{"[]]", []string{"]"}, []string{"["}},
		{"{a,b*,c?d}.x", []string{"a.x", "b.x", "bzz.x", "cid.x"}, []string{"c.x", "ab.x"}},
		{"{a,{b,c}}", []string{"a", "b", "c"}, []string{"d"}},
		{"x{,y}", []string{"x", "xy"}, []string{"xz"}},
		{"a+b(c)|d$^", []string{"a+b(c)|d$^"}, []string{"aab"}},
		{"a,b}", []string{"a,b}"}, nil},
		{`a\b`, []string{`a\b`}, nil},
	} {
		g, err := compileGlob(c.pattern)
		if err != nil {
			t.Fatalf("%q: %v", c.pattern, err)
		}
		for _, m := range c.match {
			if !g.match(m) {
				t.Errorf("%q does not match %q", c.pattern, m)
			}
		}
		for _, m := range c.miss {
			if g.match(m) {
				t.Errorf("%q matches %q", c.pattern, m)
			}
		}
	}
	for _, bad := range []string{"", "{a", "[a", "{a.b}", "[a.b]", "[z-a]", strings.Repeat("{", 9) + strings.Repeat("}", 9), strings.Repeat("a", maxGlobBytes+1), "\xff"} {
		if _, err := compileGlob(bad); !errors.Is(err, ErrPattern) {
			t.Errorf("%q: got %v, want ErrPattern", bad, err)
		}
	}
}

// FuzzGlob checks that any pattern compiles or fails with ErrPattern, that
// a pattern without wildcards matches exactly itself, and that no match
// crosses a dot that the pattern does not have.
func FuzzGlob(f *testing.F) {
	for _, s := range []string{"a.b", "a.*", "{a,b}.c?", "[a-z]*.{x,y[0-9]}", "[!.]", "{{{", "]]", "a.[", "*.*.*"} {
		f.Add(s, "a.b")
	}
	f.Fuzz(func(t *testing.T, pattern, path string) {
		g, err := compileGlob(pattern)
		if err != nil {
			if !errors.Is(err, ErrPattern) {
				t.Fatalf("%q: %v does not wrap ErrPattern", pattern, err)
			}
			return
		}
		if g.nodes != strings.Count(pattern, ".")+1 {
			t.Fatalf("%q: %d nodes", pattern, g.nodes)
		}
		if !strings.ContainsAny(pattern, "*?[]{},") && !g.match(pattern) {
			t.Fatalf("literal %q does not match itself", pattern)
		}
		if g.match(path) && strings.Count(path, ".") != g.nodes-1 {
			t.Fatalf("%q matches %q, which has another number of nodes", pattern, path)
		}
	})
}
