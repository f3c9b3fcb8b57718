package graphite

import (
	"encoding/binary"
	"errors"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	ogorek "github.com/kisielk/og-rek"
	"github.com/pgts/pgts/internal/ingest"
)

// The fixtures in testdata are frames (4-byte length and pickle) made by
// CPython 3.11's pickle module, as a carbon client sends them:
//
//	import os, pickle, struct
//
//	points = [
//	    ("servers.web1.cpu.user", (1700000000, 12.5)),
//	    ("servers.web1.cpu.system", (1700000000, 3)),
//	    ("disk.used;mount=/var;host=web1", (1700000010.75, 1.5e9)),
//	    ("clock.skew", (-1, -0.25)),
//	    ("requests.total", (1700000020, 2**62)),
//	    ("bad.nan", (1700000030, float("nan"))),
//	    ("h\u00e9llo.w\u00f6rld", (1700000040, 1)),
//	]
//
//	def frame(payload):
//	    return struct.pack("!L", len(payload)) + payload
//
//	for proto in (0, 2, 4):
//	    with open("carbon_proto%d.pickle" % proto, "wb") as f:
//	        f.write(frame(pickle.dumps(points, protocol=proto)))
//
//	class Evil:
//	    def __reduce__(self):
//	        return (os.system, ("echo pwned",))
//
//	with open("evil_reduce.pickle", "wb") as f:
//	    f.write(frame(pickle.dumps([("a.b", (1700000000, Evil()))], protocol=2)))
var fixtureFiles = []string{"carbon_proto0.pickle", "carbon_proto2.pickle", "carbon_proto4.pickle"}

// fixturePoints are the valid points of the fixtures, in order.
var fixturePoints = []ingest.Point{
	{Name: "servers.web1.cpu.user", Value: 12.5, Time: 1700000000e6},
	{Name: "servers.web1.cpu.system", Value: 3, Time: 1700000000e6},
	{Name: "disk.used", Tags: []ingest.Tag{{Key: "host", Value: "web1"}, {Key: "mount", Value: "/var"}}, Value: 1.5e9, Time: 1700000010e6},
	{Name: "clock.skew", Value: -0.25, Time: nowMicrosTest},
	{Name: "requests.total", Value: 1 << 62, Time: 1700000020e6},
}

// readFrame reads a fixture and returns its pickle, checking the header.
func readFrame(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	n, err := FrameLength(b[:FrameHeaderBytes], ingest.DefaultLimits())
	if err != nil {
		t.Fatal(err)
	}
	if n != len(b)-FrameHeaderBytes {
		t.Fatalf("%s: header says %d bytes, %d follow", name, n, len(b)-FrameHeaderBytes)
	}
	return b[FrameHeaderBytes:]
}

