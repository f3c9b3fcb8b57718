package remotewrite

import (
	"bytes"
	"errors"
	"math"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/klauspost/compress/snappy"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/pgts/pgts/internal/ingest"
)

// Hand-built protobuf, independent of AppendWriteRequest.

func msg(fields ...[]byte) []byte { return bytes.Join(fields, nil) }

// bytesField is field num holding b, length-delimited.
func bytesField(num protowire.Number, b []byte) []byte {
	out := protowire.AppendTag(nil, num, protowire.BytesType)
	return protowire.AppendBytes(out, b)
}

func label(name, value string) []byte {
	return bytesField(1, msg(bytesField(1, []byte(name)), bytesField(2, []byte(value))))
}

func sample(v float64, ms int64) []byte {
	b := protowire.AppendTag(nil, 1, protowire.Fixed64Type)
	b = protowire.AppendFixed64(b, math.Float64bits(v))
	b = protowire.AppendTag(b, 2, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(ms))
	return bytesField(2, b)
}

func series(fields ...[]byte) []byte { return bytesField(1, msg(fields...)) }

func varintField(num protowire.Number, v uint64) []byte {
	return protowire.AppendVarint(protowire.AppendTag(nil, num, protowire.VarintType), v)
}

func newDecoder(t testing.TB, l ingest.Limits) *Decoder {
	t.Helper()
	d, err := NewDecoder(l)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestDecodeProto(t *testing.T) {
	tag := func(k, v string) ingest.Tag { return ingest.Tag{Key: k, Value: v} }
	pt := func(name string, v float64, us int64, tags ...ingest.Tag) ingest.Point {
		return ingest.Point{Name: name, Tags: tags, Value: v, Time: us}
	}
	staleNaN := math.Float64frombits(0x7ff0000000000002)
	unknown := msg(varintField(9, 7), protowire.AppendFixed32(protowire.AppendTag(nil, 10, protowire.Fixed32Type), 1),
		protowire.AppendFixed64(protowire.AppendTag(nil, 11, protowire.Fixed64Type), 1), bytesField(12, []byte("x")),
		protowire.AppendTag(append(protowire.AppendTag(nil, 13, protowire.StartGroupType), varintField(1, 5)...), 13, protowire.EndGroupType))
	cases := []struct {
		name     string
		req      []byte
		want     []ingest.Point
		ignored  int
		rejected int
	}{
		{"one series", series(label("__name__", "up"), label("job", "api"), label("instance", "a:9090"), sample(1, 1700000000123)),
			[]ingest.Point{pt("up", 1, 1700000000123000, tag("instance", "a:9090"), tag("job", "api"))}, 0, 0},
		{"several samples", series(label("__name__", "x"), sample(1, 1000), sample(2.5, 2000), sample(-3, -1000)),
			[]ingest.Point{pt("x", 1, 1e6), pt("x", 2.5, 2e6), pt("x", -3, -1e6)}, 0, 0},
		{"several series", msg(series(label("__name__", "a"), sample(1, 1)), series(label("__name__", "b"), label("k", "v"), sample(2, 2))),
			[]ingest.Point{pt("a", 1, 1000), pt("b", 2, 2000, tag("k", "v"))}, 0, 0},
		{"samples before labels", series(sample(1, 1), label("z", "1"), label("__name__", "a"), label("b", "2")),
			[]ingest.Point{pt("a", 1, 1000, tag("b", "2"), tag("z", "1"))}, 0, 0},
		{"empty label value dropped", series(label("__name__", "a"), label("k", ""), sample(1, 1)), []ingest.Point{pt("a", 1, 1000)}, 0, 0},
		{"zero sample", series(label("__name__", "a"), bytesField(2, nil)), []ingest.Point{pt("a", 0, 0)}, 0, 0},
		{"last value wins", series(label("__name__", "a"), bytesField(2, msg(
			protowire.AppendFixed64(protowire.AppendTag(nil, 1, protowire.Fixed64Type), math.Float64bits(1)),
			protowire.AppendFixed64(protowire.AppendTag(nil, 1, protowire.Fixed64Type), math.Float64bits(2))))),
			[]ingest.Point{pt("a", 2, 0)}, 0, 0},
		{"NaN and stale markers ignored", series(label("__name__", "a"), sample(math.NaN(), 1), sample(staleNaN, 2), sample(3, 3)),
			[]ingest.Point{pt("a", 3, 3000)}, 2, 0},
		{"histograms ignored", series(label("__name__", "h"), bytesField(4, []byte{8, 1}), bytesField(4, nil)), nil, 2, 0},
		{"unknown fields skipped", msg(unknown, series(unknown, label("__name__", "a"), bytesField(3, []byte("exemplar")),
			sample(1, 1)), bytesField(3, []byte("metadata"))), []ingest.Point{pt("a", 1, 1000)}, 0, 0},
		{"unknown fields in label and sample", series(bytesField(1, msg(unknown, bytesField(1, []byte("__name__")), bytesField(2, []byte("a")))),
			bytesField(2, msg(unknown, sample(1, 1)[2:]))), []ingest.Point{pt("a", 1, 1000)}, 0, 0},
		{"series without samples", series(label("job", "x")), nil, 0, 0},
		{"empty request", nil, nil, 0, 0},

		{"no name", series(label("job", "x"), sample(1, 1), sample(2, 2)), nil, 0, 2},
		{"two names", series(label("__name__", "a"), label("__name__", "b"), sample(1, 1)), nil, 0, 1},
		{"empty name", series(label("__name__", ""), sample(1, 1)), nil, 0, 1},
		{"name with space", series(label("__name__", "a b"), sample(1, 1)), nil, 0, 1},
		{"name with control char", series(label("__name__", "a\x00"), sample(1, 1)), nil, 0, 1},
		{"empty label name", series(label("__name__", "a"), label("", "v"), sample(1, 1)), nil, 0, 1},
		{"label name with space", series(label("__name__", "a"), label("a b", "v"), sample(1, 1)), nil, 0, 1},
		{"label value with control char", series(label("__name__", "a"), label("k", "v\n"), sample(1, 1)), nil, 0, 1},
		{"label value with invalid UTF-8", series(label("__name__", "a"), label("k", "\xff"), sample(1, 1)), nil, 0, 1},
		{"duplicate label", series(label("__name__", "a"), label("k", "1"), label("k", "2"), sample(1, 1)), nil, 0, 1},
		// Graphite 1.1's tag rules (carbon's TaggedSeries), since these
		// series are rendered as "name;k=v".
		{"label name with '!'", series(label("__name__", "a"), label("k!", "v"), sample(1, 1)), nil, 0, 1},
		{"label name with '^'", series(label("__name__", "a"), label("k^", "v"), sample(1, 1)), nil, 0, 1},
		{"label name with '='", series(label("__name__", "a"), label("k=x", "v"), sample(1, 1)), nil, 0, 1},
		{"label name with ';'", series(label("__name__", "a"), label("k;x", "v"), sample(1, 1)), nil, 0, 1},
		{"label value with ';'", series(label("__name__", "a"), label("k", "v;x"), sample(1, 1)), nil, 0, 1},
		{"label value starting with '~'", series(label("__name__", "a"), label("k", "~v"), sample(1, 1)), nil, 0, 1},
		{"label name", series(label("__name__", "a"), label("name", "v"), sample(1, 1)),
			[]ingest.Point{pt("a", 1, 1000, tag("name_", "v"))}, 0, 0},
		{"labels name and name_", series(label("__name__", "a"), label("name", "v"), label("name_", "w"), sample(1, 1)), nil, 0, 1},
		{"name with ';'", series(label("__name__", "a;b"), sample(1, 1)), nil, 0, 1},
		{"tagged name of only '~'", series(label("__name__", "~~"), label("k", "v"), sample(1, 1)), nil, 0, 1},
		{"untagged name of only '~'", series(label("__name__", "~"), sample(1, 1)), []ingest.Point{pt("~", 1, 1000)}, 0, 0},
		{"tag value with '=' and '!'", series(label("__name__", "a"), label("k", "x=!^y"), sample(1, 1)),
			[]ingest.Point{pt("a", 1, 1000, tag("k", "x=!^y"))}, 0, 0},
		{"infinite sample", series(label("__name__", "a"), sample(math.Inf(1), 1), sample(1, 2)), []ingest.Point{pt("a", 1, 2000)}, 0, 1},
		{"timestamp beyond year 9999", series(label("__name__", "a"), sample(1, 253402300800000)), nil, 0, 1},
		{"timestamp before year 1", series(label("__name__", "a"), sample(1, -62135596800001)), nil, 0, 1},
		{"lowest timestamp", series(label("__name__", "a"), sample(1, -62135596800000)), []ingest.Point{pt("a", 1, ingest.MinTime)}, 0, 0},
		{"bad series between good ones", msg(series(label("__name__", "a"), sample(1, 1)), series(label("x", "y"), sample(1, 1)),
			series(label("__name__", "b"), sample(1, 1))), []ingest.Point{pt("a", 1, 1000), pt("b", 1, 1000)}, 0, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := newDecoder(t, ingest.DefaultLimits())
			for pass := range 2 { // the second pass runs from the caches
				got, st, err := d.DecodeProto(nil, c.req)
				if err != nil {
					t.Fatalf("DecodeProto: %v", err)
				}
				if diff := cmp.Diff(c.want, got, cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("pass %d: points (-want +got):\n%s", pass, diff)
				}
				if st.Points != len(c.want) || st.Ignored != c.ignored || st.Rejected != c.rejected {
					t.Errorf("pass %d: stats = %+v, want %d points, %d ignored, %d rejected", pass, st, len(c.want), c.ignored, c.rejected)
				}
				var ee *ingest.EntryError
				if (c.rejected > 0) != errors.As(st.FirstErr, &ee) {
					t.Errorf("pass %d: FirstErr = %v", pass, st.FirstErr)
				}
			}
		})
	}
}

