package bench

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/pgts/pgts/internal/pgtest"
)

func tinyInsert(t *testing.T, kind string) InsertScenario {
	s := DefaultInsertScenario()
	s.TableKind, s.RowsLoad, s.RowsMore = kind, 3000, 1000
	s.QueryRates, s.QueryTime = []int{200}, 1500*time.Millisecond
	s.ConnString = pgtest.DB(t)
	return s
}

func TestRunInsert(t *testing.T) {
	for _, kind := range TableKinds {
		t.Run(kind, func(t *testing.T) {
			s := tinyInsert(t, kind)
			var seen []string
			res, err := RunInsert(context.Background(), s, func(st InsertStep) { seen = append(seen, st.Name) })
			if err != nil {
				t.Fatalf("RunInsert: %v", err)
			}
			want := []string{"l.i0", "l.x", "l.i1", "l.i2", "qr200", "qp200"}
			if !slices.Equal(seen, want) {
				t.Fatalf("steps %v, want %v", seen, want)
			}
			if !res.Complete || !res.Verified {
				t.Fatalf("complete %v verified %v: %s", res.Complete, res.Verified, res.Error)
			}
			var inserted int64
			for _, st := range res.Steps {
				inserted += st.Inserts
				if !st.Complete || st.Seconds <= 0 || st.DBGB <= 0 {
					t.Errorf("%s: %+v", st.Name, st)
				}
			}
			if res.Rows != inserted {
				t.Errorf("rows %d, inserted %d", res.Rows, inserted)
			}
			for i, n := range map[int]int64{0: 3000, 2: 1000, 3: 200} {
				if res.Steps[i].Inserts != n {
					t.Errorf("%s inserted %d, want %d", res.Steps[i].Name, res.Steps[i].Inserts, n)
				}
			}
			l0 := res.Steps[0]
			if l0.IPS <= 0 || l0.InsertLatency == nil || l0.InsertLatency.Count != 30 || l0.MaxOpMS <= 0 || l0.CPUPerOp <= 0 || l0.WKBPerIns <= 0 {
				t.Errorf("l.i0 metrics: %+v", l0)
			}
			for _, st := range res.Steps[4:] {
				if st.Queries == 0 || st.QPS <= 0 || st.QueryLatency == nil || st.TargetIPS != 200 {
					t.Errorf("%s: %+v", st.Name, st)
				}
				// 200/s for 1.5 s: the writer may not exceed its rate
				// (burst of one commit aside).
				if float64(st.Inserts) > 200*st.Seconds+insertRows+1 {
					t.Errorf("%s: %d inserts in %.2f s exceed 200/s", st.Name, st.Inserts, st.Seconds)
				}
				if st.WriterSlow != (st.IPS < 190) {
					t.Errorf("%s: writer_short %v at %.1f ips", st.Name, st.WriterSlow, st.IPS)
				}
			}
			b, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			var back InsertResult
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if len(back.Steps) != len(res.Steps) || back.Machine.Cores == 0 || back.Machine.PostgreSQL == "" || back.Machine.Settings["wal_level"] == "" {
				t.Errorf("parsed back: %+v", back.Machine)
			}
		})
	}
}

func TestRunInsertCancelled(t *testing.T) {
	s := tinyInsert(t, "plain")
	s.QueryTime = time.Minute
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res, err := RunInsert(ctx, s, func(st InsertStep) {
		if st.Name == "l.i2" {
			cancel() // the q step starts with ctx cancelled
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if res.Complete || len(res.Steps) != 5 || res.Steps[4].Complete || !res.Steps[3].Complete {
		t.Fatalf("result: complete %v, %d steps", res.Complete, len(res.Steps))
	}
}

func TestInsertScenarioValidate(t *testing.T) {
	for _, f := range []func(*InsertScenario){
		func(s *InsertScenario) { s.TableKind = "heap" },
		func(s *InsertScenario) { s.RowsLoad = 0 },
		func(s *InsertScenario) { s.RowsMore = -1 },
		func(s *InsertScenario) { s.QueryRates = []int{0} },
		func(s *InsertScenario) { s.Interval = 1500 * time.Millisecond },
	} {
		s := DefaultInsertScenario()
		f(&s)
		if err := s.Validate(); err == nil {
			t.Errorf("%+v: no error", s)
		}
	}
	s := DefaultInsertScenario()
	if err := s.Validate(); err != nil {
		t.Error(err)
	}
}

func TestPercentile(t *testing.T) {
	v := []float64{5, 1, 4, 2, 3}
	for p, want := range map[float64]float64{0: 1, 50: 3, 99: 5, 100: 5, 20: 1, 21: 2} {
		if got := Percentile(v, p); got != want {
			t.Errorf("Percentile(%v) = %v, want %v", p, got, want)
		}
	}
}

func TestPerSecond(t *testing.T) {
	t0 := time.Unix(100, 0)
	p := newPerSecond(t0)
	p.add(t0.Add(100*time.Millisecond), 3)
	p.add(t0.Add(1500*time.Millisecond), 4)
	p.add(t0.Add(2100*time.Millisecond), 9) // the partial last second
	if got := p.seconds(2200 * time.Millisecond); !slices.Equal(got, []float64{3, 4}) {
		t.Errorf("seconds = %v", got)
	}
	q := newPerSecond(t0)
	q.add(t0.Add(100*time.Millisecond), 5)
	if got := q.seconds(500 * time.Millisecond); !slices.Equal(got, []float64{10}) {
		t.Errorf("short step = %v", got)
	}
}
