package copyenc

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
)

// TestTimestampCodecMatchesWriter checks TimestampCodec's promise: the
// codec's field for a text is the writer's field for the micros the
// Zones' parser reads from it, in UTC and in a zone with DST.
func TestTimestampCodecMatchesWriter(t *testing.T) {
	ny, err := NewZones(ZonesConfig{Session: "America/New_York", Abbrevs: utcAbbrevs})
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"2024-01-02 03:04:05.123456", "2024-03-10 02:30:00", "2024-11-03 01:30:00", "2024-07-01T12:00:00Z",
		"2024-07-01 12:00:00+05:30", "1999-01-08 04:05:06-08", "Jan 8 1999 04:05", "J2451187", "epoch", "0001-01-01 00:00:00",
		"1969-12-31 23:59:59.999999", "2024-02-29", "4713-01-01 BC"}
	for _, z := range []*Zones{UTC(), ny} {
		for _, oid := range []uint32{oidTimestamp, oidTimestamptz} {
			c, ok := LookupIn(TypeInfo{OID: oid}, z)
			if !ok {
				t.Fatalf("no codec for %d", oid)
			}
			cz, withTZ, ok := TimestampCodec(c)
			if !ok || cz != z || withTZ != (oid == oidTimestamptz) {
				t.Fatalf("TimestampCodec(%d) = %p, %v, %v", oid, cz, withTZ, ok)
			}
			for _, s := range texts {
				want, err := c.AppendBinary(nil, []byte(s))
				if err != nil {
					t.Fatalf("%q: %v", s, err)
				}
				parse := z.ParseLocalTimestamp
				if withTZ {
					parse = z.ParseTimestamp
				}
				micros, err := parse([]byte(s))
				if err != nil {
					t.Fatalf("%q: %v", s, err)
				}
				w := NewBinaryWriter(0)
				w.Timestamp(micros)
				if !bytes.Equal(w.Bytes(), want) {
					t.Fatalf("%s %d %q: writer %x, codec %x", z.SessionZone(), oid, s, w.Bytes(), want)
				}
			}
		}
	}
	for _, oid := range []uint32{oidDate, oidInt8, oidText} {
		if c, ok := Lookup(TypeInfo{OID: oid}); !ok {
			t.Fatalf("no codec for %d", oid)
		} else if _, _, ok := TimestampCodec(c); ok {
			t.Fatalf("TimestampCodec(%d) is true", oid)
		}
	}
}

// TestFixedTimestampAgrees compares the fixed-offset ISO path with the
// general reader on random timestamps around the edges of every field
// (days past the month's end, hour 24, second 60, DST changes in the
// session's zone, fractions of 1 to 7 digits).
func TestFixedTimestampAgrees(t *testing.T) {
	z := newYork(t, "America/New_York")
	r := rand.New(rand.NewPCG(3, 4))
	accepted := 0
	for range 100_000 {
		s := fmt.Sprintf("%04d-%02d-%02d%c%02d:%02d:%02d", r.IntN(3)*1000+r.IntN(30)+1995-r.IntN(2)*1995, r.IntN(14), r.IntN(33),
			" T"[r.IntN(2)], r.IntN(26), r.IntN(62), r.IntN(62))
		if n := r.IntN(9); n > 0 {
			s += "."
			for range n - 2 {
				s += strconv.Itoa(r.IntN(10))
			}
		}
		switch r.IntN(6) {
		case 1:
			s += "Z"
		case 2:
			s += fmt.Sprintf("%c%02d", "+-"[r.IntN(2)], r.IntN(18))
		case 3:
			s += fmt.Sprintf("%c%02d:%02d", "+-"[r.IntN(2)], r.IntN(18), r.IntN(62))
		case 4:
			s += []string{"+0", "+0530", "-05:3", "+05:", "UTC", "+00 ", "z"}[r.IntN(7)]
		}
		for _, withTZ := range []bool{true, false} {
			fixed, ok := z.fixedTimestamp([]byte(s), withTZ)
			slow, reason := z.slowTimestamp([]byte(s), withTZ)
			if !ok {
				continue
			}
			accepted++
			scanned, sok := z.scanTimestamp([]byte(s), withTZ)
			if reason != "" || slow != fixed || !sok || scanned != fixed {
				t.Fatalf("%q withTZ=%v: fixed %d, scanner %d (%v), general reader %d %q", s, withTZ, fixed, scanned, sok, slow, reason)
			}
		}
	}
	if accepted < 40_000 {
		t.Fatalf("the fixed path accepted only %d of 200,000", accepted)
	}
}
