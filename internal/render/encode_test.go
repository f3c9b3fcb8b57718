package render

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
	"time"
)

// randomValue draws the values that trip number spelling: NaN, ±Inf,
// integers held as floats, halves and eighths, tiny and huge exponents,
// negative zero, the edges of Python's exponent form and random bits.
func randomValue(r *rand.Rand) float64 {
	switch r.IntN(17) {
	case 0:
		return math.NaN()
	case 1:
		return math.Inf(1 - 2*r.IntN(2))
	case 2:
		return math.Copysign(0, -1)
	case 3:
		return 0
	case 4:
		return float64(r.Int64N(1<<53) - 1<<52)
	case 5:
		return float64(r.IntN(2000)-1000) / float64(int64(1)<<r.IntN(12))
	case 6:
		return float64(r.Int64N(1<<53)) / float64(int64(1)<<r.IntN(64))
	case 7:
		return math.Ldexp(r.Float64(), r.IntN(2100)-1075)
	case 8:
		return []float64{1e-4, 9.999999999999999e-05, 1e16, 9999999999999998, 1e15, 999999999999999.9, 5e-324,
			math.MaxFloat64, 1e22, 1e21, 123456789012345680, 0.1, 1.0 / 3, 2.5, -1e-5, 1 << 62, 1 << 63}[r.IntN(17)]
	case 9:
		return math.Float64frombits(r.Uint64())
	case 10:
		return float64(r.IntN(100000)) / 1000
	case 11: // about 15 digits: either side of appendShortDyadic's limit
		p := r.IntN(12)
		m := math.Floor((1e15+math.Pow(5, float64(p))-1)/math.Pow(5, float64(p))) + float64(r.IntN(5)-2)
		return math.Copysign(math.Ldexp(m, -p), float64(r.IntN(2)*2-1))
	default:
		return r.NormFloat64() * math.Pow(10, float64(r.IntN(40)-20))
	}
}

// randomName draws a series name with quotes, commas, line breaks,
// control characters and non-ASCII runes, sometimes long.
func randomName(r *rand.Rand) string {
	parts := []string{"a", "b.c", `q"uote`, "com,ma", "new\nline", "tab\t", "\\", "é", "日本", "\U0001F600", "\x01", "<&>", "\r", "x\xffy"}
	var b []byte
	for range 1 + r.IntN(8) {
		b = append(b, parts[r.IntN(len(parts))]...)
		if r.IntN(3) == 0 {
			b = append(b, '.')
		}
	}
	if r.IntN(10) == 0 {
		b = append(b, bytes.Repeat([]byte("long.name."), 50)...)
	}
	return string(b)
}

// randomSeriesList draws series as evaluation leaves them for encoding:
// any step, starts near the digit boundaries of timestamps, an end that
// may cut or outrun the values, int marks, consolidation functions and
// xFilesFactor.
func randomSeriesList(r *rand.Rand) []*series {
	// 1_711_846_800 and 1_729_990_800: the summer-time changes of 2024
	// in Europe; 1_712_412_000: Lord Howe's half-hour change of 2024.
	starts := []int64{0, 1_700_000_000, 9_999_999_000, 999_999_990, 99, -500, -86_400 * 400, 1 << 40,
		1_711_846_800 - 86_400, 1_729_990_800 - 86_400, 1_712_412_000 - 86_400}
	fns := []string{"", "average", "avg", "avg_zero", "sum", "max", "min", "first", "last"}
	list := make([]*series, r.IntN(5))
	for i := range list {
		n := r.IntN(300)
		step := []int64{1, 10, 60, 7, 3600}[r.IntN(5)]
		start := starts[r.IntN(len(starts))] + r.Int64N(1000)
		vals := make([]float64, n)
		for k := range vals {
			vals[k] = randomValue(r)
		}
		end := start + int64(n)*step - step + (r.Int64N(5)-2)*step + r.Int64N(step)
		s := newSeries(randomName(r), start, end, step, vals)
		for range r.IntN(3) {
			s.tags = s.tags.with(randomName(r), randomName(r))
		}
		s.consolidation = fns[r.IntN(len(fns))]
		if r.IntN(3) == 0 {
			s.xff = r.Float64()
		}
		switch r.IntN(3) {
		case 0:
			s.markInts(nil)
		case 1:
			bits := make([]bool, n)
			for k := range bits {
				bits[k] = r.IntN(2) == 0
			}
			s.markInts(bits)
		}
		list[i] = s
	}
	return list
}

