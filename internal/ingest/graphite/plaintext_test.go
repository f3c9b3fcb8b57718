package graphite

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/pgts/pgts/internal/ingest"
)

// fixedNow is the injected clock of every test: 2023-11-14T22:15:00.5Z.
var fixedNow = time.Unix(1700000100, 500_000_000)

func now() time.Time { return fixedNow }

// nowMicrosTest is fixedNow truncated to whole seconds, in micros.
const nowMicrosTest = 1700000100_000000

func newParser(t testing.TB, l ingest.Limits) *Parser {
	t.Helper()
	p, err := NewParser(l, now)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestAppendLine(t *testing.T) {
	utf8 := ingest.DefaultLimits()
	utf8.AllowUTF8 = true
	few := ingest.DefaultLimits()
	few.MaxTags = 2
	few.MaxLineBytes = 40
	few.MaxNameBytes = 8
	few.MaxTagBytes = 4

	type tc struct {
		name   string
		limits *ingest.Limits
		line   string
		want   []ingest.Point
		err    error
	}
	pt := func(name string, v float64, t int64, tags ...ingest.Tag) []ingest.Point {
		if len(tags) == 0 {
			tags = nil
		}
		return []ingest.Point{{Name: name, Tags: tags, Value: v, Time: t}}
	}
	tag := func(k, v string) ingest.Tag { return ingest.Tag{Key: k, Value: v} }
	cases := []tc{
		{name: "plain", line: "a.b.c 1.5 1700000000", want: pt("a.b.c", 1.5, 1700000000e6)},
		{name: "tabs and CR", line: "\ta.b\t-2 \t1700000000\r", want: pt("a.b", -2, 1700000000e6)},
		{name: "trailing space", line: "a 1 1700000000 ", want: pt("a", 1, 1700000000e6)},
		{name: "no timestamp is now", line: "a 1", want: pt("a", 1, nowMicrosTest)},
		{name: "-1 is now", line: "a 1 -1", want: pt("a", 1, nowMicrosTest)},
		{name: "-1.5 truncates to -1, now", line: "a 1 -1.5", want: pt("a", 1, nowMicrosTest)},
		{name: "-0.5 truncates to 0", line: "a 1 -0.5", want: pt("a", 1, 0)},
		{name: "float timestamp truncated", line: "a 1 1700000000.9", want: pt("a", 1, 1700000000e6)},
		{name: "exponent timestamp", line: "a 1 1.7e9", want: pt("a", 1, 1.7e15)},
		{name: "negative timestamp", line: "a 1 -5", want: pt("a", 1, -5e6)},
		{name: "lowest second", line: "a 1 -62135596800", want: pt("a", 1, ingest.MinTime)},
		{name: "highest second", line: "a 1 253402300799", want: pt("a", 1, ingest.MaxTime-1e6)},
		{name: "exponent value", line: "a 1e3 0", want: pt("a", 1000, 0)},
		{name: "hex value", line: "a 0x1p4 0", want: pt("a", 16, 0)},
		{name: "max float", line: "a 1.7976931348623157e308 0", want: pt("a", 1.7976931348623157e308, 0)},
		{name: "tagged sorted", line: "cpu;z=1;a=2 1 0", want: pt("cpu", 1, 0, tag("a", "2"), tag("z", "1"))},
		{name: "tag value with =", line: "cpu;k=v=w 1 0", want: pt("cpu", 1, 0, tag("k", "v=w"))},
		{name: "UTF-8 allowed", limits: &utf8, line: "héllo;k=wörld 1 0", want: pt("héllo", 1, 0, tag("k", "wörld"))},
		{name: "empty line", line: ""},
		{name: "blank line", line: " \t\r"},

		{name: "one field", line: "a.b", err: ingest.ErrSyntax},
		{name: "four fields", line: "a 1 2 3", err: ingest.ErrSyntax},
		{name: "space in name", line: "a b 1 0", err: ingest.ErrSyntax},
		{name: "space in name, 3 fields", line: "a b 1", err: ingest.ErrValue},
		{name: "NaN", line: "a nan 0", err: ingest.ErrValue},
		{name: "NaN capitalised", line: "a NaN 0", err: ingest.ErrValue},
		{name: "inf", line: "a inf 0", err: ingest.ErrValue},
		{name: "-Infinity", line: "a -Infinity 0", err: ingest.ErrValue},
		{name: "1e400", line: "a 1e400 0", err: ingest.ErrValue},
		{name: "-1e400", line: "a -1e400 0", err: ingest.ErrValue},
		{name: "not a number", line: "a abc 0", err: ingest.ErrValue},
		{name: "comma decimal", line: "a 1,5 0", err: ingest.ErrValue},
		{name: "bad timestamp", line: "a 1 abc", err: ingest.ErrTimestamp},
		{name: "NaN timestamp", line: "a 1 nan", err: ingest.ErrTimestamp},
		{name: "inf timestamp", line: "a 1 inf", err: ingest.ErrTimestamp},
		{name: "1e20 timestamp", line: "a 1 1e20", err: ingest.ErrTimestamp},
		{name: "overflowing int timestamp", line: "a 1 99999999999999999999", err: ingest.ErrTimestamp},
		{name: "year 10000", line: "a 1 253402300800", err: ingest.ErrTimestamp},
		{name: "year 0", line: "a 1 -62135596801", err: ingest.ErrTimestamp},
		{name: "control char in name", line: "a\x01b 1 0", err: ingest.ErrName},
		{name: "DEL in name", line: "a\x7fb 1 0", err: ingest.ErrName},
		{name: "NUL in name", line: "a\x00 1 0", err: ingest.ErrName},
		{name: "non-ASCII name", line: "héllo 1 0", err: ingest.ErrName},
		{name: "invalid UTF-8 name", limits: &utf8, line: "a\xff 1 0", err: ingest.ErrName},
		{name: "name too long", limits: &few, line: "abcdefghi 1 0", err: ingest.ErrName},
		{name: "line too long", limits: &few, line: "a 1 0" + strings.Repeat(" ", 40), err: ingest.ErrLimit},
		{name: "empty name before tags", line: ";k=v 1 0", err: ingest.ErrName},
		{name: "tilde name", line: "~~;k=v 1 0", err: ingest.ErrName},
		{name: "empty tag segment", line: "a; 1 0", err: ingest.ErrTag},
		{name: "trailing semicolon", line: "a;k=v; 1 0", err: ingest.ErrTag},
		{name: "tag without =", line: "a;k 1 0", err: ingest.ErrTag},
		{name: "empty tag key", line: "a;=v 1 0", err: ingest.ErrTag},
		{name: "empty tag value", line: "a;k= 1 0", err: ingest.ErrTag},
		{name: "tag value ~", line: "a;k=~v 1 0", err: ingest.ErrTag},
		{name: "tag key !", line: "a;k!=v 1 0", err: ingest.ErrTag},
		{name: "tag key ^", line: "a;^k=v 1 0", err: ingest.ErrTag},
		{name: "tag key name", line: "a;name=x 1 0", err: ingest.ErrTag},
		{name: "duplicate tag", line: "a;k=1;k=2 1 0", err: ingest.ErrTag},
		{name: "control char in tag", line: "a;k=v\x01 1 0", err: ingest.ErrTag},
		{name: "too many tags", limits: &few, line: "a;a=1;b=2;c=3 1 0", err: ingest.ErrTag},
		{name: "tag value too long", limits: &few, line: "a;a=12345 1 0", err: ingest.ErrTag},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := ingest.DefaultLimits()
			if c.limits != nil {
				l = *c.limits
			}
			p := newParser(t, l)
			prev := []ingest.Point{{Name: "kept", Value: 7}}
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
		})
	}
}

