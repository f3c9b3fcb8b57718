package bench

import "testing"

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := Median(c.in); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestSummarize(t *testing.T) {
	runs := []LoadRun{
		{Store: "pgts", Loader: "psql-copy", Workers: 1, Rows: 10, RowsPerSec: 100, ClientCPU: 1, ServerCPU: 10},
		{Store: "pgts", Loader: "pgts-binary", Workers: 2, Rows: 10, RowsPerSec: 300, ClientCPU: 1, ServerCPU: 4},
		{Store: "pgts", Loader: "psql-copy", Workers: 1, Rows: 10, RowsPerSec: 120, ClientCPU: 3, ServerCPU: 10},
		{Store: "pgts", Loader: "pgts-binary", Workers: 2, Error: "lost rows"},
		{Store: "pgts", Loader: "psql-copy", Workers: 1, Rows: 10, RowsPerSec: 90, ClientCPU: 2, ServerCPU: 10},
	}
	s := Summarize(runs)
	if len(s) != 2 || s[0].Key() != "pgts/psql-copy/1" || s[1].Key() != "pgts/pgts-binary/2" {
		t.Fatalf("groups = %+v", s)
	}
	if s[0].Runs != 3 || s[0].RowsPerSec != 100 || s[0].MinRowsPerSec != 90 || s[0].MaxRowsPerSec != 120 || s[0].ClientServer != 0.2 {
		t.Errorf("psql-copy summary = %+v", s[0])
	}
	if s[1].Runs != 1 || s[1].Failed != 1 || s[1].RowsPerSec != 300 || s[1].ClientServer != 0.25 {
		t.Errorf("pgts-binary summary = %+v", s[1])
	}
}