func TestDecodeProtoTooManyLabels(t *testing.T) {
	l := ingest.DefaultLimits()
	l.MaxTags = 2
	d := newDecoder(t, l)
	_, st, err := d.DecodeProto(nil, series(label("__name__", "a"), label("a", "1"), label("b", "2"), label("c", "3"), sample(1, 1)))
	if err != nil || st.Rejected != 1 || !errors.Is(st.FirstErr, ingest.ErrTag) {
		t.Errorf("3 tags over a limit of 2: %+v, %v", st, err)
	}
	_, st, err = d.DecodeProto(nil, series(label("__name__", "a"), label("a", "1"), label("b", "2"), sample(1, 1)))
	if err != nil || st.Points != 1 {
		t.Errorf("2 tags: %+v, %v", st, err)
	}
}

func TestDecodeProtoMalformed(t *testing.T) {
	good := series(label("__name__", "a"), sample(1, 1))
	cases := []struct {
		name string
		req  []byte
		err  error
	}{
		{"truncated tag", []byte{0x80}, ingest.ErrSyntax},
		{"field number 0", []byte{0x02, 0x00}, ingest.ErrSyntax},
		{"length beyond the message", append(good, 0x0a, 0x10, 0x01), ingest.ErrSyntax},
		{"timeseries as varint", append(good, varintField(1, 1)...), ingest.ErrSyntax},
		{"labels as varint", series(varintField(1, 1)), ingest.ErrSyntax},
		{"samples as fixed64", series(protowire.AppendFixed64(protowire.AppendTag(nil, 2, protowire.Fixed64Type), 1)), ingest.ErrSyntax},
		{"histogram as varint", series(varintField(4, 1)), ingest.ErrSyntax},
		{"label name as varint", series(bytesField(1, varintField(1, 1))), ingest.ErrSyntax},
		{"label value as fixed32", series(bytesField(1, protowire.AppendFixed32(protowire.AppendTag(nil, 2, protowire.Fixed32Type), 1))), ingest.ErrSyntax},
		{"sample value as varint", series(label("__name__", "a"), bytesField(2, varintField(1, 1))), ingest.ErrSyntax},
		{"sample timestamp as fixed64", series(label("__name__", "a"), bytesField(2, protowire.AppendFixed64(protowire.AppendTag(nil, 2, protowire.Fixed64Type), 1))), ingest.ErrSyntax},
		{"truncated sample value", series(label("__name__", "a"), bytesField(2, []byte{0x09, 1, 2, 3})), ingest.ErrSyntax},
		{"truncated sample timestamp", series(label("__name__", "a"), bytesField(2, []byte{0x10, 0x80})), ingest.ErrSyntax},
		{"truncated label", series(bytesField(1, []byte{0x0a, 0x05, 'a'})), ingest.ErrSyntax},
		{"unterminated group", append(good, protowire.AppendTag(nil, 9, protowire.StartGroupType)...), ingest.ErrSyntax},
		{"end group alone", append(good, protowire.AppendTag(nil, 9, protowire.EndGroupType)...), ingest.ErrSyntax},
		{"reserved wire type", append(good, 0x0e), ingest.ErrSyntax},
		{"unknown field truncated in series", series(label("__name__", "a"), []byte{0x4a, 0x05}), ingest.ErrSyntax},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := newDecoder(t, ingest.DefaultLimits())
			prev := []ingest.Point{{Name: "kept"}}
			got, st, err := d.DecodeProto(prev, c.req)
			if !errors.Is(err, c.err) {
				t.Fatalf("DecodeProto = %v, want %v", err, c.err)
			}
			if len(got) != 1 || got[0].Name != "kept" || st != (ingest.Stats{}) {
				t.Errorf("DecodeProto changed dst or stats on error: %+v, %+v", got, st)
			}
		})
	}
}

