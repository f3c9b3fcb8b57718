package influx

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/pgts/pgts/internal/ingest"
)

// fixedNow is the injected clock: 2023-11-14T22:15:00.123456789Z.
var fixedNow = time.Unix(1700000100, 123456789)

func now() time.Time { return fixedNow }

func newDecoder(t testing.TB, l ingest.Limits) *Decoder {
	t.Helper()
	d, err := NewDecoder(l, now)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestDecode(t *testing.T) {
	tag := func(k, v string) ingest.Tag { return ingest.Tag{Key: k, Value: v} }
	pt := func(name string, v float64, ts int64, tags ...ingest.Tag) ingest.Point {
		return ingest.Point{Name: name, Tags: tags, Value: v, Time: ts}
	}
	cases := []struct {
		name    string
		body    string
		prec    Precision
		want    []ingest.Point
		ignored int
	}{
		{"fields of every kind", "cpu,host=a usage=0.5,idle=99i,big=18446744073709551615u,up=true,down=F,note=\"x y\" 1700000000000000000\n",
			Nanosecond, []ingest.Point{
				pt("cpu.usage", 0.5, 1700000000e6, tag("host", "a")),
				pt("cpu.idle", 99, 1700000000e6, tag("host", "a")),
				pt("cpu.big", 18446744073709551615, 1700000000e6, tag("host", "a")),
				pt("cpu.up", 1, 1700000000e6, tag("host", "a")),
				pt("cpu.down", 0, 1700000000e6, tag("host", "a")),
			}, 1},
		{"tags sorted", "m,z=1,a=2 v=1 0", Nanosecond, []ingest.Point{pt("m.v", 1, 0, tag("a", "2"), tag("z", "1"))}, 0},
		{"tag key name kept as name_", "diskio,name=sda,host=a reads=3i 0", Nanosecond,
			[]ingest.Point{pt("diskio.reads", 3, 0, tag("host", "a"), tag("name_", "sda"))}, 0},
		{"escapes", `m\,x,k\,1=v\ 1 f\=x=1 0`, Nanosecond, []ingest.Point{pt("m,x.f=x", 1, 0, tag("k,1", "v 1"))}, 0},
		{"seconds", "m v=1 1700000000", Second, []ingest.Point{pt("m.v", 1, 1700000000e6)}, 0},
		{"milliseconds", "m v=1 1700000000123", Millisecond, []ingest.Point{pt("m.v", 1, 1700000000123000)}, 0},
		{"microseconds", "m v=1 1700000000123456", Microsecond, []ingest.Point{pt("m.v", 1, 1700000000123456)}, 0},
		{"nanoseconds round down", "m v=1 1700000000123456789", Nanosecond, []ingest.Point{pt("m.v", 1, 1700000000123456)}, 0},
		{"negative nanoseconds round down", "m v=1 -1500", Nanosecond, []ingest.Point{pt("m.v", 1, -2)}, 0},
		{"negative seconds", "m v=1 -86400", Second, []ingest.Point{pt("m.v", 1, -86400e6)}, 0},
		{"no timestamp, ns", "m v=1", Nanosecond, []ingest.Point{pt("m.v", 1, 1700000100123456)}, 0},
		{"no timestamp, s", "m v=1\n", Second, []ingest.Point{pt("m.v", 1, 1700000100e6)}, 0},
		{"no timestamp, ms", "m v=1\n", Millisecond, []ingest.Point{pt("m.v", 1, 1700000100123000)}, 0},
		{"comments and blank lines", "# hello\n\n  \nm v=1 0\r\n# bye\n", Nanosecond, []ingest.Point{pt("m.v", 1, 0)}, 0},
		{"only strings", "m s=\"a\",t=\"b\" 0", Nanosecond, nil, 2},
		{"empty body", "", Nanosecond, nil, 0},
		{"two lines", "a v=1 1\nb,k=v w=2i 2\n", Second, []ingest.Point{pt("a.v", 1, 1e6), pt("b.w", 2, 2e6, tag("k", "v"))}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := newDecoder(t, ingest.DefaultLimits())
			got, st, err := d.Decode(nil, []byte(c.body), c.prec)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(c.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("points (-want +got):\n%s", diff)
			}
			if st.Points != len(c.want) || st.Rejected != 0 || st.Ignored != c.ignored || st.FirstErr != nil {
				t.Errorf("stats = %+v, want %d points, %d ignored", st, len(c.want), c.ignored)
			}
		})
	}
}