func newPickleDecoder(t testing.TB, l ingest.Limits) *PickleDecoder {
	t.Helper()
	d, err := NewPickleDecoder(l, now)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestPickleFixtures(t *testing.T) {
	for _, name := range fixtureFiles {
		t.Run(name, func(t *testing.T) {
			frame := readFrame(t, name)
			d := newPickleDecoder(t, ingest.DefaultLimits())
			got, st, err := d.Decode(nil, frame)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(fixturePoints, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("points mismatch (-want +got):\n%s", diff)
			}
			if st.Points != 5 || st.Rejected != 2 {
				t.Errorf("stats = %+v, want 5 points and 2 rejected", st)
			}
			var ee *ingest.EntryError
			if !errors.As(st.FirstErr, &ee) || ee.Index != 5 || !errors.Is(st.FirstErr, ingest.ErrValue) {
				t.Errorf("first error = %v, want entry 5 (NaN) with ErrValue", st.FirstErr)
			}

			// With UTF-8 names the last element is accepted too.
			l := ingest.DefaultLimits()
			l.AllowUTF8 = true
			got, st, err = newPickleDecoder(t, l).Decode(nil, frame)
			if err != nil || st.Points != 6 || got[5].Name != "héllo.wörld" || got[5].Time != 1700000040e6 {
				t.Errorf("with UTF-8: %v, %+v, %+v", err, st, got)
			}
		})
	}
}

// TestPickleFixturesAgreeWithOgRek decodes the fixtures with og-rek, an
// independent pickle decoder, and checks that both agree.
func TestPickleFixturesAgreeWithOgRek(t *testing.T) {
	for _, name := range fixtureFiles {
		frame := readFrame(t, name)
		obj, err := ogorek.NewDecoder(strings.NewReader(string(frame))).Decode()
		if err != nil {
			t.Fatalf("%s: og-rek: %v", name, err)
		}
		list, ok := obj.([]any)
		if !ok {
			t.Fatalf("%s: og-rek decoded %T, want a list", name, obj)
		}
		d := newPickleDecoder(t, ingest.DefaultLimits())
		got, _, err := d.Decode(nil, frame)
		if err != nil {
			t.Fatal(err)
		}
		// The first five elements are the valid ones.
		for i, p := range got {
			el := list[i].(ogorek.Tuple)
			tv := el[1].(ogorek.Tuple)
			path := el[0].(string)
			if !strings.HasPrefix(path, p.Name) {
				t.Errorf("%s[%d]: path %q, decoded name %q", name, i, path, p.Name)
			}
			if ts := ogNumber(t, tv[0]); ts != -1 && int64(ts)*1e6 != p.Time {
				t.Errorf("%s[%d]: og-rek timestamp %v, decoded %d", name, i, ts, p.Time)
			}
			if v := ogNumber(t, tv[1]); v != p.Value {
				t.Errorf("%s[%d]: og-rek value %v, decoded %v", name, i, v, p.Value)
			}
		}
	}
}

func ogNumber(t *testing.T, v any) float64 {
	switch v := v.(type) {
	case int64:
		return float64(v)
	case float64:
		return v
	case *big.Int:
		f, _ := new(big.Float).SetInt(v).Float64()
		return f
	}
	t.Fatalf("og-rek number of type %T", v)
	return 0
}

func TestPickleRefusesCode(t *testing.T) {
	frame := readFrame(t, "evil_reduce.pickle")
	d := newPickleDecoder(t, ingest.DefaultLimits())
	got, st, err := d.Decode(nil, frame)
	if !errors.Is(err, ingest.ErrUnsupported) || len(got) != 0 || st.Points != 0 {
		t.Fatalf("Decode(evil) = %v, %+v, %v; want ErrUnsupported", got, st, err)
	}
	if !strings.Contains(err.Error(), "offset 20") {
		t.Errorf("error %q does not point at the GLOBAL opcode at offset 20", err)
	}
}

// Hand-built pickles: p2 prefixes the protocol 2 header.
func p2(s string) []byte { return []byte("\x80\x02" + s) }

func le32(n uint32) string {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], n)
	return string(b[:])
}

func f64(f float64) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], math.Float64bits(f))
	return string(b[:])
}

// xs is s as a BINUNICODE opcode.
func xs(s string) string { return "X" + le32(uint32(len(s))) + s }

// elem is a protocol 2 element (path, (ts, value)) with a BINUNICODE path.
func elem(path, ts, value string) string {
	return xs(path) + ts + value + "\x86\x86"
}

const (
	ts1 = "J\x00\xf1\x53\x65" // BININT 1700000000
	v15 = "G?\xf8\x00\x00\x00\x00\x00\x00"
)