func TestDecodeProtoMaxPoints(t *testing.T) {
	l := ingest.DefaultLimits()
	l.MaxPoints = 2
	d := newDecoder(t, l)
	req := msg(series(label("__name__", "a"), sample(1, 1)), series(label("__name__", "b"), sample(1, 1), sample(2, 2)))
	got, _, err := d.DecodeProto(nil, req)
	if !errors.Is(err, ingest.ErrLimit) || len(got) != 0 {
		t.Errorf("3 samples over a limit of 2: %v, %d points", err, len(got))
	}
}

func TestDecode(t *testing.T) {
	req := msg(series(label("__name__", "up"), label("job", "api"), sample(1, 1000)))
	body := snappy.Encode(nil, req)
	d := newDecoder(t, ingest.DefaultLimits())
	got, st, err := d.Decode(nil, body)
	if err != nil || st.Points != 1 || got[0].Name != "up" || got[0].Tags[0] != (ingest.Tag{Key: "job", Value: "api"}) {
		t.Fatalf("Decode = %+v, %+v, %v", got, st, err)
	}

	small := ingest.DefaultLimits()
	small.MaxBodyBytes = 512
	small.MaxDecodedBytes = 1 << 10
	bigReq := make([]byte, 8<<10) // zeros compress to a few hundred bytes
	cases := []struct {
		name   string
		limits ingest.Limits
		body   []byte
		err    error
	}{
		{"empty body", ingest.DefaultLimits(), nil, ingest.ErrSyntax},
		{"bad header varint", ingest.DefaultLimits(), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, ingest.ErrSyntax},
		{"corrupt block", ingest.DefaultLimits(), append([]byte{0x10}, 0xff, 0xff, 0xff), ingest.ErrSyntax},
		{"truncated block", ingest.DefaultLimits(), body[:len(body)-2], ingest.ErrSyntax},
		{"stream format", ingest.DefaultLimits(), []byte("\xff\x06\x00\x00sNaPpY"), ingest.ErrSyntax},
		{"body too large", small, make([]byte, 513), ingest.ErrLimit},
		{"decoded too large", small, snappy.Encode(nil, bigReq), ingest.ErrLimit},
		{"invalid protobuf inside", ingest.DefaultLimits(), snappy.Encode(nil, []byte{0x80}), ingest.ErrSyntax},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "decoded too large" && len(c.body) > c.limits.MaxBodyBytes {
				t.Fatalf("test body of %d bytes exceeds MaxBodyBytes", len(c.body))
			}
			d := newDecoder(t, c.limits)
			prev := []ingest.Point{{Name: "kept"}}
			got, _, err := d.Decode(prev, c.body)
			if !errors.Is(err, c.err) {
				t.Fatalf("Decode = %v, want %v", err, c.err)
			}
			if len(got) != 1 || got[0].Name != "kept" {
				t.Errorf("Decode changed dst on error: %+v", got)
			}
		})
	}
}