func TestAppendLineErrorMessages(t *testing.T) {
	p := newParser(t, ingest.DefaultLimits())
	for line, want := range map[string]string{
		"a\x01b 1 0":    `invalid name "a\x01b": byte '\x01' (0x01) at offset 1 is not allowed`,
		"a 1 2 3":       `malformed input "a 1 2 3": more than 3 fields`,
		"a;k=1;k=2 1 0": `invalid tag: duplicate key "k"`,
	} {
		_, err := p.AppendLine(nil, []byte(line))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("AppendLine(%q) error = %v, want it to contain %s", line, err, want)
		}
	}
}

// TestAppendLineNoRetention checks that points do not alias the line.
func TestAppendLineNoRetention(t *testing.T) {
	p := newParser(t, ingest.DefaultLimits())
	line := []byte("some.metric;host=web1 1 1700000000")
	pts, err := p.AppendLine(nil, line)
	if err != nil {
		t.Fatal(err)
	}
	for i := range line {
		line[i] = 'X'
	}
	if pts[0].Name != "some.metric" || pts[0].Tags[0] != (ingest.Tag{Key: "host", Value: "web1"}) {
		t.Fatalf("point changed with its input: %+v", pts[0])
	}
}

// TestAppendLineZeroAlloc checks the steady state: reusing dst and
// seeing known names allocates nothing.
func TestAppendLineZeroAlloc(t *testing.T) {
	p := newParser(t, ingest.DefaultLimits())
	lines := [][]byte{
		[]byte("servers.web1.cpu.user 12.5 1700000000"),
		[]byte("servers.web1.cpu;host=web1;dc=eu 3 1700000000"),
		[]byte("servers.web1.mem 1e9"),
	}
	var dst []ingest.Point
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
		t.Errorf("AppendLine allocates %v times per 3 lines, want 0", n)
	}
}

