package records

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

func TestLimits(t *testing.T) {
	long := strings.Repeat("x", 50)
	runCases(t, []formatCase{
		{name: "record too long, then the next", opts: csvOpts(func(o *Options) { o.MaxRecordBytes = 10 }),
			input: "short\n" + long + "\nok\n",
			want:  []string{`1-1 "short"`, `ERR line 2: record longer than 10 bytes`, `3-3 "ok"`}},
		{name: "exactly the limit", opts: csvOpts(func(o *Options) { o.MaxRecordBytes = 10 }),
			input: "0123456789\r\n\"01234567\"\n0123456789",
			want:  []string{`1-1 "0123456789"`, `2-2 "01234567"`, `3-3 "0123456789"`}},
		{name: "one byte over, in quotes", opts: csvOpts(func(o *Options) { o.MaxRecordBytes = 10 }),
			input: "\"012345678\"\nok",
			want:  []string{`ERR line 1: record longer than 10 bytes`, `2-2 "ok"`}},
		{name: "long quoted record over lines, then the next", opts: csvOpts(func(o *Options) { o.MaxRecordBytes = 10 }),
			input: "a,\"" + long + "\n" + long + "\n\",b\nok\n",
			want:  []string{`ERR lines 1-3: record longer than 10 bytes`, `4-4 "ok"`}},
		{name: "too long and unterminated", opts: csvOpts(func(o *Options) { o.MaxRecordBytes = 10 }),
			input: "ok\n\"" + long + "\n" + long,
			want:  []string{`1-1 "ok"`, `ERR lines 2-3, field 1: ` + reasonUnterminated}},
		{name: "too long in text", opts: textOpts(func(o *Options) { o.MaxRecordBytes = 10 }),
			input: "a\\\n" + long + "\\t\\101\nok\n",
			want:  []string{`ERR lines 1-2: record longer than 10 bytes`, `3-3 "ok"`}},
		{name: "too long in TSV", opts: tsvOpts(func(o *Options) { o.MaxRecordBytes = 10 }),
			input: long + "\r\nok\n",
			want:  []string{`ERR line 1: record longer than 10 bytes`, `2-2 "ok"`}},
		{name: "too many fields", opts: csvOpts(func(o *Options) { o.MaxFields = 3 }),
			input: "a,b,c\na,b,c,d,e\nx\n",
			want:  []string{`1-1 "a" "b" "c"`, `ERR line 2, field 4: more than 3 fields`, `3-3 "x"`}},
		{name: "too many fields in text", opts: textOpts(func(o *Options) { o.MaxFields = 1 }),
			input: "a\tb\nx\n",
			want:  []string{`ERR line 1, field 2: more than 1 fields`, `2-2 "x"`}},
	})
}

func TestHeader(t *testing.T) {
	for _, c := range []struct {
		name   string
		opts   Options
		input  string
		header []string
		want   []string
		err    string
	}{
		{name: "csv", opts: csvOpts(func(o *Options) { o.Header = true }), input: "time,\"dev,ice\",\nt,1,2\n",
			header: []string{"time", "dev,ice", ""}, want: []string{`2-2 "t" "1" "2"`}},
		{name: "text", opts: textOpts(func(o *Options) { o.Header = true }), input: "a\\tb\tc\n1\t2\n",
			header: []string{"a\tb", "c"}, want: []string{`2-2 "1" "2"`}},
		{name: "header only", opts: csvOpts(func(o *Options) { o.Header = true }), input: "a,b",
			header: []string{"a", "b"}},
		{name: "empty input", opts: csvOpts(func(o *Options) { o.Header = true }), input: ""},
		{name: "header refused", opts: csvOpts(func(o *Options) { o.Header = true }), input: "a,\"b\n",
			err: "reading the header: line 1, field 2: unterminated quoted field"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := variants(t, c.input, c.opts)
			if res.Err != c.err {
				t.Fatalf("error %q, want %q", res.Err, c.err)
			}
			if d := cmp.Diff(c.header, res.Header); d != "" {
				t.Errorf("header (-want +got):\n%s", d)
			}
			if d := cmp.Diff(c.want, res.Records); d != "" {
				t.Errorf("records (-want +got):\n%s", d)
			}
		})
	}
}