// TestDecodeSnappyBomb checks that a body announcing a large size is
// refused without allocating it: one within MaxDecodedBytes but beyond
// what its few bytes can expand to, and one beyond MaxDecodedBytes.
func TestDecodeSnappyBomb(t *testing.T) {
	d := newDecoder(t, ingest.DefaultLimits())
	for _, c := range []struct {
		size uint64
		err  error
	}{{30 << 20, ingest.ErrSyntax}, {1 << 31, ingest.ErrLimit}} {
		body := binary32(c.size)
		body = append(body, 0x00, 'x') // a 1-byte literal
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, _, err := d.Decode(nil, body)
		runtime.ReadMemStats(&after)
		if !errors.Is(err, c.err) {
			t.Errorf("bomb of %d bytes: %v, want %v", c.size, err, c.err)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<10 {
			t.Errorf("bomb of %d bytes: allocated %d bytes before refusing", c.size, grew)
		}
	}
}

// binary32 is a snappy header announcing n bytes.
func binary32(n uint64) []byte { return protowire.AppendVarint(nil, n) }

func TestDecodeNoRetention(t *testing.T) {
	req := msg(series(label("__name__", "up"), label("job", "api"), sample(1, 1000)))
	d := newDecoder(t, ingest.DefaultLimits())
	got, _, err := d.DecodeProto(nil, req)
	if err != nil {
		t.Fatal(err)
	}
	clear(req)
	if got[0].Name != "up" || got[0].Tags[0] != (ingest.Tag{Key: "job", Value: "api"}) {
		t.Fatalf("point changed with its input: %+v", got[0])
	}
}

func TestDecodeZeroAlloc(t *testing.T) {
	var ss []Series
	for i := range 20 {
		ss = append(ss, Series{
			Labels:  []ingest.Tag{{Key: "__name__", Value: "http_requests_total"}, {Key: "code", Value: "200"}, {Key: "instance", Value: string(rune('a' + i))}},
			Samples: []Sample{{Value: float64(i), Time: 1700000000000}, {Value: 2, Time: 1700000015000}},
		})
	}
	body := snappy.Encode(nil, AppendWriteRequest(nil, ss))
	d := newDecoder(t, ingest.DefaultLimits())
	var dst []ingest.Point
	run := func() {
		var err error
		if dst, _, err = d.Decode(dst[:0], body); err != nil {
			t.Fatal(err)
		}
	}
	run()
	if n := testing.AllocsPerRun(100, run); n != 0 {
		t.Errorf("Decode allocates %v times per request of %d samples, want 0", n, len(dst))
	}
}