// TestRenderEncodersMatchReference: the JSON, raw and CSV bodies are
// byte for byte those of the encoders they replaced (format_ref_test.go)
// on random series, with and without maxDataPoints and noNullPoints, in
// a buffer that already holds bytes.
func TestRenderEncodersMatchReference(t *testing.T) {
	locs := []*time.Location{time.UTC, time.FixedZone("", -3*3600-1800)}
	for _, name := range []string{"Europe/Paris", "America/New_York", "Australia/Lord_Howe", "Asia/Kathmandu"} {
		loc, err := time.LoadLocation(name)
		if err != nil {
			t.Fatal(err)
		}
		locs = append(locs, loc)
	}
	r := rand.New(rand.NewPCG(27, 5))
	prefix := []byte("cb(")
	for i := range 3000 {
		list := randomSeriesList(r)
		mdp := []int{0, 0, 1, 2, 3, 7, 50, 1000}[r.IntN(8)]
		noNull := r.IntN(3) == 0
		check := func(format string, got, want []byte) {
			t.Helper()
			if !bytes.HasPrefix(got, prefix) || !bytes.Equal(got[len(prefix):], want) {
				got = got[len(prefix):]
				at := 0
				for at < min(len(got), len(want)) && got[at] == want[at] {
					at++
				}
				lo := max(at-120, 0)
				t.Fatalf("case %d, %s (maxDataPoints %d, noNullPoints %v): differs at byte %d:\n got: %q\nwant: %q\nseries: %.2000s",
					i, format, mdp, noNull, at, got[lo:min(at+120, len(got))], want[lo:min(at+120, len(want))], describe(list))
			}
		}
		check("json", renderJSON(bytes.Clone(prefix), list, mdp, noNull), refRenderJSON(list, mdp, noNull))
		check("raw", renderRaw(bytes.Clone(prefix), list), refRenderRaw(list))
		loc := locs[r.IntN(len(locs))]
		check("csv", renderCSV(bytes.Clone(prefix), list, loc), refRenderCSV(list, loc))
	}
}

func describe(list []*series) string {
	var b bytes.Buffer
	for _, s := range list {
		fmt.Fprintf(&b, "\n  %q start %d end %d step %d fn %q xff %v ints %v values %v", s.name, s.start, s.end, s.step, s.consolidation, s.xff, s.ints != nil, s.values)
	}
	return b.String()
}

// TestAppendPyReprMatchesReference: every spelling of a float, the
// shortcuts for integers and short binary fractions included, is the
// one before them.
func TestAppendPyReprMatchesReference(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 300_000 {
		f := randomValue(r)
		if got, want := appendPyRepr([]byte("x"), f), refAppendPyRepr([]byte("x"), f); !bytes.Equal(got, want) {
			t.Fatalf("appendPyRepr(%v) = %s, want %s", f, got, want)
		}
		if got, want := appendValue(nil, f, true), refAppendValue(nil, f, true); !bytes.Equal(got, want) {
			t.Fatalf("appendValue(%v, int) = %s, want %s", f, got, want)
		}
	}
}

// TestRenderJSONAllocs: encoding a glob's body into a buffer large enough
// allocates nothing per series or per point, consolidated or not.
func TestRenderJSONAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector drops pooled scratch at random")
	}
	list := make([]*series, 100)
	for i := range list {
		vals := make([]float64, 2160)
		for k := range vals {
			vals[k] = nan
			if k%6 == 0 {
				vals[k] = float64((i*7+k)%1000) / 8
			}
		}
		list[i] = newSeries(fmt.Sprintf("bench.glob.s%d", i), 1_700_000_000, 1_700_000_000+2159*10, 10, vals)
	}
	for _, mdp := range []int{0, 1000} {
		buf := renderJSON(nil, list, mdp, false)
		if n := testing.AllocsPerRun(5, func() { buf = renderJSON(buf[:0], list, mdp, false) }); n > 0 {
			t.Errorf("maxDataPoints %d: %v allocations a body of 100 series", mdp, n)
		}
	}
}

// TestRenderContentLength: a render body goes out with its length, in
// one piece rather than chunked, and a pooled body reused by the next
// request does not leak into the one before (bodies of different sizes
// asked in turn from two clients).
func TestRenderContentLength(t *testing.T) {
	srv := httptest.NewServer(testHandler(t, benchGlobSource()))
	defer srv.Close()
	targets := []string{"bench.glob.*", "bench.glob.s1", "alias(bench.glob.s2, '\"é\"')"}
	want := map[string]string{}
	for _, target := range targets {
		for _, format := range []string{"json", "raw", "csv"} {
			q := url.Values{"target": {target}, "from": {"-6h"}, "format": {format}, "maxDataPoints": {"500"}}
			resp, err := http.Get(srv.URL + "/render?" + q.Encode())
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Fatalf("%s %s: %d %v %.200s", target, format, resp.StatusCode, err, body)
			}
			if resp.ContentLength != int64(len(body)) || len(resp.TransferEncoding) != 0 {
				t.Errorf("%s %s: Content-Length %d, Transfer-Encoding %v, body of %d bytes", target, format, resp.ContentLength, resp.TransferEncoding, len(body))
			}
			want[q.Encode()] = string(body)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2*len(want))
	for range 2 {
		wg.Go(func() {
			for range 3 {
				for q, body := range want {
					resp, err := http.Get(srv.URL + "/render?" + q)
					if err != nil {
						errs <- err
						return
					}
					got, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					if err != nil || string(got) != body {
						errs <- fmt.Errorf("%s: a different body (%d bytes, want %d): %v", q, len(got), len(body), err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