func TestUnread(t *testing.T) {
	r, err := NewReader(strings.NewReader("h1,h2\n1,2\n3,4\n"), csvOpts(func(o *Options) { o.Header = true }))
	if err != nil {
		t.Fatal(err)
	}
	r.Unread() // before any Next: nothing to unread
	rec, err := r.Next()
	if got := render(rec, err); got != `2-2 "1" "2"` {
		t.Fatalf("first Next = %s", got)
	}
	r.Unread()
	r.Unread()
	if d := cmp.Diff([]string{"h1", "h2"}, r.Header()); d != "" {
		t.Fatalf("header (-want +got):\n%s", d)
	}
	var got []string
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		got = append(got, render(rec, err))
	}
	if d := cmp.Diff([]string{`2-2 "1" "2"`, `3-3 "3" "4"`}, got); d != "" {
		t.Fatalf("records (-want +got):\n%s", d)
	}
	r.Unread()
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("Next after Unread of io.EOF = %v", err)
	}
}

var errBroken = errors.New("broken pipe")

func TestSourceErrors(t *testing.T) {
	t.Run("error after data", func(t *testing.T) {
		src := io.MultiReader(strings.NewReader("a,b\nc,"), iotest.ErrReader(errBroken))
		r, err := NewReader(src, csvOpts(nil))
		if err != nil {
			t.Fatal(err)
		}
		rec, err := r.Next()
		if got := render(rec, err); got != `1-1 "a" "b"` {
			t.Fatalf("first record = %s", got)
		}
		// The partial record is not returned: the input is broken.
		for range 2 {
			if _, err := r.Next(); !errors.Is(err, errBroken) || IsRecordError(err) {
				t.Fatalf("Next = %v, want %v", err, errBroken)
			}
		}
	})
	t.Run("no progress", func(t *testing.T) {
		r, _ := NewReader(emptyReader{}, csvOpts(nil))
		if _, err := r.Next(); !errors.Is(err, io.ErrNoProgress) {
			t.Fatalf("Next = %v, want io.ErrNoProgress", err)
		}
	})
	t.Run("invalid count", func(t *testing.T) {
		r, _ := NewReader(liarReader{}, csvOpts(nil))
		if _, err := r.Next(); err == nil || IsRecordError(err) || err == io.EOF {
			t.Fatalf("Next = %v, want a failure", err)
		}
	})
}

type emptyReader struct{}

func (emptyReader) Read([]byte) (int, error) { return 0, nil }

type liarReader struct{}

func (liarReader) Read(p []byte) (int, error) { return len(p) + 1, nil }

