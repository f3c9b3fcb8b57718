package rollup

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseAggs(t *testing.T) {
	got, err := ParseAggs(`avg(data1), MIN(data1), max("Data 2") AS "Hi""x", sum(data2) as s, count(*), count(x), first(data3, time), last("d", "t")`)
	if err != nil {
		t.Fatal(err)
	}
	want := []Agg{
		{Func: Avg, Column: "data1", Name: "avg_data1"},
		{Func: Min, Column: "data1", Name: "min_data1"},
		{Func: Max, Column: "Data 2", Name: `Hi"x`},
		{Func: Sum, Column: "data2", Name: "s"},
		{Func: Count, Name: "count"},
		{Func: Count, Column: "x", Name: "count_x"},
		{Func: First, Column: "data3", By: "time", Name: "first_data3"},
		{Func: Last, Column: "d", By: "t", Name: "last_d"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	// String round-trips.
	var parts []string
	for _, a := range got {
		parts = append(parts, a.String())
	}
	again, err := ParseAggs(strings.Join(parts, ", "))
	if err != nil || !reflect.DeepEqual(again, got) {
		t.Fatalf("round trip: %v %+v", err, again)
	}
}

func TestParseAggsRefuses(t *testing.T) {
	for _, s := range []string{
		``, `avg`, `avg(`, `avg()`, `avg(x`, `avg(x))`, `median(x)`, `avg(x);drop table t`, `sum(*)`,
		`first(x)`, `avg(x, y)`, `avg(x) AS`, `avg(x), avg(x)`, `avg(x) AS a, min(y) AS a`, `avg("x)`,
		`avg(x) -- c`, `avg(x) /* */`, `avg(1)`, `avg(x.y)`, `count(*) AS ""`, `avg("a` + "\x00" + `")`,
		`avg(x),`, `, avg(x)`, `avg(x) AS "a" b`,
	} {
		if a, err := ParseAggs(s); err == nil {
			t.Errorf("ParseAggs(%q) = %+v, want an error", s, a)
		}
	}
}

func FuzzParseAggs(f *testing.F) {
	for _, s := range []string{`avg(a)`, `count(*) AS n`, `first("x""y", t), last(a,b)`, `sum(a) as "b c"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		aggs, err := ParseAggs(s)
		if err != nil {
			return
		}
		// Whatever parses rebuilds to a list that parses to the same
		// aggregates, with every identifier quoted.
		var parts []string
		for _, a := range aggs {
			if _, ok := arity[a.Func]; !ok {
				t.Fatalf("unknown function %q accepted", a.Func)
			}
			parts = append(parts, a.String())
		}
		again, err := ParseAggs(strings.Join(parts, ", "))
		if err != nil || !reflect.DeepEqual(again, aggs) {
			t.Fatalf("%q: rebuilt %q: %v %+v", s, strings.Join(parts, ", "), err, again)
		}
	})
}

func BenchmarkParseAggs(b *testing.B) {
	s := `avg(data1), min(data1), max(data1), sum(data2), count(*), first(data3, time), last(data3, time)`
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseAggs(s); err != nil {
			b.Fatal(err)
		}
	}
}
