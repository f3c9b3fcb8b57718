package render

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// treeSource lists tagged series as leaves of the tree, the way
// tsstore.Store.Find does, so the render API's own filtering is tested.
type treeSource struct{ *MemSource }

func (s treeSource) Find(ctx context.Context, pattern string) ([]Node, error) {
	nodes, err := s.MemSource.Find(ctx, pattern)
	if err != nil {
		return nil, err
	}
	g, _ := CompileGlob(pattern)
	s.mu.RLock()
	defer s.mu.RUnlock()
	for name := range s.metrics {
		if base, _, ok := strings.Cut(name, ";"); ok && g.Match(base) {
			nodes = append(nodes, Node{Path: name, Leaf: true})
		}
	}
	return nodes, nil
}

// TestTagsEndpoints pins graphite-web 1.1's /tags responses (tags/views.py
// over tags/localdatabase.py and tags/base.py) for the tagged series of
// valuesSource: cpu;dc=eu;host=web1, cpu;dc=us;host=web2, disk;dc=eu.
func TestTagsEndpoints(t *testing.T) {
	h := testHandler(t, valuesSource())
	for _, c := range tagCases {
		code, body := get(t, h, c.path, c.q)
		if code != c.status || body != c.want {
			t.Errorf("%s?%s: %d %s, want %d %s", c.path, c.q.Encode(), code, body, c.status, c.want)
		}
	}
}

var tagCases = []struct {
	path   string
	q      url.Values
	status int
	want   string
}{
	// list_tags: every tag, "name" included, ordered by tag
	{"/tags", nil, 200, `[{"id": 1, "tag": "dc"}, {"id": 2, "tag": "host"}, {"id": 3, "tag": "name"}]`},
	{"/tags", url.Values{"filter": {"h"}}, 200, `[{"id": 2, "tag": "host"}]`},
	{"/tags", url.Values{"limit": {"1"}}, 200, `[{"id": 1, "tag": "dc"}]`},
	// get_tag: values ordered, with the number of series holding each
	{"/tags/dc", nil, 200, `{"id": 1, "tag": "dc", "values": [{"id": 1, "value": "eu", "count": 2}, {"id": 2, "value": "us", "count": 1}]}`},
	{"/tags/nope", nil, 200, `null`},
	{"/tags/findSeries", url.Values{"expr": {"dc=eu"}}, 200, `["cpu;dc=eu;host=web1", "disk;dc=eu"]`},
	{"/tags/findSeries", url.Values{"expr[]": {"name=cpu", "host!=web1"}}, 200, `["cpu;dc=us;host=web2"]`},
	{"/tags/findSeries", url.Values{"expr": {"host=~web", "name!=~c"}}, 200, `[]`},
	// "tag!=" needs the tag to be present
	{"/tags/findSeries", url.Values{"expr": {"host!="}}, 200, `["cpu;dc=eu;host=web1", "cpu;dc=us;host=web2"]`},
	{"/tags/findSeries", nil, 400, `{"error": "no tag expressions specified"}`},
	{"/tags/findSeries", url.Values{"expr": {"host!=web1"}}, 400, `{"error": "At least one tagspec must not match the empty string"}`},
	// auto_complete_tags leaves out the tags already searched
	{"/tags/autoComplete/tags", url.Values{"expr": {"name=cpu"}}, 200, `["dc", "host"]`},
	{"/tags/autoComplete/tags", url.Values{"tagPrefix": {"n"}}, 200, `["name"]`},
	{"/tags/autoComplete/tags", url.Values{"expr": {"dc=eu"}, "limit": {"1"}}, 200, `["host"]`},
	// auto_complete_values adds "tag!=" to the expressions
	{"/tags/autoComplete/values", url.Values{"expr": {"dc=eu"}, "tag": {"host"}}, 200, `["web1"]`},
	{"/tags/autoComplete/values", url.Values{"tag": {"name"}}, 200, `["cpu", "disk"]`},
	{"/tags/autoComplete/values", url.Values{"tag": {"dc"}, "valuePrefix": {"u"}}, 200, `["us"]`},
	{"/tags/autoComplete/values", nil, 400, `{"error": "no tag specified"}`},
}

// TestTaggedSeriesOutsideTree: tagged series are not in /metrics/find
// (graphite-web files them under its own _tagged hierarchy) and render
// with the tags object split.
func TestTaggedSeriesOutsideTree(t *testing.T) {
	h := testHandler(t, valuesSource())
	code, body := get(t, h, "/metrics/find", url.Values{"query": {"*"}})
	if code != http.StatusOK || body != `[{"text": "a", "id": "a", "allowChildren": 1, "expandable": 1, "leaf": 0}, {"text": "b", "id": "b", "allowChildren": 1, "expandable": 1, "leaf": 0}]` {
		t.Errorf("find: %d %s", code, body)
	}
	// a source that lists tagged leaves in its tree (as the store does)
	// still shows none of them
	src := valuesSource()
	src.metrics["a.tagged;k=v"] = memMetric{step: 60, points: map[int64]float64{}}
	th := testHandler(t, treeSource{src})
	if code, body := get(t, th, "/metrics/find", url.Values{"query": {"a.*"}}); code != http.StatusOK || strings.Contains(body, "tagged") {
		t.Errorf("find a.*: %d %s", code, body)
	}
	if code, body := get(t, th, "/metrics/index.json", nil); code != http.StatusOK || strings.Contains(body, ";") {
		t.Errorf("index: %d %s", code, body)
	}
	code, body = get(t, h, "/render", url.Values{"target": {"seriesByTag('name=disk')"}, "from": {"-10min"}, "until": {"now"}, "noNullPoints": {"1"}})
	want := `[{"target": "disk;dc=eu", "tags": {"dc": "eu", "name": "disk"}, "datapoints": [[7.0, 1699999980], [7.0, 1700000040], [7.0, 1700000100], [7.0, 1700000160], [7.0, 1700000220]]}]`
	if code != http.StatusOK || body != want {
		t.Errorf("render: %d %s\nwant %s", code, body, want)
	}
	// a glob never selects a tagged series
	if code, body := get(t, h, "/render", url.Values{"target": {"disk*"}, "from": {"-10min"}}); code != http.StatusOK || body != "[]" {
		t.Errorf("glob: %d %s", code, body)
	}
}

