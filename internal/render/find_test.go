package render

import (
	"net/http"
	"net/url"
	"testing"
)

func TestFindGoldens(t *testing.T) {
	src := testSource()
	src.Add("servers.web1", t0, 60, 1) // a path that is both a leaf and a branch
	h := testHandler(t, src)
	cases := []struct {
		name, path string
		q          url.Values
	}{
		{"find_root", "/metrics/find", url.Values{"query": {"*"}}},
		{"find_servers", "/metrics/find", url.Values{"query": {"servers.*"}}},
		{"find_leaves", "/metrics/find", url.Values{"query": {"servers.web?.*"}}},
		{"find_set", "/metrics/find", url.Values{"query": {"servers.web[2-9].*"}}},
		{"find_braces", "/metrics/find", url.Values{"query": {"servers.{db1,web2}.cpu"}}},
		{"find_wildcards", "/metrics/find", url.Values{"query": {"servers.*"}, "wildcards": {"1"}}},
		{"find_leavesOnly", "/metrics/find", url.Values{"query": {"servers.*"}, "leavesOnly": {"1"}}},
		{"find_none", "/metrics/find", url.Values{"query": {"no.such.*"}}},
		{"find_completer", "/metrics/find", url.Values{"query": {"servers.w"}, "format": {"completer"}}},
		{"find_json", "/metrics/find", url.Values{"query": {"servers.web1.*"}, "format": {"json"}}},
		{"find_nodelist", "/metrics/find", url.Values{"query": {"servers.*.*"}, "format": {"nodelist"}, "position": {"1"}}},
		{"expand", "/metrics/expand", url.Values{"query": {"servers.web*.cpu", "servers.db1.*"}}},
		{"expand_groupByExpr", "/metrics/expand", url.Values{"query": {"servers.web*.cpu", "servers.db1.*"}, "groupByExpr": {"1"}}},
		{"expand_leavesOnly", "/metrics/expand", url.Values{"query": {"servers.*"}, "leavesOnly": {"1"}}},
		{"index", "/metrics/index.json", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, body := get(t, h, c.path, c.q)
			if code != http.StatusOK {
				t.Fatalf("status %d: %s", code, body)
			}
			golden(t, "find/"+c.name, body+"\n")
		})
	}
}

func TestFindErrors(t *testing.T) {
	h := testHandler(t, testSource())
	for _, q := range []url.Values{
		{},
		{"query": {""}},
		{"query": {"a"}, "format": {"xml"}},
		{"query": {"a"}, "leavesOnly": {"x"}},
		{"query": {"a"}, "from": {"bogus"}},
		{"query": {"a.[b"}},
	} {
		if code, body := get(t, h, "/metrics/find", q); code != http.StatusBadRequest {
			t.Errorf("%v: %d %s, want 400", q, code, body)
		}
	}
	opts := DefaultOptions()
	opts.MaxFindResults = 3
	small, _ := New(testSource(), opts)
	if code, _ := get(t, small, "/metrics/find", url.Values{"query": {"servers.*"}}); code != http.StatusBadRequest {
		t.Errorf("over MaxFindResults: %d, want 400", code)
	}
	if code, _ := get(t, small, "/metrics/index.json", nil); code != http.StatusBadRequest {
		t.Errorf("index over MaxFindResults: %d, want 400", code)
	}
}

func TestGlob(t *testing.T) {
	tests := []struct {
		pattern, path string
		want          bool
	}{
		{"a.b.c", "a.b.c", true},
		{"a.*.c", "a.xyz.c", true},
		{"a.*", "a.b.c", false},
		{"a.b?", "a.bc", true},
		{"a.b?", "a.b", false},
		{"a.[a-c]x", "a.bx", true},
		{"a.[a-c]x", "a.dx", false},
		{"a.[!a-c]x", "a.dx", true},
		{"a.{b,cd}", "a.cd", true},
		{"a.{b,cd}", "a.c", false},
		{"a.{b*,c}.x", "a.bzz.x", true},
		{"a.cpu-{user,sys}", "a.cpu-sys", true},
		{"a.b+c", "a.b+c", true},
		{"a.(b)", "a.(b)", true},
	}
	for _, tt := range tests {
		g, err := CompileGlob(tt.pattern)
		if err != nil {
			t.Fatalf("%s: %v", tt.pattern, err)
		}
		if got := g.Match(tt.path); got != tt.want {
			t.Errorf("%s ~ %s = %v, want %v", tt.pattern, tt.path, got, tt.want)
		}
	}
	for _, bad := range []string{"", "a..b", "a.[b", "a.{b", "a.{b,{c}}"} {
		if _, err := CompileGlob(bad); err == nil {
			t.Errorf("CompileGlob(%q) succeeded", bad)
		}
	}
}

func TestRegister(t *testing.T) {
	mux := http.NewServeMux()
	testHandler(t, testSource()).Register(mux)
	for _, p := range Paths() {
		if code, body := get(t, mux, p, url.Values{"query": {"*"}}); code != http.StatusOK {
			t.Errorf("%s via mux: %d %s", p, code, body)
		}
	}
}
