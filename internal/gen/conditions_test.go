package gen

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestConditionsRows checks rows against values computed by hand from the
// formulas (B = 10,000 rows a batch, 1,000 devices, width 5):
//
//	t = 60·i + ⌊60·j/B⌋; d = ((1+i)%17)·((1+j)%19) + (i·j%23); data_k = ((d+11(k-1))%320)/151
func TestConditionsRows(t *testing.T) {
	const B = 10000
	tests := []struct {
		name string
		i, j int64
		want string
	}{
		// t=0; d = 1·1 + 0 = 1 → 1/151=.0066, 12/151=.0795, 23/151=.152, 34/151=.225, 45/151=.298
		{"first row", 0, 0, "1970-01-01 00:00:00.000000\t1\t0.01\t0.08\t0.15\t0.23\t0.30"},
		// t=0; d = 1·2 + 0 = 2 → 2/151=.0132, 13/151=.0861, 24/151=.159, 35/151=.232, 46/151=.305
		{"second row", 0, 1, "1970-01-01 00:00:00.000000\t2\t0.01\t0.09\t0.16\t0.23\t0.30"},
		// t=⌊60·9999/10000⌋=59; d = 1·(10000%19=6) + 0 = 6 → 6/151=.0397, 17/151=.113, ...
		{"last row of batch 0", 0, 9999, "1970-01-01 00:00:59.000000\t1000\t0.04\t0.11\t0.19\t0.26\t0.33"},
		// t=60; d = 2·1 + 0 = 2
		{"first row of batch 1", 1, 0, "1970-01-01 00:01:00.000000\t1\t0.01\t0.09\t0.16\t0.23\t0.30"},
		// t=60·40319+59=2419199, the last second of the first 28-day month;
		// d = (40320%17=13)·6 + (403149681%23=0) = 78 → 78/151=.517, 89/151=.589, ...
		{"end of a 28-day month", 40319, 9999, "1970-01-28 23:59:59.000000\t1000\t0.52\t0.59\t0.66\t0.74\t0.81"},
		// t=2419200 = 28 days; d = (40321%17=14)·1 + 0 = 14
		{"start of the next month", 40320, 0, "1970-02-01 00:00:00.000000\t1\t0.09\t0.17\t0.24\t0.31\t0.38"},
		// t=29030399, the last second of the 336-day year; i·j = 4837906161 wraps
		// to 542938865, %23 = 7; d = (483840%17=5)·5 + 7 = 32
		{"end of a 336-day year", 483839, 9999, "1970-12-28 23:59:59.000000\t1000\t0.21\t0.28\t0.36\t0.43\t0.50"},
		// t=29030400; d = (483841%17=4)·1 + 0 = 4
		{"start of the next year", 483840, 0, "1971-01-01 00:00:00.000000\t1\t0.03\t0.10\t0.17\t0.25\t0.32"},
		// t=12886679 = 5 months + 9 days + 03:37:59; i·j = 2147555223 wraps to
		// -2147412073, %23 = -7 (C truncates); d = (214778%17=0)·… - 7 = -7
		{"wrapped product, negative value", 214777, 9999, "1970-06-10 03:37:59.000000\t1000\t-0.05\t0.03\t0.10\t0.17\t0.25"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.i*B + tt.j
			g := conditionsRange(t, Options{Batches: tt.i + 1}, r, r+1)
			got := textRows(g)
			if len(got) != 1 || got[0] != tt.want {
				t.Errorf("row (%d, %d) = %q, want %q", tt.i, tt.j, got, tt.want)
			}
		})
	}
}

// TestConditionsMatchesPublishedGenerator compares the text output with
// the SHA-256 of the data lines printed by the study's generator (fill.c
// of the pg-ts-tests repository, built with gcc; its psql commands around
// the COPY data removed). Batch ranges near the calendar's month and year
// ends and where i·j wraps are covered as well as the first batches.
func TestConditionsMatchesPublishedGenerator(t *testing.T) {
	tests := []struct {
		name             string
		o                Options
		firstBatch, last int64 // batches [firstBatch, last)
		sha256           string
	}{
		{"3 batches", Options{}, 0, 3, "b919452c964b341999b5f7487cb58446c3c368f8db725cb48970b73286db53ef"},
		{"rows 777 devices 13 width 7", Options{BatchRows: 777, Devices: 13, Width: 7}, 0, 5,
			"3aaebb5c50c4ee73961c9e11855a9d7f8e797b2c6602f1fa65e9db2598734ab9"},
		{"month end", Options{}, 40318, 40322, "3f5bd488c5ee7e74e17998a8b4f8fd23d6a8dd590d7f681c853fe4833a4fbc73"},
		{"year end", Options{}, 483838, 483842, "b57b86b5e1a18206eedc485f0feaab20dd84aeefe3f49a65b79b8c972d90812b"},
		{"i·j wraps", Options{}, 214768, 214800, "852dfe5992a039210eb509ef001cc095622b2dd5588d58a601b27bf6f6fd5345"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.o
			o.Batches = tt.last
			b := int64(o.BatchRows)
			if b == 0 {
				b = 10000
			}
			g := conditionsRange(t, o, tt.firstBatch*b, tt.last*b)
			h := sha256.New()
			var buf []byte
			for g.Next() {
				buf = g.AppendTextRow(buf[:0])
				h.Write(buf)
			}
			if got := hex.EncodeToString(h.Sum(nil)); got != tt.sha256 {
				t.Errorf("sha256 = %s, want %s", got, tt.sha256)
			}
		})
	}
}