// FuzzTags feeds hostile names and expressions to the tag parsers: they
// must not panic, a parsed name must format back to a name that parses
// to the same tags, and a compiled filter must answer for any name.
func FuzzTags(f *testing.F) {
	for _, s := range []string{"cpu;dc=eu;host=web1", "a", ";", "a;=", "a;b", "~x;k=~v", "a;k=v=w", "name=~(x", "dc!=~^e", "k!="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if tags, err := ParseTaggedName(s); err == nil {
			m := map[string]string{}
			name := ""
			for _, tg := range tags {
				if tg.k == "name" {
					name = tg.v
				}
				m[tg.k] = tg.v
			}
			for k, v := range m {
				if got := tagValue(s, k); got != v {
					t.Fatalf("%q: tagValue(%q) = %q, parsed %q", s, k, got, v)
				}
			}
			back, err := ParseTaggedName(FormatTaggedName(name, m))
			if err != nil || len(back) != len(tags) {
				t.Fatalf("%q: formatted back %q: %v", s, FormatTaggedName(name, m), err)
			}
		}
		if term, err := ParseTagTerm(s); err == nil {
			if flt, err := compileTagFilter([]TagTerm{term}); err == nil {
				flt.match(s)
				flt.match("cpu;dc=eu")
			}
		}
	})
}

func BenchmarkParseTaggedName(b *testing.B) {
	const name = "cpu.usage;dc=eu-west-1;host=web-0042;service=checkout"
	b.SetBytes(int64(len(name)))
	b.ReportAllocs()
	for range b.N {
		if _, err := ParseTaggedName(name); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSeriesByTagFilter: selecting 100 of 300,000 tagged series by
// two terms, the work the render API does after the source's candidates.
func BenchmarkSeriesByTagFilter(b *testing.B) {
	names := make([]string, 300_000)
	for i := range names {
		names[i] = "cpu.usage;dc=dc" + strconv.Itoa(i%30) + ";host=web" + strconv.Itoa(i)
	}
	f, err := compileTagFilter([]TagTerm{{"name", "=", "cpu.usage"}, {"host", "=~", "web1[0-9]$"}})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		n := 0
		for _, s := range names {
			if f.match(s) {
				n++
			}
		}
		if n != 10 {
			b.Fatalf("%d matches", n)
		}
	}
}

// TestTagTermValuePrefix: the literal every value an "=~" term matches
// begins with (the term is anchored at the start as graphite-web anchors
// it); "" when there is none to be sure of.
func TestTagTermValuePrefix(t *testing.T) {
	for _, c := range []struct{ op, value, want string }{
		{"=~", "h1[0-9]$", "h1"},
		{"=~", "^web", "web"},
		{"=~", "^(web|db)1", ""},
		{"=~", "web.*", "web"},
		{"=~", "abc", "abc"},
		{"=~", "ab?c", "a"},
		{"=~", "(?i)web", ""},
		{"=~", "we(?i)b", "we"},
		{"=~", "(ab)(cd)e+", "abcd"},
		{"=~", "a*", ""},
		{"=~", "[", ""}, // invalid: seriesByTag refuses it elsewhere
		{"=~", "(?m)^x", ""},
		{"!=~", "web", ""},
		{"=", "web", ""},
	} {
		term := TagTerm{Tag: "host", Op: c.op, Value: c.value}
		got := term.ValuePrefix()
		if got != c.want {
			t.Errorf("%s%s: %q, want %q", c.op, c.value, got, c.want)
		}
		if re, err := term.regexp(); err == nil && re != nil {
			for _, v := range []string{"web", "web1", "h12", "abcd", "x", "WEB", "db1", "abcdee"} {
				if re.MatchString(v) && !strings.HasPrefix(v, got) {
					t.Errorf("%s%s matches %q, which lacks the prefix %q", c.op, c.value, v, got)
				}
			}
		}
	}
}

// FuzzTagTermValuePrefix: whatever the expression, a value it matches
// begins with the prefix ValuePrefix claims.
func FuzzTagTermValuePrefix(f *testing.F) {
	for _, s := range [][2]string{{"h1[0-9]$", "h12"}, {"^web", "web1"}, {"(ab)(cd)e+", "abcdee"}, {"we(?i)b", "weB"}, {"a^b", "ab"}, {"x|xy", "xy"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, expr, value string) {
		term := TagTerm{Tag: "t", Op: "=~", Value: expr}
		p := term.ValuePrefix()
		re, err := term.regexp()
		if err != nil {
			return
		}
		if re.MatchString(value) && !strings.HasPrefix(value, p) {
			t.Errorf("%q matches %q, which lacks the prefix %q", expr, value, p)
		}
	})
}

func BenchmarkTagTermValuePrefix(b *testing.B) {
	term := TagTerm{Tag: "host", Op: "=~", Value: "web-eu-1[0-9]+$"}
	b.ReportAllocs()
	for b.Loop() {
		if term.ValuePrefix() != "web-eu-1" {
			b.Fatal("prefix")
		}
	}
}
