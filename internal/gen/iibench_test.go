package gen

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestIIBenchRows(t *testing.T) {
	start := time.Date(2024, 5, 1, 8, 0, 0, 0, time.UTC)
	const rows = 250_000
	g := mustNew(t, "iibench", Options{Seed: 42, Rows: rows, Start: start})
	if g.Rows() != rows {
		t.Fatalf("Rows() = %d", g.Rows())
	}
	r := newRecorder(t)
	var n int64
	var lens [iibenchDataMax + 1]int
	var cashMax, custMax, prodMax int32
	var priceMax float64
	for g.Next() {
		g.Encode(r)
		v := r.vals
		if len(v) != 7 {
			t.Fatalf("row %d: %d fields", n, len(v))
		}
		if id := v[0].(int64); id != n+1 {
			t.Fatalf("row %d: transactionid %d, want %d", n, id, n+1)
		}
		wantTime := start.Add(time.Duration(n/100_000) * time.Second).UnixMicro()
		if ts := v[1].(int64); ts != wantTime || g.Time() != ts {
			t.Fatalf("row %d: dateandtime %d (Time %d), want %d", n, ts, g.Time(), wantTime)
		}
		cash, cust, prod := v[2].(int32), v[3].(int32), v[4].(int32)
		if cash < 0 || cash >= 1000 || cust < 0 || cust >= 100_000 || prod < 0 || prod >= 10_000 {
			t.Fatalf("row %d: ids %d %d %d out of range", n, cash, cust, prod)
		}
		cashMax, custMax, prodMax = max(cashMax, cash), max(custMax, cust), max(prodMax, prod)
		price := v[5].(float64)
		if price < 0 || price >= 500 {
			t.Fatalf("row %d: price %v", n, price)
		}
		// Whole cents: the double PostgreSQL reads from "%.2f".
		if p, _ := strconv.ParseFloat(strconv.FormatFloat(price, 'f', 2, 64), 64); p != price {
			t.Fatalf("row %d: price %v is not a whole number of cents", n, price)
		}
		priceMax = max(priceMax, price)
		data := v[6].(string)
		if len(data) < iibenchDataMin || len(data) > iibenchDataMax || strings.Trim(data, alnum) != "" {
			t.Fatalf("row %d: data %q", n, data)
		}
		lens[len(data)]++
		n++
	}
	if n != rows {
		t.Fatalf("%d rows, want %d", n, rows)
	}
	// 250,000 uniform draws reach the top of each range.
	if cashMax != 999 || custMax < 99_900 || prodMax != 9999 || priceMax < 499.9 {
		t.Errorf("maxima %d %d %d %v: not spread over the ranges", cashMax, custMax, prodMax, priceMax)
	}
	for l := iibenchDataMin; l <= iibenchDataMax; l++ {
		if share := float64(lens[l]) / rows; math.Abs(share-1.0/11) > 0.01 {
			t.Errorf("data length %d: share %.3f, want about %.3f", l, share, 1.0/11)
		}
	}
}

func TestIIBenchColumns(t *testing.T) {
	g := mustNew(t, "iibench", Options{})
	var names []string
	for _, c := range g.Columns() {
		names = append(names, c.Name+" "+c.Type)
	}
	want := "transactionid bigint,dateandtime timestamptz,cashregisterid integer,customerid integer,productid integer,price double precision,data varchar(4000)"
	if strings.Join(names, ",") != want {
		t.Errorf("columns %s", strings.Join(names, ","))
	}
	if g.TimeColumn() != 1 || g.Rows() != 1_000_000 {
		t.Errorf("TimeColumn %d Rows %d", g.TimeColumn(), g.Rows())
	}
	if !g.Next() || g.Time() != time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).UnixMicro() {
		t.Errorf("default start %s", formatMicros(g.Time()))
	}
}

// TestSeeds checks determinism: the same options give the same bytes,
// another seed other rows (conditions has no seed).
func TestSeeds(t *testing.T) {
	for _, kind := range Kinds() {
		t.Run(kind, func(t *testing.T) {
			o := Options{Seed: 7, Rows: 2000, Batches: 1, BatchRows: 2000}
			a := record(t, mustNew(t, kind, o))
			b := record(t, mustNew(t, kind, o))
			if !bytes.Equal(a, b) {
				t.Fatal("two runs with the same options differ")
			}
			o.Seed = 8
			c := record(t, mustNew(t, kind, o))
			if kind == "conditions" {
				if !bytes.Equal(a, c) {
					t.Error("conditions depends on the seed")
				}
				return
			}
			if bytes.Equal(a, c) {
				t.Fatal("seeds 7 and 8 give the same rows")
			}
			// Not only different, but different in (nearly) every row.
			la, lc := bytes.Split(a, []byte{'\n'}), bytes.Split(c, []byte{'\n'})
			same := 0
			for k := range la {
				if bytes.Equal(la[k], lc[k]) {
					same++
				}
			}
			if same > 1 { // the empty piece after the last newline
				t.Errorf("%d of %d rows identical across seeds", same-1, len(la)-1)
			}
		})
	}
}