// TestConditionsBinaryMatchesText checks that Encode writes exactly what
// PostgreSQL reads from the text row: the time (read as UTC), the device
// and, for every data value, the double its two-decimal text parses to.
func TestConditionsBinaryMatchesText(t *testing.T) {
	starts := []time.Time{{}, time.Date(2024, 2, 28, 23, 59, 30, 123456000, time.UTC), time.Date(1900, 1, 1, 0, 0, 0, 0, time.UTC)}
	for _, start := range starts {
		for _, r := range [][2]int64{{0, 20000}, {40319*10000 + 5000, 40320*10000 + 5000}, {214777 * 10000, 214778 * 10000}} {
			g := conditionsRange(t, Options{Batches: 483841, Width: 30, Start: start}, r[0], r[1])
			rec := newRecorder(t)
			var line []byte
			for g.Next() {
				line = g.AppendTextRow(line[:0])
				g.Encode(rec)
				f := strings.Split(strings.TrimSuffix(string(line), "\n"), "\t")
				if len(f) != 32 || len(rec.vals) != 32 {
					t.Fatalf("row %d: %d text fields, %d binary; want 32", g.row, len(f), len(rec.vals))
				}
				ts, err := time.Parse("2006-01-02 15:04:05.000000", f[0])
				if err != nil {
					t.Fatalf("row %d: time %q: %v", g.row, f[0], err)
				}
				if ts.UnixMicro() != rec.vals[0].(int64) || g.Time() != rec.vals[0].(int64) {
					t.Fatalf("row %d: text time %s, binary %d, Time %d", g.row, f[0], rec.vals[0], g.Time())
				}
				if f[1] != strconv.Itoa(int(rec.vals[1].(int32))) {
					t.Fatalf("row %d: text device %s, binary %d", g.row, f[1], rec.vals[1])
				}
				for k := 2; k < 32; k++ {
					want, err := strconv.ParseFloat(f[k], 64)
					if err != nil || len(f[k]) < 4 || f[k][len(f[k])-3] != '.' {
						t.Fatalf("row %d: data %q is not a two-decimal number", g.row, f[k])
					}
					if got := rec.vals[k].(float64); math.Float64bits(got) != math.Float64bits(want) {
						t.Fatalf("row %d column %d: binary %v, text %s", g.row, k, got, f[k])
					}
				}
			}
		}
	}
}

func TestConditionsCount(t *testing.T) {
	tests := []struct {
		o    Options
		want int64
	}{
		{Options{}, 100 * 10000},
		{Options{Batches: 7}, 7 * 10000},
		{Options{Batches: 7, Rows: 12345}, 12345},
		{Options{Batches: 1, Rows: 25000}, 25000},
		{Options{Batches: 3, BatchRows: 11}, 33},
	}
	for _, tt := range tests {
		g := mustNew(t, "conditions", tt.o)
		if g.Rows() != tt.want {
			t.Errorf("%+v: Rows() = %d, want %d", tt.o, g.Rows(), tt.want)
		}
		var n int64
		var last int64 = math.MinInt64
		for g.Next() {
			n++
			if g.Time() < last {
				t.Fatalf("%+v: time goes back at row %d", tt.o, n)
			}
			last = g.Time()
		}
		if n != tt.want {
			t.Errorf("%+v: %d rows, want %d", tt.o, n, tt.want)
		}
		if g.Next() {
			t.Errorf("%+v: Next true after the end", tt.o)
		}
	}
	// A partial last batch continues the formulas: row 24,999 is batch 2, row 4,999.
	g := conditionsRange(t, Options{Rows: 25000}, 24999, 25000)
	if got, want := textRows(g)[0], "1970-01-01 00:02:29.000000\t1000"; !strings.HasPrefix(got, want) {
		t.Errorf("row 24999 = %q, want prefix %q", got, want)
	}
}