func TestDecodeBadLines(t *testing.T) {
	utf8 := ingest.DefaultLimits()
	utf8.AllowUTF8 = true
	few := ingest.DefaultLimits()
	few.MaxTags = 1
	few.MaxNameBytes = 8
	few.MaxTagBytes = 4
	cases := []struct {
		name   string
		limits *ingest.Limits
		line   string
		prec   Precision
		err    error
	}{
		{"no fields", nil, "m", Nanosecond, ingest.ErrSyntax},
		{"no field value", nil, "m v=", Nanosecond, ingest.ErrSyntax},
		{"bad field value", nil, "m v=abc", Nanosecond, ingest.ErrSyntax},
		{"NaN", nil, "m v=NaN", Nanosecond, ingest.ErrSyntax},
		{"inf", nil, "m v=inf", Nanosecond, ingest.ErrSyntax},
		{"1e400", nil, "m v=1e400", Nanosecond, ingest.ErrValue},
		{"int overflow", nil, "m v=9223372036854775808i", Nanosecond, ingest.ErrValue},
		{"negative unsigned", nil, "m v=-1u", Nanosecond, ingest.ErrSyntax},
		{"bad timestamp", nil, "m v=1 12ab", Nanosecond, ingest.ErrSyntax},
		{"text after timestamp", nil, "m v=1 1 2", Nanosecond, ingest.ErrSyntax},
		{"timestamp overflows", nil, "m v=1 99999999999999999999", Nanosecond, ingest.ErrTimestamp},
		{"seconds beyond year 9999", nil, "m v=1 253402300800", Second, ingest.ErrTimestamp},
		{"seconds overflowing micros", nil, "m v=1 9223372036854775807", Second, ingest.ErrTimestamp},
		{"milliseconds overflowing micros", nil, "m v=1 -9223372036854775807", Millisecond, ingest.ErrTimestamp},
		{"before year 1", nil, "m v=1 -62135596801", Second, ingest.ErrTimestamp},
		{"tag without value", nil, "m,k v=1", Nanosecond, ingest.ErrSyntax},
		{"empty tag value", nil, "m,k= v=1", Nanosecond, ingest.ErrSyntax},
		{"duplicate tag", nil, "m,k=1,k=2 v=1", Nanosecond, ingest.ErrTag},
		{"control char in tag", nil, "m,k=a\x01b v=1", Nanosecond, ingest.ErrSyntax},
		{"C1 control in tag", nil, "m,k=a\u0085b v=1", Nanosecond, ingest.ErrTag},
		{"space in tag key", nil, "m,k\\ 1=a v=1", Nanosecond, ingest.ErrTag},
		{"too many tags", &few, "m,a=1,b=2 v=1", Nanosecond, ingest.ErrTag},
		{"tag too long", &few, "m,a=12345 v=1", Nanosecond, ingest.ErrTag},
		{"name too long", &few, "measure v=1", Nanosecond, ingest.ErrName},
		{"control char in name", nil, "m\x01 v=1", Nanosecond, ingest.ErrSyntax},
		{"C1 control in name", &utf8, "m\u0085 v=1", Nanosecond, ingest.ErrName},
		{"space in name", nil, "m\\ x v=1", Nanosecond, ingest.ErrName},
		{"non-ASCII name", nil, "mé v=1", Nanosecond, ingest.ErrName},
		{"invalid UTF-8", &utf8, "m\xff v=1", Nanosecond, ingest.ErrSyntax},
		// Graphite 1.1's tag rules (carbon's TaggedSeries), since these
		// series are rendered as "m.f;k=v".
		{"tag key with ';'", nil, "m,k;x=a v=1", Nanosecond, ingest.ErrTag},
		{"tag key with '!'", nil, "m,k!=a v=1", Nanosecond, ingest.ErrTag},
		{"tag key with '^'", nil, "m,k^=a v=1", Nanosecond, ingest.ErrTag},
		{"tag key with '='", nil, `m,k\=x=a v=1`, Nanosecond, ingest.ErrTag},
		{"tag value with ';'", nil, "m,k=a;b v=1", Nanosecond, ingest.ErrTag},
		{"tag value starting with '~'", nil, "m,k=~a v=1", Nanosecond, ingest.ErrTag},
		{"tag key name and name_", nil, "m,name=a,name_=b v=1", Nanosecond, ingest.ErrTag},
		{"measurement with ';'", nil, "m;x v=1", Nanosecond, ingest.ErrName},
		{"field with ';'", nil, "m f;x=1", Nanosecond, ingest.ErrName},
		{"tagged measurement with ';'", nil, "m;x,k=a v=1", Nanosecond, ingest.ErrName},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := ingest.DefaultLimits()
			if c.limits != nil {
				l = *c.limits
			}
			d := newDecoder(t, l)
			// The bad line sits between two good ones, on line 3.
			body := "a v=1 1\n\n" + c.line + "\nb v=2 2\n"
			got, st, err := d.Decode(nil, []byte(body), c.prec)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if len(got) != 2 || got[0].Name != "a.v" || got[1].Name != "b.v" || st.Points != 2 {
				t.Errorf("good lines: %+v, %+v", got, st)
			}
			var le *ingest.LineError
			if st.Rejected != 1 || !errors.As(st.FirstErr, &le) || le.Line != 3 || !errors.Is(st.FirstErr, c.err) {
				t.Errorf("stats = %+v, want line 3 refused with %v", st, c.err)
			}
		})
	}
}

