package cli

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/pgts/pgts/internal/ingest"
	"github.com/pgts/pgts/internal/render"
	"github.com/pgts/pgts/internal/tsstore"
)

// TestRenderStreamAggregateStore: over the store, sumSeries and friends
// folded a cut of slots at a time (FetchWindow, under a point limit far
// below what the series hold) answer what the ordinary evaluation answers,
// and FetchWindow's cuts put together are FetchAt's series.
func TestRenderStreamAggregateStore(t *testing.T) {
	ctx := context.Background()
	store := tenSecondStore(t)
	now := time.Now().Truncate(10 * time.Second)
	var pts []ingest.Point
	var names []string
	for i := range 250 { // two segments of the archive layout
		name := fmt.Sprintf("m.s%d", i)
		names = append(names, name)
		for j := range 30 {
			if (i+j)%7 == 0 {
				continue // a gap
			}
			at := now.Add(time.Duration(j-30) * 10 * time.Second).UnixMicro()
			pts = append(pts, ingest.Point{Name: name, Value: float64(i*31+j) / 7, Time: at})
		}
	}
	if err := store.Add(ctx, pts); err != nil {
		t.Fatal(err)
	}
	if err := store.Flush(ctx); err != nil {
		t.Fatal(err)
	}

	from, until := now.Add(-6*time.Minute).Unix(), now.Unix()
	whole, err := store.FetchAt(ctx, names, from, until, until, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []int{1, 7, 100} {
		got := make([]tsstore.Series, len(whole))
		for lo := 0; lo < whole[0].Total || lo == 0; lo += w {
			cut, err := store.FetchWindow(ctx, names, from, until, until, 0, lo, lo+w)
			if err != nil {
				t.Fatal(err)
			}
			if len(cut) != len(whole) {
				t.Fatalf("cut [%d, %d): %d series, want %d", lo, lo+w, len(cut), len(whole))
			}
			for i, c := range cut {
				if lo == 0 {
					got[i] = tsstore.Series{Name: c.Name, Start: c.Start, Step: c.Step, Total: c.Total}
				} else if c.Start != got[i].Start+int64(lo)*c.Step {
					t.Fatalf("cut [%d, %d) of %s starts at %d", lo, lo+w, c.Name, c.Start)
				}
				vals := c.Values
				if vals == nil { // nothing in the cut: all unknown
					vals = make([]float64, min(lo+w, c.Total)-lo)
					for k := range vals {
						vals[k] = math.NaN()
					}
				}
				got[i].Values = append(got[i].Values, vals...)
			}
		}
		if diff := gocmp.Diff(whole, got, cmpopts.EquateNaNs()); diff != "" {
			t.Errorf("cuts of %d slots put together (-FetchAt +cuts):\n%s", w, diff)
		}
	}

	small := render.DefaultOptions()
	small.MaxPoints = 1000 // the 250 series hold 9,000 points
	hs, err := render.New(renderSource{store}, small)
	if err != nil {
		t.Fatal(err)
	}
	ho, err := render.New(renderSource{store}, render.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	ss, so := httptest.NewServer(hs), httptest.NewServer(ho)
	defer ss.Close()
	defer so.Close()
	get := func(base, target string) (int, string) {
		q := url.Values{"target": {target}, "from": {fmt.Sprint(from)}, "until": {fmt.Sprint(until)}, "format": {"json"}}
		resp, err := http.Get(base + "/render?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, fn := range []string{"sumSeries", "averageSeries", "minSeries", "maxSeries", "countSeries"} {
		c1, b1 := get(ss.URL, fn+"(m.*)")
		c2, b2 := get(so.URL, fn+"(group(m.*))")
		if c1 != http.StatusOK || c2 != http.StatusOK || b1 != b2 {
			t.Errorf("%s(m.*): %d %.300s\nordinary: %d %.300s", fn, c1, b1, c2, b2)
		}
	}
	if c, b := get(ss.URL, "m.*"); c != http.StatusBadRequest {
		t.Errorf("m.* under a limit of 1,000 points: %d %.200s, want 400", c, b)
	}
}