// TestConditionsStart checks that Start moves every row by the offset
// from 1970-01-01, keeping the gaps of the 28-day calendar.
func TestConditionsStart(t *testing.T) {
	start := time.Date(2024, 3, 10, 12, 0, 0, 0, time.UTC)
	off := start.UnixMicro()
	g := conditionsRange(t, Options{Batches: 40321, Start: start}, 0, 1)
	if !g.Next() || g.Time() != off {
		t.Fatalf("first row at %d, want Start %d", g.Time(), off)
	}
	g = conditionsRange(t, Options{Batches: 40321, Start: start}, 40320*10000, 40320*10000+1)
	want := start.AddDate(0, 0, 31).UnixMicro() // 1970-02-01 is 31 days after 1970-01-01
	if !g.Next() || g.Time() != want {
		t.Fatalf("batch 40320 at %s, want %s", formatMicros(g.Time()), formatMicros(want))
	}
	if got := textRows(conditionsRange(t, Options{Start: start}, 0, 1))[0]; !strings.HasPrefix(got, "2024-03-10 12:00:00.000000\t1\t") {
		t.Errorf("text of the first row = %q", got)
	}
}

func TestConditionsColumns(t *testing.T) {
	g := mustNew(t, "conditions", Options{Width: 3})
	var got []string
	for _, c := range g.Columns() {
		got = append(got, c.Name+" "+c.Type+map[bool]string{true: " not null"}[c.NotNull])
	}
	want := "time timestamptz not null, device integer not null, data1 double precision, data2 double precision, data3 double precision"
	if strings.Join(got, ", ") != want {
		t.Errorf("columns = %s\nwant %s", strings.Join(got, ", "), want)
	}
	if g.TimeColumn() != 0 {
		t.Errorf("TimeColumn = %d", g.TimeColumn())
	}
}

func TestConditionsLimits(t *testing.T) {
	tests := []struct {
		name string
		o    Options
		ok   bool
	}{
		{"max batches", Options{Batches: MaxBatches, BatchRows: 1}, true},
		{"rows up to the C int seconds", Options{Rows: MaxBatches*10000 + 1000}, true},
		{"rows beyond the C int seconds", Options{Rows: (MaxBatches + 1) * 10000}, false},
		{"more than MaxRows", Options{Batches: MaxBatches, BatchRows: 100000}, false},
		{"start so late the rows leave year 9999", Options{Batches: 100, Start: time.Date(9999, 12, 31, 23, 59, 0, 0, time.UTC)}, false},
		{"start late but fitting", Options{Batches: 1, Start: time.Date(9999, 12, 31, 23, 58, 0, 0, time.UTC)}, true},
		{"negative rows", Options{Rows: -1}, false},
		{"width too large", Options{Width: MaxWidth + 1}, false},
		{"width max", Options{Width: MaxWidth, Batches: 1}, true},
	}
	for _, tt := range tests {
		_, err := New("conditions", tt.o)
		if (err == nil) != tt.ok {
			t.Errorf("%s: err = %v, want ok=%v", tt.name, err, tt.ok)
		}
	}
}

// TestConditionsLastRowOfMaxBatches generates the very last row the limits
// allow, which the C program's int arithmetic still computes.
func TestConditionsLastRowOfMaxBatches(t *testing.T) {
	o := Options{Batches: MaxBatches, BatchRows: 100}
	last := int64(MaxBatches)*100 - 1
	g := conditionsRange(t, o, last, last+1)
	if !g.Next() {
		t.Fatal("no row")
	}
	if g.t != 60*(MaxBatches-1)+59 || g.t > maxSeconds {
		t.Errorf("t = %d", g.t)
	}
	var sb strings.Builder
	if err := WriteText(context.Background(), &sb, conditionsRange(t, o, last, last+1)); err != nil || !strings.HasPrefix(sb.String(), "2043-") {
		t.Errorf("last row %q, %v", sb.String(), err)
	}
}

// TestConditionsSecondsMatchC checks the integer seconds formula against
// the C program's double arithmetic, int t = 60·i + 60.0·j/B (truncated),
// near the limits where a double's rounding could differ.
func TestConditionsSecondsMatchC(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 200_000 {
		b := 1 + r.Int64N(MaxBatchRows)
		if r.IntN(2) == 0 {
			b = MaxBatchRows - r.Int64N(1000)
		}
		i := MaxBatches - 1 - r.Int64N(1000)
		j := r.Int64N(b)
		q := float64(60.0 * float64(j) / float64(b)) // the conversions forbid fused operations
		c := int64(float64(float64(60*i) + q))
		if got := 60*i + 60*j/b; got != c {
			t.Fatalf("i=%d j=%d B=%d: integer formula %d, C %d", i, j, b, got, c)
		}
	}
}
