package ingest

import (
	"errors"
	"strings"
	"testing"
)

func TestValidName(t *testing.T) {
	l := DefaultLimits()
	l.MaxNameBytes = 16
	u := l
	u.AllowUTF8 = true
	cases := []struct {
		name string
		l    Limits
		ok   bool
		msg  string
	}{
		{"a.b.c", l, true, ""},
		{"!#$%&'()*+,-./~", l, true, ""},
		{"", l, false, "invalid name: empty"},
		{strings.Repeat("a", 16), l, true, ""},
		{strings.Repeat("a", 17), l, false, "17 bytes, over the limit of 16"},
		{"a b", l, false, `byte ' ' (0x20) at offset 1`},
		{"a\tb", l, false, `byte '\t' (0x09) at offset 1`},
		{"a\x00", l, false, `byte '\x00' (0x00) at offset 1`},
		{"a\x7f", l, false, `byte '\x7f' (0x7f) at offset 1`},
		{"é", l, false, `character 'é' (U+00E9) at offset 0`},
		{"é", u, true, ""},
		{"日本.語", u, true, ""},
		{"a\u00a0b", u, false, "U+00A0"},      // no-break space
		{"a\u2028b", u, false, "U+2028"},      // line separator
		{"a\u0085b", u, false, "U+0085"},      // C1 control
		{"a\xffb", u, false, "invalid UTF-8"}, // invalid UTF-8
		{"a\xc3", u, false, "invalid UTF-8"},  // truncated sequence
	}
	for _, c := range cases {
		err := ValidName(c.name, c.l)
		if (err == nil) != c.ok {
			t.Errorf("ValidName(%q) = %v, want ok %v", c.name, err, c.ok)
			continue
		}
		if err != nil && (!errors.Is(err, ErrName) || !strings.Contains(err.Error(), c.msg)) {
			t.Errorf("ValidName(%q) = %q, want ErrName mentioning %q", c.name, err, c.msg)
		}
		if got := ValidNameBytes([]byte(c.name), c.l); (got == nil) != c.ok {
			t.Errorf("ValidNameBytes(%q) = %v", c.name, got)
		}
	}
}

func TestValidTag(t *testing.T) {
	l := DefaultLimits()
	l.MaxTagBytes = 8
	cases := []struct {
		k, v string
		ok   bool
	}{
		{"host", "web1", true},
		{"k", "with space", false}, // too long
		{"k", "a b", true},
		{"k", "日本", true},
		{"", "v", false},
		{"k", "", false},
		{"a b", "v", false},
		{"123456789", "v", false},
		{"k", "123456789", false},
		{"k", "a\nb", false},
		{"k", "a\x7f", false},
		{"k", "\xff", false},
		{"k", "\u0085", false},
		{"é", "v", false},
	}
	for _, c := range cases {
		err := ValidTag(c.k, c.v, l)
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrTag)) {
			t.Errorf("ValidTag(%q, %q) = %v, want ok %v", c.k, c.v, err, c.ok)
		}
		if got := ValidTagBytes([]byte(c.k), []byte(c.v), l); (got == nil) != c.ok {
			t.Errorf("ValidTagBytes(%q, %q) = %v", c.k, c.v, got)
		}
	}
}

func TestSortTags(t *testing.T) {
	for _, n := range []int{0, 1, 2, 5, 12, 13, 40} {
		tags := make([]Tag, n)
		for i := range tags {
			tags[i] = Tag{Key: string(rune('A' + (i*7)%n)), Value: "v"}
		}
		if err := SortTags(tags); err != nil {
			t.Fatalf("%d tags: %v", n, err)
		}
		for i := 1; i < n; i++ {
			if tags[i-1].Key >= tags[i].Key {
				t.Fatalf("%d tags not sorted: %v", n, tags)
			}
		}
	}
	for _, n := range []int{2, 12, 20} {
		tags := make([]Tag, n)
		for i := range tags {
			tags[i] = Tag{Key: string(rune('a' + i%(n-1)))}
		}
		if err := SortTags(tags); !errors.Is(err, ErrTag) || !strings.Contains(err.Error(), "duplicate key") {
			t.Errorf("%d tags with a duplicate: %v", n, err)
		}
	}
	tags := []Tag{{"b", "1"}, {"a", "2"}}
	if n := testing.AllocsPerRun(100, func() { tags[0], tags[1] = tags[1], tags[0]; _ = SortTags(tags) }); n != 0 {
		t.Errorf("SortTags allocates %v times", n)
	}
}

func TestValidPoint(t *testing.T) {
	l := DefaultLimits()
	l.MaxTags = 2
	good := Point{Name: "a", Tags: []Tag{{"a", "1"}, {"b", "2"}}, Value: 1, Time: 0}
	if err := ValidPoint(good, l); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		p    Point
		kind error
	}{
		"bad name":      {Point{Name: "a b"}, ErrName},
		"too many tags": {Point{Name: "a", Tags: []Tag{{"a", "1"}, {"b", "2"}, {"c", "3"}}}, ErrTag},
		"unsorted":      {Point{Name: "a", Tags: []Tag{{"b", "1"}, {"a", "2"}}}, ErrTag},
		"duplicate":     {Point{Name: "a", Tags: []Tag{{"a", "1"}, {"a", "2"}}}, ErrTag},
		"bad tag":       {Point{Name: "a", Tags: []Tag{{"a", ""}}}, ErrTag},
		"NaN":           {Point{Name: "a", Value: nan()}, ErrValue},
		"time":          {Point{Name: "a", Time: MaxTime}, ErrTimestamp},
	} {
		if err := ValidPoint(c.p, l); !errors.Is(err, c.kind) {
			t.Errorf("%s: ValidPoint = %v, want %v", name, err, c.kind)
		}
	}
}