func TestPickleValid(t *testing.T) {
	p := func(name string, v float64, ts int64, tags ...ingest.Tag) ingest.Point {
		return ingest.Point{Name: name, Tags: tags, Value: v, Time: ts}
	}
	cases := []struct {
		name  string
		frame []byte
		want  []ingest.Point
		rej   int
	}{
		{"statsd backend (protocol 0, strings and longs)",
			[]byte("(l(S'stats.a'\n(L1700000000L\nS'1.5'\ntta(S'stats.b'\n(L1700000000L\nS'-2'\ntta."),
			[]ingest.Point{p("stats.a", 1.5, 1700000000e6), p("stats.b", -2, 1700000000e6)}, 0},
		{"python 2 protocol 2 (SHORT_BINSTRING)",
			p2("]q\x00U\x03a.bq\x01" + ts1 + v15 + "\x86\x86a."),
			[]ingest.Point{p("a.b", 1.5, 1700000000e6)}, 0},
		{"BINSTRING and BINBYTES paths",
			p2("](T" + le32(3) + "a.b" + ts1 + v15 + "\x86\x86C\x03c.d" + ts1 + v15 + "\x86\x86e."),
			[]ingest.Point{p("a.b", 1.5, 1700000000e6), p("c.d", 1.5, 1700000000e6)}, 0},
		{"escaped STRING",
			[]byte("(lp0\n(S'a\\x2eb\\\\'\n(I1700000000\nF2.5\ntta."),
			[]ingest.Point{p("a.b\\", 2.5, 1700000000e6)}, 1 - 1},
		{"octal escape",
			[]byte("(l(S\"a\\056b\"\n(I1700000000\nI01\ntta."),
			[]ingest.Point{p("a.b", 1, 1700000000e6)}, 0},
		{"top-level tuple",
			p2("(" + elem("a", ts1, v15) + "t."),
			[]ingest.Point{p("a", 1.5, 1700000000e6)}, 0},
		{"lists instead of tuples",
			[]byte("(l(lS'a'\na(lI1700000000\naF3\naaa."),
			[]ingest.Point{p("a", 3, 1700000000e6)}, 0},
		{"memo shared element",
			p2("]q\x00" + elem("a", ts1, v15) + "q\x01ah\x01ah\x01a."),
			[]ingest.Point{p("a", 1.5, 1700000000e6), p("a", 1.5, 1700000000e6), p("a", 1.5, 1700000000e6)}, 0},
		{"DUP",
			p2("](" + elem("a", ts1, v15) + "2e."),
			[]ingest.Point{p("a", 1.5, 1700000000e6), p("a", 1.5, 1700000000e6)}, 0},
		{"string timestamp and tags",
			p2("](" + xs("a;k=v;b=c=d") + xs(" 1700000000.5") + v15 + "\x86\x86e."),
			[]ingest.Point{p("a", 1.5, 1700000000e6, ingest.Tag{Key: "b", Value: "c=d"}, ingest.Tag{Key: "k", Value: "v"})}, 0},
		{"negative LONG1", p2("](" + elem("a", ts1, "\x8a\x02\x00\xff") + "e."), []ingest.Point{p("a", -256, 1700000000e6)}, 0},
		{"sign-extended LONG1", p2("](" + elem("a", ts1, "\x8a\x0a\xfe\xff\xff\xff\xff\xff\xff\xff\xff\xff") + "e."), []ingest.Point{p("a", -2, 1700000000e6)}, 0},
		{"LONG4 beyond int64", p2("](" + elem("a", ts1, "\x8b"+le32(9)+"\x00\x00\x00\x00\x00\x00\x00\x00\x01") + "e."), []ingest.Point{p("a", 1<<64, 1700000000e6)}, 0},
		{"text LONG beyond int64", []byte("(l(S'a'\n(I1700000000\nL-18446744073709551616L\ntta."), []ingest.Point{p("a", -(1 << 64), 1700000000e6)}, 0},
		{"BININT2 and BININT1", p2("](" + elem("a", "M\x01\x02", "K\x07") + "e."), []ingest.Point{p("a", 7, 513e6)}, 0},
		{"unicode escape", []byte("(l(Vcaf\\u00e9\x01\n(I1700000000\nI1\ntta."), nil, 1},
		{"protocol 4 frame, memoize", []byte("\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00]\x94(\x8c\x01a\x94" + ts1 + v15 + "\x86\x94\x86\x94e."),
			[]ingest.Point{p("a", 1.5, 1700000000e6)}, 0},
		{"POP and POP_MARK", p2("](" + elem("a", ts1, v15) + "K\x010(K\x011e."), []ingest.Point{p("a", 1.5, 1700000000e6)}, 0},
		{"empty list", p2("]."), nil, 0},

		{"element not a pair", p2("](K\x01" + elem("a", ts1, v15) + "e."), []ingest.Point{p("a", 1.5, 1700000000e6)}, 1},
		{"triple", p2("](X\x01\x00\x00\x00a" + ts1 + v15 + "\x86K\x01\x87e."), nil, 1},
		{"path not a string", p2("](K\x01" + ts1 + v15 + "\x86\x86e."), nil, 1},
		{"datapoint not a pair", p2("](X\x01\x00\x00\x00aK\x01\x86e."), nil, 1},
		{"value string not a number", p2("](" + elem("a", ts1, "X\x03\x00\x00\x00abc") + "e."), nil, 1},
		{"value string nan", p2("](" + elem("a", ts1, "X\x03\x00\x00\x00nan") + "e."), nil, 1},
		{"value inf", p2("](" + elem("a", ts1, "G"+f64(math.Inf(1))) + "e."), nil, 1},
		{"LONG value beyond float64", p2("](" + elem("a", ts1, "\x8b"+le32(200)+strings.Repeat("\x7f", 200)) + "e."), nil, 1},
		{"timestamp string", p2("](" + elem("a", "X\x03\x00\x00\x00abc", v15) + "e."), nil, 1},
		{"timestamp NaN", p2("](" + elem("a", "G"+f64(math.NaN()), v15) + "e."), nil, 1},
		{"timestamp out of range", p2("](" + elem("a", "G"+f64(1e15), v15) + "e."), nil, 1},
		{"timestamp -1 is now", p2("](" + elem("a", "J\xff\xff\xff\xff", v15) + "e."), []ingest.Point{p("a", 1.5, nowMicrosTest)}, 0},
		{"bad name", p2("](" + elem("a b", ts1, v15) + "e."), nil, 1},
		{"list containing itself", p2("]q\x00h\x00a."), nil, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := newPickleDecoder(t, ingest.DefaultLimits())
			got, st, err := d.Decode(nil, c.frame)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if diff := cmp.Diff(c.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("points mismatch (-want +got):\n%s", diff)
			}
			if st.Rejected != c.rej || st.Points != len(c.want) {
				t.Errorf("stats = %+v, want %d points, %d rejected", st, len(c.want), c.rej)
			}
			if (st.FirstErr != nil) != (c.rej > 0) {
				t.Errorf("FirstErr = %v with %d rejected", st.FirstErr, c.rej)
			}
		})
	}
}

