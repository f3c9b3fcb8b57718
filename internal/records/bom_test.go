package records

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// TestUTF8BOMStripped: a UTF-8 byte-order mark before the first record
// is not data (it used to become part of the first header name,
// "\ufefftime", and the load aborted).
func TestUTF8BOMStripped(t *testing.T) {
	for _, f := range []Format{CSV, Text, TSV} {
		o := DefaultOptions(f)
		o.Header = true
		d := string(o.Delimiter)
		r, err := NewReader(strings.NewReader("\ufefftime"+d+"v\n1"+d+"2\n"), o)
		if err != nil {
			t.Fatal(err)
		}
		rec, err := r.Next()
		if err != nil {
			t.Fatalf("%v: %v", f, err)
		}
		if h := r.Header(); len(h) != 2 || h[0] != "time" || string(rec.Fields[0]) != "1" || rec.Line != 2 {
			t.Fatalf("%v: header %q, record %q line %d", f, h, rec.Fields, rec.Line)
		}
	}
	// Without a header, the first field is clean; a BOM later is data.
	r, _ := NewReader(strings.NewReader("\ufeffa,b\n\ufeffc,d\n"), DefaultOptions(CSV))
	rec, _ := r.Next()
	if string(rec.Fields[0]) != "a" {
		t.Fatalf("first field %q", rec.Fields[0])
	}
	rec, _ = r.Next()
	if string(rec.Fields[0]) != "\ufeffc" {
		t.Fatalf("a BOM inside the data was dropped: %q", rec.Fields[0])
	}
	// Input shorter than a BOM reads as before.
	for _, in := range []string{"", "a", "ab", "\xef\xbb"} {
		r, _ := NewReader(strings.NewReader(in), DefaultOptions(CSV))
		rec, err := r.Next()
		if in == "" {
			if err != io.EOF {
				t.Fatalf("%q: %v", in, err)
			}
			continue
		}
		if err != nil || string(rec.Fields[0]) != in {
			t.Fatalf("%q: %q %v", in, rec.Fields, err)
		}
	}
}

// TestUTF16BOMRefused: UTF-16 input is refused with a reason, not read as
// bytes.
func TestUTF16BOMRefused(t *testing.T) {
	for _, in := range []string{"\xff\xfet\x00i\x00", "\xfe\xff\x00t\x00i"} {
		r, _ := NewReader(strings.NewReader(in), DefaultOptions(CSV))
		_, err := r.Next()
		var re *RecordError
		if err == nil || errors.As(err, &re) || !strings.Contains(err.Error(), "UTF-16") {
			t.Fatalf("%q: %v", in, err)
		}
	}
}
