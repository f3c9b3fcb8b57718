package statsd

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/pgts/pgts/internal/ingest"
)

func newParser(t testing.TB, l ingest.Limits) *Parser {
	t.Helper()
	p, err := NewParser(l)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestAppendLine(t *testing.T) {
	few := ingest.DefaultLimits()
	few.MaxTags = 2
	few.MaxLineBytes = 40
	few.MaxNameBytes = 8
	few.MaxTagBytes = 4

	tag := func(k, v string) ingest.Tag { return ingest.Tag{Key: k, Value: v} }
	m := func(name string, typ Type, v float64) Metric {
		return Metric{Name: name, Type: typ, Value: v, SampleRate: 1}
	}
	withRate := func(x Metric, r float64) Metric { x.SampleRate = r; return x }
	withTags := func(x Metric, tags ...ingest.Tag) Metric { x.Tags = tags; return x }
	delta := func(x Metric) Metric { x.Delta = true; return x }
	set := func(name, member string) Metric {
		return Metric{Name: name, Type: Set, SetValue: member, SampleRate: 1}
	}
	cases := []struct {
		name   string
		limits *ingest.Limits
		line   string
		want   []Metric
		err    error
	}{
		{name: "counter", line: "gorets:1|c", want: []Metric{m("gorets", Counter, 1)}},
		{name: "sampled counter", line: "gorets:1|c|@0.1", want: []Metric{withRate(m("gorets", Counter, 1), 0.1)}},
		{name: "negative counter", line: "a:-2.5|c", want: []Metric{m("a", Counter, -2.5)}},
		{name: "timer", line: "glork:320|ms|@0.5", want: []Metric{withRate(m("glork", Timer, 320), 0.5)}},
		{name: "histogram", line: "glork:-3|h", want: []Metric{m("glork", Histogram, -3)}},
		{name: "gauge set", line: "gaugor:333|g", want: []Metric{m("gaugor", Gauge, 333)}},
		{name: "gauge minus", line: "gaugor:-10|g", want: []Metric{delta(m("gaugor", Gauge, -10))}},
		{name: "gauge plus", line: "gaugor:+4|g", want: []Metric{delta(m("gaugor", Gauge, 4))}},
		{name: "set", line: "uniques:765|s", want: []Metric{set("uniques", "765")}},
		{name: "set member text", line: "users:alice smith|s", want: []Metric{set("users", "alice smith")}},
		{name: "multiple values", line: "a:1|c:2|c|@0.5:3|ms", want: []Metric{
			m("a", Counter, 1), withRate(m("a", Counter, 2), 0.5), m("a", Timer, 3)}},
		{name: "tags sorted", line: "a:1|c|#z:1,env:prod", want: []Metric{withTags(m("a", Counter, 1), tag("env", "prod"), tag("z", "1"))}},
		{name: "tag value with colon", line: "a:1|c|#url:http://x", want: []Metric{withTags(m("a", Counter, 1), tag("url", "http://x"))}},
		{name: "tags on every value", line: "a:1|c:2|ms|#k:v", want: []Metric{
			withTags(m("a", Counter, 1), tag("k", "v")), withTags(m("a", Timer, 2), tag("k", "v"))}},
		{name: "empty tags", line: "a:1|c|#", want: []Metric{m("a", Counter, 1)}},
		{name: "rate then tags", line: "a:1|c|@0.25|#k:v", want: []Metric{withTags(withRate(m("a", Counter, 1), 0.25), tag("k", "v"))}},
		{name: "extension fields ignored", line: "a:1|c|@1|T1656581400|#k:v|c:abc", want: []Metric{withTags(m("a", Counter, 1), tag("k", "v"))}},
		{name: "CRLF", line: "a:1|c\r", want: []Metric{m("a", Counter, 1)}},
		{name: "exponent", line: "a:1e3|g", want: []Metric{m("a", Gauge, 1000)}},
		{name: "empty line", line: ""},
		{name: "CR only", line: "\r"},

		{name: "no colon", line: "gorets", err: ingest.ErrSyntax},
		{name: "no type", line: "gorets:1", err: ingest.ErrSyntax},
		{name: "unknown type", line: "gorets:1|x", err: ingest.ErrSyntax},
		{name: "type with space", line: "gorets:1|c ", err: ingest.ErrSyntax},
		{name: "bad rate", line: "a:1|c|0.1", err: ingest.ErrSyntax},
		{name: "empty rate", line: "a:1|c|@", err: ingest.ErrSyntax},
		{name: "rate 0", line: "a:1|c|@0", err: ingest.ErrValue},
		{name: "rate over 1", line: "a:1|c|@2", err: ingest.ErrValue},
		{name: "negative rate", line: "a:1|c|@-0.5", err: ingest.ErrValue},
		{name: "NaN rate", line: "a:1|c|@nan", err: ingest.ErrValue},
		{name: "empty value", line: "a:|c", err: ingest.ErrValue},
		{name: "NaN", line: "a:nan|c", err: ingest.ErrValue},
		{name: "inf gauge", line: "a:+Inf|g", err: ingest.ErrValue},
		{name: "1e400", line: "a:1e400|ms", err: ingest.ErrValue},
		{name: "negative timer", line: "a:-1|ms", err: ingest.ErrValue},
		{name: "not a number", line: "a:abc|c", err: ingest.ErrValue},
		{name: "empty set member", line: "a:|s", err: ingest.ErrValue},
		{name: "control char in set member", line: "a:x\x01|s", err: ingest.ErrValue},
		{name: "set member too long", limits: &few, line: "a:12345|s", err: ingest.ErrValue},
		{name: "one bad value refuses the line", line: "a:1|c:x|c", err: ingest.ErrValue},
		{name: "trailing colon", line: "a:1|c:", err: ingest.ErrSyntax},
		{name: "empty name", line: ":1|c", err: ingest.ErrName},
		{name: "space in name", line: "a b:1|c", err: ingest.ErrName},
		{name: "control char in name", line: "a\x00:1|c", err: ingest.ErrName},
		{name: "name too long", limits: &few, line: "abcdefghi:1|c", err: ingest.ErrName},
		{name: "line too long", limits: &few, line: "a:1|c|#" + strings.Repeat("k", 40), err: ingest.ErrLimit},
		{name: "tag without value", line: "a:1|c|#flag", err: ingest.ErrTag},
		{name: "empty tag", line: "a:1|c|#k:v,", err: ingest.ErrTag},
		{name: "empty tag key", line: "a:1|c|#:v", err: ingest.ErrTag},
		{name: "empty tag value", line: "a:1|c|#k:", err: ingest.ErrTag},
		{name: "duplicate tag", line: "a:1|c|#k:1,k:2", err: ingest.ErrTag},
		{name: "too many tags", limits: &few, line: "a:1|c|#a:1,b:2,c:3", err: ingest.ErrTag},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := ingest.DefaultLimits()
			if c.limits != nil {
				l = *c.limits
			}
			p := newParser(t, l)
			prev := []Metric{{Name: "kept"}}
			got, err := p.AppendLine(prev, []byte(c.line))
			if c.err != nil {
				if !errors.Is(err, c.err) {
					t.Fatalf("AppendLine(%q) error = %v, want %v", c.line, err, c.err)
				}
				if len(got) != 1 || got[0].Name != "kept" {
					t.Fatalf("AppendLine(%q) changed dst on error: %+v", c.line, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("AppendLine(%q): %v", c.line, err)
			}
			if diff := cmp.Diff(c.want, got[1:], cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("AppendLine(%q) mismatch (-want +got):\n%s", c.line, diff)
			}
			// A second parse goes through the series cache.
			again, err := p.AppendLine(nil, []byte(c.line))
			if err != nil {
				t.Fatalf("second AppendLine(%q): %v", c.line, err)
			}
			if diff := cmp.Diff(c.want, again, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("second AppendLine(%q) mismatch (-want +got):\n%s", c.line, diff)
			}
		})
	}
}

func TestAppendLineNoRetention(t *testing.T) {
	p := newParser(t, ingest.DefaultLimits())
	line := []byte("api.hits:1|c|#host:web1")
	got, err := p.AppendLine(nil, line)
	if err != nil {
		t.Fatal(err)
	}
	clear(line)
	if got[0].Name != "api.hits" || got[0].Tags[0] != (ingest.Tag{Key: "host", Value: "web1"}) {
		t.Fatalf("metric changed with its input: %+v", got[0])
	}
}

func TestAppendLineZeroAlloc(t *testing.T) {
	p := newParser(t, ingest.DefaultLimits())
	lines := [][]byte{
		[]byte("api.hits:1|c|@0.5"),
		[]byte("api.latency:12.5|ms|#host:web1,env:prod"),
		[]byte("api.users:alice|s"),
		[]byte("api.load:+1|g:2|g"),
	}
	var dst []Metric
	run := func() {
		dst = dst[:0]
		for _, l := range lines {
			var err error
			if dst, err = p.AppendLine(dst, l); err != nil {
				t.Fatal(err)
			}
		}
	}
	run()
	if n := testing.AllocsPerRun(100, run); n != 0 {
		t.Errorf("AppendLine allocates %v times per 4 lines, want 0", n)
	}
}

func TestTypeString(t *testing.T) {
	for typ, want := range map[Type]string{Counter: "c", Gauge: "g", Timer: "ms", Histogram: "h", Set: "s", 0: "?"} {
		if got := typ.String(); got != want {
			t.Errorf("Type(%d).String() = %q, want %q", typ, got, want)
		}
	}
}
