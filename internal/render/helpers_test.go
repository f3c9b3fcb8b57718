package render

import (
	"flag"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// t0 is the first point the test requests see: a multiple of 60.
const t0 = 1699999980

// testNow is the injected clock: "-10min" from it selects exactly the ten
// 60 s points t0 .. t0+540.
var testNow = time.Unix(t0+599, 0).UTC()

// testSource holds metrics with twenty points from t0-600 so that
// timeShift and movingAverage have history to read.
func testSource() *MemSource {
	m := NewMemSource()
	const start = t0 - 600
	series := func(f func(i int) float64) []float64 {
		v := make([]float64, 20)
		for i := range v {
			v[i] = f(i)
		}
		return v
	}
	m.Add("servers.web1.cpu", start, 60, series(func(i int) float64 { return float64(i + 1) })...)
	m.Add("servers.web2.cpu", start, 60, series(func(i int) float64 {
		switch i {
		case 11, 15, 16, 17:
			return math.NaN()
		case 13:
			return -140
		}
		return float64(i+1) * 10
	})...)
	m.Add("servers.db1.cpu", start, 60, series(func(int) float64 { return 5 })...)
	m.Add("servers.web1.requests", start, 60, series(func(i int) float64 {
		switch {
		case i == 13 || i >= 18:
			return math.NaN()
		case i >= 15:
			return float64(i-15) * 25 // counter reset
		}
		return float64(i*i) * 3
	})...)
	m.Add("servers.web2.requests", start, 60, series(func(i int) float64 { return float64(i) * 60 })...)
	m.Add("servers.empty.cpu", start, 60, series(func(int) float64 { return math.NaN() })...)
	slow := make([]float64, 10)
	for i := range slow {
		slow[i] = float64(2 * i)
	}
	m.Add("other.slow.x", start, 120, slow...)
	return m
}

func testHandler(t testing.TB, src Source) *Handler {
	t.Helper()
	opts := DefaultOptions()
	opts.Now = func() time.Time { return testNow }
	h, err := New(src, opts)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// get issues a GET and returns status and body.
//
// A /render request without format or rawData asks for JSON here, the
// format most tests read; the default, PNG, has its own test.
func get(t testing.TB, h http.Handler, path string, q url.Values) (int, string) {
	t.Helper()
	if path == "/render" && !q.Has("format") && !q.Has("rawData") {
		q = maps.Clone(q)
		q.Set("format", "json")
	}
	req := httptest.NewRequest(http.MethodGet, path+"?"+q.Encode(), nil)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec.Code, rec.Body.String()
}

// golden compares got with testdata/name.golden, rewriting it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file:\n got: %s\nwant: %s", name, got, strings.TrimSpace(string(want)))
	}
}
