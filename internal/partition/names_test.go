package partition

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestName(t *testing.T) {
	cases := []struct {
		table string
		iv    Interval
		lo    string
		want  string
	}{
		{"conditions", days(7), "2019-01-07T00:00:00Z", "conditions_p20190107"},
		{"conditions", days(1), "2019-01-07T00:00:00Z", "conditions_p20190107"},
		{"conditions", months(1), "2019-01-01T00:00:00Z", "conditions_p20190101"},
		{"conditions", months(12), "0001-01-01T00:00:00Z", "conditions_p00010101"},
		{"conditions", months(5), "0001-01-01T00:00:00Z", "conditions_p00010101"}, // cut at the range's start
		{"conditions", days(2), "9999-12-31T00:00:00Z", "conditions_p99991231"},
		{"conditions", dur(48 * time.Hour), "1969-12-30T00:00:00Z", "conditions_p19691230"},
		{"metrics", dur(time.Hour), "2019-01-07T13:00:00Z", "metrics_p20190107_13"},
		{"metrics", dur(36 * time.Hour), "1970-01-02T12:00:00Z", "metrics_p19700102_12"},
		{"metrics", dur(time.Hour), "1969-12-31T23:00:00Z", "metrics_p19691231_23"},
		{"metrics", dur(90 * time.Minute), "2019-01-07T13:30:00Z", "metrics_p20190107_1330"},
		{"metrics", dur(time.Minute), "2019-01-07T00:05:00Z", "metrics_p20190107_0005"},
		{"metrics", dur(time.Second), "2019-01-07T13:45:12Z", "metrics_p20190107_134512"},
		{"metrics", Interval{Days: 1, Micros: 1e6}, "1970-01-01T00:00:00Z", "metrics_p19700101_000000"},
		{"données", days(1), "2019-01-07T00:00:00Z", "données_p20190107"},
		{"My Table", days(1), "2019-01-07T00:00:00Z", "My Table_p20190107"},
	}
	for _, c := range cases {
		got, err := Name(c.table, c.iv, utc(t, c.lo))
		if err != nil || got != c.want {
			t.Errorf("Name(%q, %v, %s) = %q, %v, want %q", c.table, c.iv, c.lo, got, err, c.want)
		}
	}
}

func TestNameErrors(t *testing.T) {
	monday := utc(t, "2019-01-07T00:00:00Z")
	cases := []struct {
		table string
		iv    Interval
		lo    int64
		want  string
	}{
		{"", days(1), monday, "table name is empty"},
		{"a\x00b", days(1), monday, "NUL"},
		{"a\xffb", days(1), monday, "not valid UTF-8"},
		{"t", days(7), monday + dayMicros, "is not the start of a partition"},
		{"t", dur(time.Hour), monday + 1, "is not the start of a partition"},
		{"t", days(1), MaxMicros, "outside the supported time range"},
		{"t", days(1), MinMicros - dayMicros, "outside the supported time range"},
		{"t", Interval{}, monday, "is zero"},
		{strings.Repeat("x", 54), days(1), monday, "would be 64 bytes; PostgreSQL allows 63, so with interval \"1 day\" the table name must be at most 53 bytes"},
		{strings.Repeat("é", 27), days(1), monday, "would be 64 bytes"}, // bytes, not runes
	}
	for _, c := range cases {
		got, err := Name(c.table, c.iv, c.lo)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Name(%q, %v, %d) = %q, %v, want an error containing %q", c.table, c.iv, c.lo, got, err, c.want)
		}
	}
}

// TestMaxTableNameBytes: a table name of exactly MaxTableNameBytes bytes
// gives partition and hash names of at most 63 bytes, the longest of them
// exactly 63, and one byte more is refused.
func TestMaxTableNameBytes(t *testing.T) {
	monday := utc(t, "2019-01-07T00:00:00Z")
	wantSuffix := map[Interval]int{
		days(1): 10, days(7): 10, months(1): 10, months(12): 10, dur(24 * time.Hour): 10,
		dur(time.Hour): 13, dur(36 * time.Hour): 13, dur(90 * time.Minute): 15, dur(time.Minute): 15,
		dur(time.Second): 17, dur(61 * time.Second): 17, {}: 17, months(-1): 17,
	}
	for iv, suffix := range wantSuffix {
		for _, hp := range []int{0, 1, 2, 10, 11, 100, 101, 1024} {
			hashSuffix := 0
			if hp > 0 {
				hashSuffix = 2 + len(strconv.Itoa(hp-1))
			}
			n := MaxTableNameBytes(iv, hp)
			if n != maxNameBytes-suffix-hashSuffix {
				t.Errorf("MaxTableNameBytes(%v, %d) = %d, want %d", iv, hp, n, maxNameBytes-suffix-hashSuffix)
			}
			if iv.Validate() != nil {
				continue
			}
			// "é" is two bytes: the limit is in bytes, not runes.
			table := strings.Repeat("é", n/2) + strings.Repeat("x", n%2)
			lo, _, _ := Bounds(iv, monday)
			name, err := Name(table, iv, lo)
			if err != nil {
				t.Fatalf("Name of a %d-byte table: %v", len(table), err)
			}
			longest := name
			if hp > 0 {
				longest = HashName(name, hp-1)
			}
			if len(longest) != maxNameBytes {
				t.Errorf("%v, %d hash partitions: longest name %q is %d bytes, want %d", iv, hp, longest, len(longest), maxNameBytes)
			}
			if hp == 0 {
				if _, err := Name(table+"x", iv, lo); err == nil {
					t.Errorf("%v: Name accepts a %d-byte table name", iv, len(table)+1)
				}
			}
		}
	}
	if n := MaxTableNameBytes(dur(time.Second), 1<<62); n < 0 {
		t.Errorf("MaxTableNameBytes is negative: %d", n)
	}
}

func TestHashName(t *testing.T) {
	if got := HashName("conditions_p20190107", 0); got != "conditions_p20190107_h0" {
		t.Errorf("HashName = %q", got)
	}
	if got := HashName("m_p20190107_13", 15); got != "m_p20190107_13_h15" {
		t.Errorf("HashName = %q", got)
	}
}

// TestNamesSortAsTimes: for random partitions of one table and interval,
// names compare as their starts do.
func TestNamesSortAsTimes(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, iv := range testIntervals {
		for range 500 {
			a, _, _ := Bounds(iv, randomTime(r, iv))
			b, _, _ := Bounds(iv, randomTime(r, iv))
			na, err1 := Name("series", iv, a)
			nb, err2 := Name("series", iv, b)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			if (a < b) != (na < nb) || (a == b) != (na == nb) {
				t.Fatalf("%v: %s → %q and %s → %q do not sort alike", iv, fmtMicros(a), na, fmtMicros(b), nb)
			}
		}
	}
}

func TestNameAllocs(t *testing.T) {
	lo := utc(t, "2019-01-07T13:00:00Z")
	if n := testing.AllocsPerRun(100, func() { _, _ = Name("metrics", dur(time.Hour), lo) }); n > 1 {
		t.Errorf("Name allocates %v times, want 1", n)
	}
}

func BenchmarkName(b *testing.B) {
	lo := time.Date(2019, 1, 7, 13, 0, 0, 0, time.UTC).UnixMicro()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Name("metrics", dur(time.Hour), lo); err != nil {
			b.Fatal(err)
		}
	}
}