func TestPickleMalformed(t *testing.T) {
	small := ingest.DefaultLimits()
	small.MaxPoints = 2
	small.MaxFrameBytes = 64
	cases := []struct {
		name   string
		limits *ingest.Limits
		frame  []byte
		err    error
	}{
		{"empty", nil, nil, ingest.ErrSyntax},
		{"no STOP", nil, p2("]"), ingest.ErrSyntax},
		{"STOP on empty stack", nil, p2("."), ingest.ErrSyntax},
		{"trailing bytes", nil, p2("].]"), ingest.ErrSyntax},
		{"protocol 6", nil, []byte("\x80\x06]."), ingest.ErrSyntax},
		{"not a list", nil, p2("K\x01."), ingest.ErrSyntax},
		{"string root", nil, p2("X\x01\x00\x00\x00a."), ingest.ErrSyntax},
		{"APPEND to a tuple", nil, p2(")K\x01a."), ingest.ErrSyntax},
		{"APPEND on one item", nil, p2("]a."), ingest.ErrSyntax},
		{"APPENDS without MARK", nil, p2("]K\x01e."), ingest.ErrSyntax},
		{"APPENDS with nothing below MARK", nil, p2("(K\x01e."), ingest.ErrSyntax},
		{"APPENDS to a list beyond the mark", nil, p2("](K\x01(K\x01e."), ingest.ErrSyntax},
		{"TUPLE without MARK", nil, p2("K\x01t."), ingest.ErrSyntax},
		{"TUPLE2 on one item", nil, p2("K\x01\x86."), ingest.ErrSyntax},
		{"TUPLE2 across a MARK", nil, p2("K\x01(K\x01\x86."), ingest.ErrSyntax},
		{"POP on empty stack", nil, p2("0]."), ingest.ErrSyntax},
		{"POP_MARK without MARK", nil, p2("1]."), ingest.ErrSyntax},
		{"DUP on empty stack", nil, p2("2]."), ingest.ErrSyntax},
		{"BINPUT on empty stack", nil, p2("q\x00]."), ingest.ErrSyntax},
		{"GET of unset key", nil, p2("]h\x05."), ingest.ErrSyntax},
		{"text GET of unset key", nil, []byte("g3\n."), ingest.ErrSyntax},
		{"memo key beyond the frame", nil, p2("]r\xff\xff\xff\xff."), ingest.ErrSyntax},
		{"PUT key not a number", nil, []byte("]px\n."), ingest.ErrSyntax},
		{"LONG4 negative count", nil, p2("\x8b\xff\xff\xff\xff."), ingest.ErrSyntax},
		{"BINSTRING negative length", nil, p2("T\xff\xff\xff\xff."), ingest.ErrSyntax},
		{"BINUNICODE8 huge length", nil, p2("\x8d\xff\xff\xff\xff\xff\xff\xff\xff."), ingest.ErrSyntax},
		{"BINUNICODE beyond the frame", nil, p2("X\x10\x00\x00\x00abc."), ingest.ErrSyntax},
		{"truncated BINFLOAT", nil, p2("G\x00\x00"), ingest.ErrSyntax},
		{"truncated FRAME", nil, []byte("\x80\x04\x95\x00"), ingest.ErrSyntax},
		{"text INT without newline", nil, []byte("I12"), ingest.ErrSyntax},
		{"text INT not a number", nil, []byte("I1x\n."), ingest.ErrSyntax},
		{"text FLOAT not a number", nil, []byte("Fx\n."), ingest.ErrSyntax},
		{"STRING unquoted", nil, []byte("Sabc\n."), ingest.ErrSyntax},
		{"STRING mismatched quotes", nil, []byte("S'abc\"\n."), ingest.ErrSyntax},
		{"STRING lone backslash", nil, []byte("S'ab\\'\n."), ingest.ErrSyntax},
		{"STRING bad \\x", nil, []byte("S'\\xzz'\n."), ingest.ErrSyntax},
		{"STRING truncated \\x", nil, []byte("S'\\x4'\n."), ingest.ErrSyntax},
		{"UNICODE truncated \\u", nil, []byte("Vab\\u12\n."), ingest.ErrSyntax},
		{"UNICODE bad \\u", nil, []byte("Vab\\u12zz\n."), ingest.ErrSyntax},
		{"UNICODE surrogate", nil, []byte("V\\ud800\n."), ingest.ErrSyntax},
		{"UNICODE beyond U+10FFFF", nil, []byte("V\\U00110000\n."), ingest.ErrSyntax},
		{"too many elements", &small, p2("](" + elem("a", ts1, v15) + "22e."), ingest.ErrLimit},
		{"too long a tuple", &small, p2("(K\x01K\x01K\x01t."), ingest.ErrLimit},
		{"frame too large", &small, p2("]" + strings.Repeat("K\x010", 40) + "."), ingest.ErrLimit},

		{"None", nil, p2("N."), ingest.ErrUnsupported},
		{"True", nil, p2("\x88."), ingest.ErrUnsupported},
		{"False", nil, p2("\x89."), ingest.ErrUnsupported},
		{"empty dict", nil, p2("}."), ingest.ErrUnsupported},
		{"DICT", nil, []byte("(d."), ingest.ErrUnsupported},
		{"SETITEM", nil, p2("}K\x01K\x02s."), ingest.ErrUnsupported},
		{"GLOBAL", nil, []byte("cos\nsystem\n."), ingest.ErrUnsupported},
		{"STACK_GLOBAL", nil, []byte("\x80\x04\x8c\x02os\x8c\x06system\x93."), ingest.ErrUnsupported},
		{"REDUCE", nil, p2("]]R."), ingest.ErrUnsupported},
		{"BUILD", nil, p2("]]b."), ingest.ErrUnsupported},
		{"INST", nil, []byte("(ios\nsystem\n."), ingest.ErrUnsupported},
		{"OBJ", nil, p2("(]o."), ingest.ErrUnsupported},
		{"NEWOBJ", nil, p2("])\x81."), ingest.ErrUnsupported},
		{"NEWOBJ_EX", nil, p2("]))\x92."), ingest.ErrUnsupported},
		{"EXT1", nil, p2("\x82\x01."), ingest.ErrUnsupported},
		{"PERSID", nil, []byte("P1\n."), ingest.ErrUnsupported},
		{"BINPERSID", nil, p2("K\x01Q."), ingest.ErrUnsupported},
		{"EMPTY_SET", nil, []byte("\x80\x04\x8f."), ingest.ErrUnsupported},
		{"FROZENSET", nil, []byte("\x80\x04(\x91."), ingest.ErrUnsupported},
		{"BYTEARRAY8", nil, []byte("\x80\x05\x96\x00\x00\x00\x00\x00\x00\x00\x00."), ingest.ErrUnsupported},
		{"NEXT_BUFFER", nil, []byte("\x80\x05\x97."), ingest.ErrUnsupported},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := ingest.DefaultLimits()
			if c.limits != nil {
				l = *c.limits
			}
			d := newPickleDecoder(t, l)
			prev := []ingest.Point{{Name: "kept"}}
			got, st, err := d.Decode(prev, c.frame)
			if !errors.Is(err, c.err) {
				t.Fatalf("Decode(%q) = %v, want %v", c.frame, err, c.err)
			}
			if len(got) != 1 || got[0].Name != "kept" || st.Points != 0 {
				t.Errorf("Decode changed dst on error: %+v, %+v", got, st)
			}
		})
	}
}