func TestRecordError(t *testing.T) {
	err := fmt.Errorf("input x: %w", &RecordError{Line: 3, EndLine: 5, Column: 2, Reason: "bad"})
	if !IsRecordError(err) || IsRecordError(io.EOF) || IsRecordError(nil) {
		t.Fatal("IsRecordError")
	}
	if got := err.Error(); got != "input x: lines 3-5, field 2: bad" {
		t.Fatalf("Error() = %q", got)
	}
	if got := (&RecordError{Line: 7, EndLine: 7, Reason: "bad"}).Error(); got != "line 7: bad" {
		t.Fatalf("Error() = %q", got)
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, f := range []Format{CSV, TSV, Text} {
		if err := DefaultOptions(f).Validate(); err != nil {
			t.Errorf("DefaultOptions(%v).Validate() = %v", f, err)
		}
		if err := (Options{Format: f}).Validate(); err != nil {
			t.Errorf("zero %v options: %v", f, err)
		}
	}
	for _, c := range []struct {
		opts Options
		want string // in the error
	}{
		{Options{Format: 7}, "unknown format"},
		{csvOpts(func(o *Options) { o.Delimiter = '\n' }), "delimiter"},
		{textOpts(func(o *Options) { o.Delimiter = '\r' }), "delimiter"},
		{textOpts(func(o *Options) { o.Delimiter = '\\' }), "text format"},
		{textOpts(func(o *Options) { o.Delimiter = 'n' }), "text format"},
		{textOpts(func(o *Options) { o.Delimiter = '7' }), "text format"},
		{textOpts(func(o *Options) { o.Delimiter = '.' }), "text format"},
		{csvOpts(func(o *Options) { o.Delimiter = '"' }), "differ"},
		{csvOpts(func(o *Options) { o.Quote = '\n' }), "quote"},
		{csvOpts(func(o *Options) { o.Escape = '\r' }), "escape"},
		{csvOpts(func(o *Options) { o.Null = "a,b" }), "delimiter"},
		{csvOpts(func(o *Options) { o.Null = `"` }), "quote"},
		{textOpts(func(o *Options) { o.Null = "\\N\n" }), "newline"},
		{tsvOpts(func(o *Options) { o.Null = "\t" }), "delimiter"},
		{textOpts(func(o *Options) { o.Quote = '"' }), "CSV only"},
		{tsvOpts(func(o *Options) { o.Strict = true }), "CSV only"},
		{csvOpts(func(o *Options) { o.MaxRecordBytes = -1 }), "max record bytes"},
		{csvOpts(func(o *Options) { o.MaxRecordBytes = MaxMaxRecordBytes + 1 }), "max record bytes"},
		{csvOpts(func(o *Options) { o.MaxFields = MaxMaxFields + 1 }), "max fields"},
	} {
		err := c.opts.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: Validate() = %v, want an error about %q", c.opts, err, c.want)
		}
		if _, err2 := NewReader(strings.NewReader(""), c.opts); err2 == nil {
			t.Errorf("%+v: NewReader accepted the options", c.opts)
		}
	}
	// Text allows upper-case letters and punctuation.
	if err := textOpts(func(o *Options) { o.Delimiter = '|' }).Validate(); err != nil {
		t.Error(err)
	}
}

// cycle repeats a pattern forever.
type cycle struct {
	pattern []byte
	off     int
}

func (c *cycle) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		k := copy(p[n:], c.pattern[c.off:])
		n += k
		c.off = (c.off + k) % len(c.pattern)
	}
	return n, nil
}

// TestNoAllocations checks the steady state: reading a record allocates
// nothing, whatever the format and quoting.
func TestNoAllocations(t *testing.T) {
	for _, c := range []struct {
		name    string
		opts    Options
		pattern string
	}{
		{"csv", csvOpts(nil), "2024-03-13 10:00:00+00,17,21.5,,-3\n"},
		{"csv quoted", csvOpts(nil), "\"2024-03-13 10:00:00+00\",\"a \"\"b\"\"\nc\",\"\"\r\n"},
		{"text", textOpts(nil), "2024-03-13 10:00:00+00\t17\t\\N\ta\\tb\\\\c\\101\n"},
		{"tsv", tsvOpts(nil), "2024-03-13 10:00:00+00\t17\t\\N\r\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := NewReader(&cycle{pattern: []byte(c.pattern)}, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			for range 1000 {
				if _, err := r.Next(); err != nil {
					t.Fatal(err)
				}
			}
			allocs := testing.AllocsPerRun(10000, func() {
				if _, err := r.Next(); err != nil {
					t.Fatal(err)
				}
			})
			if allocs != 0 {
				t.Fatalf("%v allocations per record", allocs)
			}
		})
	}
}

// TestFieldsDoNotOverlap checks that appending to a returned field cannot
// overwrite the next one.
func TestFieldsDoNotOverlap(t *testing.T) {
	r, _ := NewReader(strings.NewReader("ab,cd\n"), csvOpts(nil))
	rec, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	_ = append(rec.Fields[0], 'X')
	if string(rec.Fields[1]) != "cd" {
		t.Fatalf("second field = %q after appending to the first", rec.Fields[1])
	}
}
