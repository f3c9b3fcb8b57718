package render

import (
	"errors"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct{ in, want string }{
		{"a.b.c", "a.b.c"},
		{"servers.*.cpu", "servers.*.cpu"},
		{"servers.web{1,2}.cpu-[0-7].x?", "servers.web{1,2}.cpu-[0-7].x?"},
		{"sumSeries(a.*)", "sumSeries(a.*)"},
		{" sumSeries( a.* , b.c ) ", "sumSeries(a.*,b.c)"},
		{"scale(a.b, 2)", "scale(a.b,2)"},
		{"scale(a.b, -2.5)", "scale(a.b,-2.5)"},
		{"scale(a.b, 1e3)", "scale(a.b,1000.0)"},
		{`alias(a.b, "x y")`, `alias(a.b,"x y")`},
		{`alias(a.b, 'x "y"')`, `alias(a.b,"x "y"")`},
		{`aliasSub(a.b, "(^.*$)", "\1 A")`, `aliasSub(a.b,"(^.*$)","\1 A")`},
		{`alias(a.b, "say \"hi\"")`, `alias(a.b,"say \"hi\"")`},
		{"summarize(a.b, '1h', 'max', true)", `summarize(a.b,"1h","max",true)`},
		{"keepLastValue(a.b, inf)", "keepLastValue(a.b,inf)"},
		{"transformNull(a.b, default=5)", "transformNull(a.b,default=5)"},
		{"nonNegativeDerivative(a.b, maxValue=None)", "nonNegativeDerivative(a.b,maxValue=None)"},
		{"groupByNode(a.*.c, 1, callback='sum')", `groupByNode(a.*.c,1,callback="sum")`},
		{"asPercent(a.*, sumSeries(a.*))", "asPercent(a.*,sumSeries(a.*))"},
		{"a.b | scale(2) | alias('x')", `alias(scale(a.b,2),"x")`},
		{"sumSeries(a.b|scale(3))", "sumSeries(scale(a.b,3))"},
		{"f()", "f()"},
		{"a.1b.c", "a.1b.c"},
		{"a.b-1", "a.b-1"},
		{"sumSeries(1a.b)", "sumSeries(1a.b)"},
		{`a.b\(x\)`, "a.b(x)"},
		{"averageSeries(servers.{web,db}*.cpu)", "averageSeries(servers.{web,db}*.cpu)"},
		{"a:b;tag=v", "a:b;tag=v"},
	}
	for _, tt := range tests {
		e, err := Parse(tt.in, 0)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if got := e.String(); got != tt.want {
			t.Errorf("Parse(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestParseKinds(t *testing.T) {
	e, err := Parse(`f(1, 2.5, "s", true, None, a.b, g(x), k=FALSE)`, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []ExprKind{ExprNumber, ExprNumber, ExprString, ExprBool, ExprNone, ExprPath, ExprCall}
	for i, a := range e.Args {
		if a.Kind != want[i] {
			t.Errorf("arg %d kind %d, want %d", i, a.Kind, want[i])
		}
	}
	if !e.Args[0].IsInt || e.Args[1].IsInt {
		t.Errorf("IsInt wrong: %v %v", e.Args[0].IsInt, e.Args[1].IsInt)
	}
	if len(e.Kwargs) != 1 || e.Kwargs[0].Name != "k" || e.Kwargs[0].Value.Bool {
		t.Errorf("kwargs = %+v", e.Kwargs)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		in  string
		pos int
		msg string
	}{
		{"sumSeries(a.b", 13, "expected ',' or ')'"},
		{"sumSeries(a.b))", 14, "unexpected ')'"},
		{`alias(a.b, "x)`, 11, "unterminated string"},
		{"a..b", 0, "empty node"},
		{"scale(a.b,,2)", 10, "expected an expression"},
		{"f(a=1, b)", 7, "positional argument after keyword"},
		{"a.{b,c", 6, "unterminated '{'"},
		{"a.b}", 3, "unbalanced '}'"},
		{"2", 0, "must be a metric path or a function call"},
		{`"x"`, 0, "must be a metric path or a function call"},
		{"a.b | c.d", 6, "expected a function call after '|'"},
		{"", 0, "expected an expression"},
		{strings.Repeat("f(", 40) + "a" + strings.Repeat(")", 40), 66, "nested deeper than 32"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.in, 32)
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("Parse(%q) error = %v, want a ParseError", tt.in, err)
			continue
		}
		if pe.Pos != tt.pos || !strings.Contains(pe.Msg, tt.msg) {
			t.Errorf("Parse(%q) = %v, want position %d and %q", tt.in, err, tt.pos, tt.msg)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"a.b.c", "sumSeries(a.*)", `aliasSub(a.b, "(^.*$)", "\1 A")`, "f(x=1, y='z')",
		"a.{b,c}.[0-9]*", "a.b | scale(2)", "summarize(a.b, '1h', 'sum', true)", `a\,b`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := Parse(s, 16)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Pos < 0 || pe.Pos > len(s) {
				t.Fatalf("Parse(%q): bad error %v", s, err)
			}
			return
		}
		if e.Kind != ExprPath && e.Kind != ExprCall {
			t.Fatalf("Parse(%q) gave kind %d", s, e.Kind)
		}
		_ = e.String()
	})
}

func BenchmarkParse(b *testing.B) {
	const target = `aliasSub(sumSeries(scale(servers.web{1,2,3}.cpu-[0-7].user, 0.5), offset(servers.db*.cpu.*, -1)), "(^.*$)", "\1 A")`
	b.SetBytes(int64(len(target)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(target, 32); err != nil {
			b.Fatal(err)
		}
	}
}