// TestPickleTruncated decodes every proper prefix of a fixture.
func TestPickleTruncated(t *testing.T) {
	frame := readFrame(t, "carbon_proto2.pickle")
	d := newPickleDecoder(t, ingest.DefaultLimits())
	for n := range len(frame) {
		if _, _, err := d.Decode(nil, frame[:n]); !errors.Is(err, ingest.ErrSyntax) {
			t.Errorf("Decode(first %d bytes) = %v, want ErrSyntax", n, err)
		}
	}
}

// TestPickleSharedReferences builds a DAG whose expansion would hold
// 2^40 references: decoding must stay linear in the frame.
func TestPickleSharedReferences(t *testing.T) {
	frame := "]q\x00" + elem("a", ts1, v15)
	for range 40 {
		frame += "2\x86" // (x, x)
	}
	frame += "a."
	d := newPickleDecoder(t, ingest.DefaultLimits())
	start := time.Now()
	_, st, err := d.Decode(nil, p2(frame))
	if err != nil || st.Rejected != 1 {
		t.Fatalf("Decode = %+v, %v; want 1 rejected element", st, err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Decode took %v", d)
	}
}

func TestFrameLength(t *testing.T) {
	l := ingest.DefaultLimits()
	cases := []struct {
		hdr  []byte
		want int
		err  error
	}{
		{[]byte{0, 0, 1, 0}, 256, nil},
		{[]byte{0, 16, 0, 0}, 1 << 20, nil},
		{[]byte{0, 16, 0, 1}, 0, ingest.ErrLimit},
		{[]byte{0xff, 0xff, 0xff, 0xff}, 0, ingest.ErrLimit},
		{[]byte{0, 0, 0, 0}, 0, ingest.ErrSyntax},
		{[]byte{0, 0, 1}, 0, ingest.ErrSyntax},
	}
	for _, c := range cases {
		n, err := FrameLength(c.hdr, l)
		if n != c.want || !errors.Is(err, c.err) {
			t.Errorf("FrameLength(%v) = %d, %v; want %d, %v", c.hdr, n, err, c.want, c.err)
		}
	}
}

// TestPickleNoRetention checks that points do not alias the frame.
func TestPickleNoRetention(t *testing.T) {
	frame := readFrame(t, "carbon_proto2.pickle")
	frame = append([]byte(nil), frame...)
	d := newPickleDecoder(t, ingest.DefaultLimits())
	got, _, err := d.Decode(nil, frame)
	if err != nil {
		t.Fatal(err)
	}
	clear(frame)
	if diff := cmp.Diff(fixturePoints, got, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("points changed with the frame (-want +got):\n%s", diff)
	}
}

func TestPickleZeroAlloc(t *testing.T) {
	frame := p2("](" + elem("servers.web1.cpu", ts1, v15) + elem("servers.web1.mem;host=web1", ts1, "K\x07") + "e.")
	d := newPickleDecoder(t, ingest.DefaultLimits())
	var dst []ingest.Point
	run := func() {
		var err error
		if dst, _, err = d.Decode(dst[:0], frame); err != nil {
			t.Fatal(err)
		}
	}
	run()
	if n := testing.AllocsPerRun(100, run); n != 0 {
		t.Errorf("Decode allocates %v times per frame, want 0", n)
	}
}

// TestPickleUnicode checks protocol 0's raw-unicode-escape strings.
func TestPickleUnicode(t *testing.T) {
	l := ingest.DefaultLimits()
	l.AllowUTF8 = true
	cases := map[string]string{
		`caf\u00e9`:           "café",
		"caf\xe9":             "café", // Latin-1 byte
		`a\U0001f600`:         "a😀",
		`a\\u0041`:            `a\\u0041`, // even run of backslashes: no escape
		`a\\\u0041`:           `a\\A`,
		`a\x`:                 `a\x`,
		"plain.ascii.name_42": "plain.ascii.name_42",
	}
	for in, want := range cases {
		frame := []byte("(l(V" + in + "\n(I1700000000\nI1\ntta.")
		got, st, err := newPickleDecoder(t, l).Decode(nil, frame)
		if err != nil || st.Points != 1 || got[0].Name != want {
			t.Errorf("UNICODE %q: got %+v, %+v, %v; want name %q", in, got, st, err, want)
		}
	}
}