// TestDecodeLineNumbers checks line numbers when lines span several
// newlines and when every token of the bad line is escaped.
func TestDecodeLineNumbers(t *testing.T) {
	body := "a s=\"one\ntwo\nthree\" 1\n" + // lines 1-3
		"# comment\n" + // 4
		"b,k=1,k=2 v=1\n" + // 5: duplicate tag
		"c v=1 1\n" + // 6
		"d\\,x,k\\,1=\\ 1,k\\,1=\\ 2 f\\ 1=1\n" + // 7: escaped, duplicate tag
		"e v=bad\n" // 8
	d := newDecoder(t, ingest.DefaultLimits())
	for pass := range 2 { // the second pass runs from the caches
		_, st, err := d.Decode(nil, []byte(body), Second)
		if err != nil {
			t.Fatal(err)
		}
		if st.Rejected != 3 || st.Points != 1 || st.Ignored != 1 {
			t.Fatalf("pass %d: stats = %+v", pass, st)
		}
		var le *ingest.LineError
		if !errors.As(st.FirstErr, &le) || le.Line != 5 {
			t.Fatalf("pass %d: first error %v, want line 5", pass, st.FirstErr)
		}
	}
	// Each bad line on its own.
	for _, c := range []struct {
		body string
		line int
	}{
		{"a v=1\nd\\,x,k\\,1=\\ 1,k\\,1=\\ 2 f\\ 1=1\n", 2},          // anchored on the field value
		{"a v=1\nd\\,x,k\\,1=\\ 1,k\\,1=\\ 2 f\\ 1=\"\\\"\" 5\n", 2}, // on the timestamp
		{"a v=1\nd\\,x,k\\,1=\\ 1,k\\,1=\\ 2 f\\ 1=\"\\\"\"\n", 0},   // nothing to anchor on
		{"a v=1\n\n\ne v=bad\n", 4},                                  // syntax error
		{"a v=1\nd,k=1,k=2 s=\"x\ny\" 5\nz,k=2,k=3 v=1\n", 2},
	} {
		_, st, _ := d.Decode(nil, []byte(c.body), Second)
		var le *ingest.LineError
		if !errors.As(st.FirstErr, &le) || le.Line != c.line {
			t.Errorf("Decode(%q): first error %v, want line %d", c.body, st.FirstErr, c.line)
		}
	}
}

func TestDecodeLimits(t *testing.T) {
	l := ingest.DefaultLimits()
	l.MaxPoints = 3
	l.MaxBodyBytes = 64
	d := newDecoder(t, l)
	prev := []ingest.Point{{Name: "kept"}}
	got, _, err := d.Decode(prev, []byte("m a=1,b=2\nn c=3,d=4\n"), Nanosecond)
	if !errors.Is(err, ingest.ErrLimit) || len(got) != 1 || got[0].Name != "kept" {
		t.Errorf("too many points: %v, %+v", err, got)
	}
	if _, _, err := d.Decode(nil, []byte("m a=1,b=2,c=3\n"), Nanosecond); err != nil {
		t.Errorf("3 points: %v", err)
	}
	if _, _, err := d.Decode(prev, []byte(strings.Repeat("m a=1\n", 11)), Nanosecond); !errors.Is(err, ingest.ErrLimit) {
		t.Errorf("body too large: %v", err)
	}
	if _, _, err := d.Decode(nil, []byte("m a=1"), Precision(9)); err == nil {
		t.Error("Decode accepted precision 9")
	}
}

func TestDecodeNoRetention(t *testing.T) {
	d := newDecoder(t, ingest.DefaultLimits())
	body := []byte("cpu,host=web1 usage=0.5 1")
	got, _, err := d.Decode(nil, body, Second)
	if err != nil {
		t.Fatal(err)
	}
	clear(body)
	if got[0].Name != "cpu.usage" || got[0].Tags[0] != (ingest.Tag{Key: "host", Value: "web1"}) {
		t.Fatalf("point changed with its input: %+v", got[0])
	}
}

func TestParsePrecision(t *testing.T) {
	for s, want := range map[string]Precision{"": Nanosecond, "ns": Nanosecond, "n": Nanosecond,
		"us": Microsecond, "u": Microsecond, "µs": Microsecond, "ms": Millisecond, "s": Second} {
		got, err := ParsePrecision(s)
		if err != nil || got != want {
			t.Errorf("ParsePrecision(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"m", "h", "S", "sec"} {
		if _, err := ParsePrecision(s); err == nil {
			t.Errorf("ParsePrecision(%q) accepted", s)
		}
	}
	for p, want := range map[Precision]string{Nanosecond: "ns", Microsecond: "us", Millisecond: "ms", Second: "s", 7: "Precision(7)"} {
		if got := p.String(); got != want {
			t.Errorf("%d.String() = %q", p, got)
		}
	}
}

// TestDecodeAllocs checks the steady state: a body allocates only the
// tokeniser (two allocations), whatever its number of points.
func TestDecodeAllocs(t *testing.T) {
	body := []byte(benchBody(200))
	d := newDecoder(t, ingest.DefaultLimits())
	var dst []ingest.Point
	run := func() {
		var err error
		if dst, _, err = d.Decode(dst[:0], body, Nanosecond); err != nil {
			t.Fatal(err)
		}
	}
	run()
	if n := testing.AllocsPerRun(50, run); n > 2 {
		t.Errorf("Decode allocates %v times per body of %d points, want at most 2", n, len(dst))
	}
}
