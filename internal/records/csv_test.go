package records

import (
	"slices"
	"testing"
)

func TestCSV(t *testing.T) {
	def := csvOpts(nil)
	runCases(t, []formatCase{
		// RFC 4180.
		{name: "plain", opts: def, input: "a,b,c\n1,2,3\n",
			want: []string{`1-1 "a" "b" "c"`, `2-2 "1" "2" "3"`}},
		{name: "no final line end", opts: def, input: "a,b\n1,2",
			want: []string{`1-1 "a" "b"`, `2-2 "1" "2"`}},
		{name: "CRLF", opts: def, input: "a,b\r\n1,2\r\n",
			want: []string{`1-1 "a" "b"`, `2-2 "1" "2"`}},
		{name: "CRLF without final line end", opts: def, input: "a,b\r\n1,2",
			want: []string{`1-1 "a" "b"`, `2-2 "1" "2"`}},
		{name: "LF and CRLF mixed", opts: def, input: "a\r\nb\nc\r\n",
			want: []string{`1-1 "a"`, `2-2 "b"`, `3-3 "c"`}},
		{name: "quoted delimiter", opts: def, input: "\"a,b\",c\n",
			want: []string{`1-1 "a,b" "c"`}},
		{name: "doubled quotes", opts: def, input: "\"say \"\"hi\"\"\",\"\"\"\"\n",
			want: []string{`1-1 "say \"hi\"" "\""`}},
		{name: "quoted LF spans lines", opts: def, input: "\"l1\nl2\nl3\",x\ny,z\n",
			want: []string{`1-3 "l1\nl2\nl3" "x"`, `4-4 "y" "z"`}},
		{name: "quoted CRLF spans lines", opts: def, input: "h\r\n\"l1\r\nl2\",x\r\ny,z\r\n",
			want: []string{`1-1 "h"`, `2-3 "l1\r\nl2" "x"`, `4-4 "y" "z"`}},
		{name: "quoted CR is data", opts: def, input: "\"a\rb\"\n",
			want: []string{`1-1 "a\rb"`}},
		{name: "quoted field at the end without line end", opts: def, input: "a,\"b\nc\"",
			want: []string{`1-2 "a" "b\nc"`}},
		{name: "whitespace kept", opts: def, input: " a , \"b\" \n",
			want: []string{`1-1 " a " " b "`}},
		// NULL: an unquoted empty field, not a quoted one.
		{name: "empty last field is NULL", opts: def, input: "a,\n",
			want: []string{`1-1 "a" NULL`}},
		{name: "quoted empty is not NULL", opts: def, input: "\"\",,\"\"\n",
			want: []string{`1-1 "" NULL ""`}},
		{name: "empty line is one NULL field", opts: def, input: "a\n\nb\n",
			want: []string{`1-1 "a"`, `2-2 NULL`, `3-3 "b"`}},
		{name: "empty CRLF line", opts: def, input: "a\r\n\r\nb\r\n",
			want: []string{`1-1 "a"`, `2-2 NULL`, `3-3 "b"`}},
		{name: "only delimiters", opts: def, input: ",,\n",
			want: []string{`1-1 NULL NULL NULL`}},
		{name: "custom null", opts: csvOpts(func(o *Options) { o.Null = "NA" }), input: "NA,\"NA\",,NAN\n",
			want: []string{`1-1 NULL "NA" "" "NAN"`}},
		// PostgreSQL's quotes: they toggle anywhere in a field.
		{name: "quote inside an unquoted field", opts: def, input: "a\"b,c\"d,e\n",
			want: []string{`1-1 "ab,cd" "e"`}},
		{name: "data after a closing quote", opts: def, input: "\"ab\"cd,e\n",
			want: []string{`1-1 "abcd" "e"`}},
		{name: "quote opened mid-field spans lines", opts: def, input: "a\"b\nc\"\nd\n",
			want: []string{`1-2 "ab\nc"`, `3-3 "d"`}},
		{name: "escape before a non-special byte", opts: csvOpts(func(o *Options) { o.Escape = '\\' }), input: "\"a\\b\",\"c\\\"d\",\"e\\\\\"\n",
			want: []string{`1-1 "a\\b" "c\"d" "e\\"`}},
		{name: "escape outside quotes is data", opts: csvOpts(func(o *Options) { o.Escape = '\\' }), input: "a\\\"b\"\n",
			want: []string{`1-1 "a\\b"`}},
		{name: "distinct escape, doubled quote closes and reopens", opts: csvOpts(func(o *Options) { o.Escape = '\\' }), input: "\"a\"\"b\"\n",
			want: []string{`1-1 "ab"`}},
		{name: "custom delimiter and quote", opts: csvOpts(func(o *Options) { o.Delimiter, o.Quote, o.Escape = ';', '\'', '\'' }), input: "'a;b';'it''s';\"x\"\n",
			want: []string{`1-1 "a;b" "it's" "\"x\""`}},
		{name: "tab delimiter", opts: csvOpts(func(o *Options) { o.Delimiter = '\t' }), input: "a\t\"b\tc\"\n",
			want: []string{`1-1 "a" "b\tc"`}},
		// Line ends.
		{name: "CR line ends", opts: def, input: "a,b\r\"c\rd\",e\rf",
			want: []string{`1-1 "a" "b"`, `2-3 "c\rd" "e"`, `4-4 "f"`}},
		{name: "CR line end before the end of input", opts: def, input: "a\r",
			want: []string{`1-1 "a"`}},
		{name: "bare CR in LF input", opts: def, input: "x\na\rb,c\nd\n",
			want: []string{`1-1 "x"`, `ERR line 2, field 1: ` + reasonCSVCarriage, `3-3 "d"`}},
		{name: "bare CR at the end of LF input", opts: def, input: "x\na\r",
			want: []string{`1-1 "x"`, `ERR line 2, field 1: ` + reasonCSVCarriage}},
		{name: "LF in CR input", opts: def, input: "a\rb,c\nd\re\r",
			want: []string{`1-1 "a"`, `ERR line 2, field 2: ` + reasonCSVNewline, `3-3 "e"`}},
		// End of data.
		{name: "end marker", opts: def, input: "a\n\\.\nb\n", marker: true,
			want: []string{`1-1 "a"`}},
		{name: "end marker CRLF", opts: def, input: "a\r\n\\.\r\nb\r\n", marker: true,
			want: []string{`1-1 "a"`}},
		{name: "end marker CR", opts: def, input: "a\r\\.\rb\r", marker: true,
			want: []string{`1-1 "a"`}},
		{name: "end marker first", opts: def, input: "\\.\n", marker: true},
		{name: "end marker at the end of input is data", opts: def, input: "a\n\\.",
			want: []string{`1-1 "a"`, `2-2 "\\."`}},
		{name: "end marker with more is data", opts: def, input: "\\.x\n\\.,\n",
			want: []string{`1-1 "\\.x"`, `2-2 "\\." NULL`}},
		{name: "quoted end marker is data", opts: def, input: "\"\\.\"\n",
			want: []string{`1-1 "\\."`}},
		{name: "end marker inside a quoted field is data", opts: def, input: "\"a\n\\.\n\"\n",
			want: []string{`1-3 "a\n\\.\n"`}},
		{name: "end marker after a quoted line break is data", opts: def, input: "a,\"\n\\.\nb\"\n",
			want: []string{`1-3 "a" "\n\\.\nb"`}},
		// Record errors and recovery.
		{name: "unterminated quote at the end", opts: def, input: "a\n\"b,c\nd\n",
			want: []string{`1-1 "a"`, `ERR lines 2-3, field 1: ` + reasonUnterminated}},
		{name: "unterminated quote without final line end", opts: def, input: "a,\"b",
			want: []string{`ERR line 1, field 2: ` + reasonUnterminated}},
		{name: "unterminated quote after another error", opts: def, input: "a\nb\r\"c\nd\n",
			want: []string{`1-1 "a"`, `ERR lines 2-3, field 1: ` + reasonUnterminated}},
		// Strict.
		{name: "strict: stray quote", opts: csvOpts(func(o *Options) { o.Strict = true }), input: "a\"b\"c,d\nx\n",
			want: []string{`ERR line 1, field 1: ` + reasonStrayQuote, `2-2 "x"`}},
		{name: "strict: data after a closing quote", opts: csvOpts(func(o *Options) { o.Strict = true }), input: "y,\"ab\"c,d\nx\n",
			want: []string{`ERR line 1, field 2: ` + reasonAfterQuote, `2-2 "x"`}},
		{name: "strict: well-formed", opts: csvOpts(func(o *Options) { o.Strict = true }), input: "\"a\"\"b\",\"c\"\r\n\"d\"\n\"\"",
			want: []string{`1-1 "a\"b" "c"`, `2-2 "d"`, `3-3 ""`}},
		{name: "strict: distinct escape", opts: csvOpts(func(o *Options) { o.Strict, o.Escape = true, '\\' }), input: "\"a\\\"\",\"b\"x\n",
			want: []string{`ERR line 1, field 2: ` + reasonAfterQuote}},
	})
}

