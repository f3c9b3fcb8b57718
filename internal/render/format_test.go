package render

import (
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

func TestRenderFormats(t *testing.T) {
	h := testHandler(t, testSource())
	cases := []struct {
		name string
		q    url.Values
	}{
		{"csv", url.Values{"target": {`alias(servers.web2.cpu, "a,b")`}, "format": {"csv"}}},
		{"raw", url.Values{"target": {"servers.web2.cpu", "servers.db1.cpu"}, "format": {"raw"}}},
		{"rawData", url.Values{"target": {"servers.web1.cpu"}, "rawData": {"1"}}},
		{"noNullPoints", url.Values{"target": {"servers.web2.cpu", "servers.empty.cpu"}, "noNullPoints": {""}}},
		{"maxDataPoints", url.Values{"target": {"servers.web2.cpu"}, "maxDataPoints": {"4"}}},
		{"maxDataPoints_1", url.Values{"target": {"servers.web1.cpu"}, "maxDataPoints": {"1"}}},
		{"jsonp", url.Values{"target": {"servers.db1.cpu"}, "jsonp": {"cb"}}},
		{"tz_csv", url.Values{"target": {"servers.db1.cpu"}, "format": {"csv"}, "tz": {"Europe/Paris"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.q.Set("from", "-10min")
			code, body := get(t, h, "/render", c.q)
			if code != http.StatusOK {
				t.Fatalf("status %d: %s", code, body)
			}
			golden(t, "formats/"+c.name, body+"\n")
		})
	}
}

func TestPyFormatting(t *testing.T) {
	repr := map[float64]string{
		1: "1.0", -2.5: "-2.5", 0.1: "0.1", 1e16: "1e+16", 1e15: "1000000000000000.0",
		1.5e-5: "1.5e-05", 0.0001: "0.0001", 123456.789: "123456.789", math.Inf(1): "inf",
	}
	for f, want := range repr {
		if got := pyRepr(f); got != want {
			t.Errorf("pyRepr(%v) = %s, want %s", f, got, want)
		}
	}
	g := map[float64]string{2: "2", 2.5: "2.5", 0.1: "0.1", 1234567: "1.23457e+06", 1e-5: "1e-05", -10: "-10"}
	for f, want := range g {
		if got := pyG(f); got != want {
			t.Errorf("pyG(%v) = %s, want %s", f, got, want)
		}
	}
	if got := string(appendPyJSONString(nil, "é<\"\n\U0001F600", true)); got != `"\u00e9<\"\n\ud83d\ude00"` {
		t.Errorf("ascii JSON string = %s", got)
	}
	if got := pyReplacement(`\1 A $x \g<name>`); got != "${1} A $$x ${name}" {
		t.Errorf("pyReplacement = %s", got)
	}
}

func TestOptions(t *testing.T) {
	if err := DefaultOptions().Validate(); err != nil {
		t.Fatal(err)
	}
	bad := DefaultOptions()
	bad.MaxPoints = -1
	if _, err := New(NewMemSource(), bad); err == nil {
		t.Error("New accepted MaxPoints -1")
	}
	if _, err := New(nil, Options{}); err == nil {
		t.Error("New accepted a nil source")
	}
	if _, err := New(NewMemSource(), Options{}); err != nil {
		t.Errorf("zero options: %v", err)
	}
}

func BenchmarkRender(b *testing.B) {
	src := NewMemSource()
	vals := make([]float64, 1440)
	for i := range vals {
		vals[i] = float64(i % 97)
	}
	for _, host := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		src.Add("bench."+host+".cpu", t0-86400, 60, vals...)
	}
	h := testHandler(b, src)
	q := url.Values{"target": {"movingAverage(sumSeries(bench.*.cpu), 5)", "aliasByNode(bench.*.cpu, 1)"}, "from": {"-1d"}, "maxDataPoints": {"500"}}
	b.ReportAllocs()
	for b.Loop() {
		if code, body := get(b, h, "/render", q); code != http.StatusOK {
			b.Fatal(body)
		}
	}
}

// TestAppendPyRepr: the allocation-free spelling of a float is the one
// built from strings before it (kept here as the reference), over
// random bits and the edges of the exponent forms.
func TestAppendPyRepr(t *testing.T) {
	ref := func(f float64) string {
		switch {
		case math.IsNaN(f):
			return "nan"
		case math.IsInf(f, 1):
			return "inf"
		case math.IsInf(f, -1):
			return "-inf"
		}
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if a := math.Abs(f); a != 0 && (a < 1e-4 || a >= 1e16) {
			e := strconv.FormatFloat(f, 'e', -1, 64)
			mant, expStr, _ := strings.Cut(e, "e")
			exp, _ := strconv.Atoi(expStr)
			if exp < -4 || exp >= 16 {
				sign := "+"
				if exp < 0 {
					sign, exp = "-", -exp
				}
				return fmt.Sprintf("%se%s%02d", mant, sign, exp)
			}
		}
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	vals := []float64{0, math.Copysign(0, -1), 1e-4, 9.999999999999999e-05, 1e16, 9999999999999998, 1e-5, 1e100, -1e-100,
		5e-324, math.MaxFloat64, 0.1, 1.0 / 3, 123456789012345680, math.NaN(), math.Inf(-1)}
	r := rand.New(rand.NewPCG(1, 2))
	for range 100_000 {
		vals = append(vals, math.Float64frombits(r.Uint64()))
	}
	for _, f := range vals {
		if got, want := string(appendPyRepr([]byte("x"), f)), "x"+ref(f); got != want {
			t.Fatalf("appendPyRepr(%v) = %s, want %s", f, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = appendPyRepr(make([]byte, 0, 64), 1.5e-300) }); n > 1 {
		t.Errorf("%v allocations a value", n)
	}
}

// BenchmarkRenderJSON: the JSON body of a glob over 100 series of 720
// points each (6 h of ten-second slots under maxDataPoints=1000).
func BenchmarkRenderJSON(b *testing.B) {
	list := make([]*series, 100)
	for i := range list {
		vals := make([]float64, 720)
		for k := range vals {
			vals[k] = float64((i*7+k)%1000) / 8
			if k%6 == 5 {
				vals[k] = nan
			}
		}
		list[i] = newSeries(fmt.Sprintf("bench.glob.s%d", i), 1_700_000_000, 1_700_000_000+720*30, 30, vals)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = renderJSON(nil, list, 0, false)
	}
}