func TestNewParser(t *testing.T) {
	if _, err := NewParser(ingest.DefaultLimits(), nil); err == nil {
		t.Error("NewParser accepted a nil clock")
	}
	if _, err := NewParser(ingest.Limits{}, now); err == nil {
		t.Error("NewParser accepted zero limits")
	}
}

// TestPlainSecondsIsCarbons: the fast path for fractional timestamps
// gives what the float path gives (carbon's int(float(ts))), and leaves
// the rest to it.
func TestPlainSecondsIsCarbons(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 2))
	now := func() time.Time { return time.Unix(1_700_000_000, 0) }
	check := func(s string) {
		t.Helper()
		got, ok := plainSeconds([]byte(s))
		f, fok := ingest.ParseFloat([]byte(s))
		if !ok {
			return
		}
		want, err := floatSecondsMicros(f, now)
		gotUS, gerr := secondsMicros(got, now)
		if !fok || err != nil || gerr != nil || gotUS != want {
			t.Fatalf("%q: fast path %d s (%d µs, %v); float path %v → %d µs, %v", s, got, gotUS, gerr, f, want, err)
		}
	}
	for _, s := range []string{"1732689600.123456", "1732689600.999999", "8589934591.999999", "-1.5", "-0.5", "0.0", "+7.", "12.", ".5", "1.2.3", "1e3."} {
		check(s)
	}
	if _, ok := plainSeconds([]byte("1732689600.1234567")); ok {
		t.Error("7 fraction digits taken by the fast path")
	}
	if _, ok := plainSeconds([]byte("8589934592.5")); ok {
		t.Error("2^33 taken by the fast path")
	}
	for range 200_000 {
		b := []byte{}
		if r.IntN(5) == 0 {
			b = append(b, '-')
		}
		for range 1 + r.IntN(11) {
			b = append(b, byte('0'+r.IntN(10)))
		}
		b = append(b, '.')
		nines := r.IntN(3) == 0
		for range r.IntN(8) {
			if nines {
				b = append(b, '9')
			} else {
				b = append(b, byte('0'+r.IntN(10)))
			}
		}
		check(string(b))
	}
}