func TestCSVOffsets(t *testing.T) {
	input := "a\n\"b\nc\"\n\nd"
	res := variants(t, input, csvOpts(nil))
	want := []int64{0, 2, 8, 9}
	wantEnds := []int64{1, 7, 8, 10}
	if !slices.Equal(res.Offsets, want) || !slices.Equal(res.Ends, wantEnds) {
		t.Fatalf("offsets %v ends %v, want %v and %v", res.Offsets, res.Ends, want, wantEnds)
	}
}

// TestRecordText: input[Offset:End] is each record as written, its line
// end (LF, CRLF or CR) left out, on the fast and the general paths.
func TestRecordText(t *testing.T) {
	for _, c := range []struct {
		name  string
		opts  Options
		input string
		want  []string
	}{
		{"csv LF", csvOpts(nil), "a,1.50\n\"x,y\", 2\n", []string{"a,1.50", `"x,y", 2`}},
		{"csv CRLF, quoted line break", csvOpts(nil), "a,\"b\r\nc\"\r\nd,e\r\n", []string{"a,\"b\r\nc\"", "d,e"}},
		{"csv CR", csvOpts(nil), "a,b\rc,d\r", []string{"a,b", "c,d"}},
		{"csv no final line end", csvOpts(nil), "a,b\nc,\"d\"", []string{"a,b", `c,"d"`}},
		{"text escapes", DefaultOptions(Text), "a\\tb\t\\N\n\\N\tc\\\nd\n", []string{`a\tb` + "\t" + `\N`, `\N` + "\t" + "c\\\nd"}},
		{"tsv", DefaultOptions(TSV), "1\t2\n3\t4", []string{"1\t2", "3\t4"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := variants(t, c.input, c.opts)
			var got []string
			for i := range res.Offsets {
				got = append(got, c.input[res.Offsets[i]:res.Ends[i]])
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("records as written %q, want %q", got, c.want)
			}
		})
	}
}
