package copyenc

import "math"

// ParseTimestamp reads a timestamp with time zone as PostgreSQL reads it
// in a session whose TimeZone is UTC (see Zones.ParseTimestamp) and
// returns Unix micros.
func ParseTimestamp(text []byte) (micros int64, err error) {
	return UTC().ParseTimestamp(text)
}

// ParseLocalTimestamp is ParseTimestamp for timestamp without time zone.
func ParseLocalTimestamp(text []byte) (micros int64, err error) {
	return UTC().ParseLocalTimestamp(text)
}

// ParseDate reads a date as PostgreSQL does (see Zones.ParseDate).
func ParseDate(text []byte) (days int32, err error) {
	return UTC().ParseDate(text)
}

// ParseTimestamp reads a timestamp with time zone as timestamptz_in does
// in this session, and returns Unix micros (InfinityMicros and
// NegInfinityMicros for the infinities). Every spelling PostgreSQL's
// datetime input accepts is read the same way: ISO 8601 with a space or
// 'T', "Jan 8 1999", "1/8/1999" (in DateStyle's order), "19990108
// 040506", Julian days ("J2451187"), AM/PM, BC, "epoch", "infinity",
// "allballs", numeric offsets, the session's abbreviations ("EST") and
// full zone names ("America/New_York"); a value without a zone is in the
// session's zone, a wall-clock time in a DST gap or overlap resolved as
// PostgreSQL resolves it. Refused beyond what PostgreSQL refuses: "now",
// "today", "tomorrow", "yesterday" (they name the time of the load) and
// abbreviations whose offset depends on the date.
//
// Values PostgreSQL accepts past 294246-12-31 do not fit in int64 Unix
// micros and are rejected here (the codecs, which count from 2000, accept
// PostgreSQL's whole range).
func (z *Zones) ParseTimestamp(text []byte) (micros int64, err error) {
	return z.unixTimestamp(text, true)
}

// ParseLocalTimestamp is ParseTimestamp for timestamp without time zone:
// a zone in the text is checked but ignored, as PostgreSQL ignores it.
func (z *Zones) ParseLocalTimestamp(text []byte) (micros int64, err error) {
	return z.unixTimestamp(text, false)
}

func (z *Zones) unixTimestamp(text []byte, withTZ bool) (int64, error) {
	typ := "timestamp without time zone"
	if withTZ {
		typ = "timestamp with time zone"
	}
	t, reason := z.parsePGTimestamp(text, withTZ)
	if reason != "" {
		return 0, valueError(typ, text, reason)
	}
	switch {
	case t == math.MaxInt64:
		return InfinityMicros, nil
	case t == math.MinInt64:
		return NegInfinityMicros, nil
	case t >= math.MaxInt64-epochMicros:
		return 0, valueError(typ, text, "out of range for Unix microseconds")
	}
	return t + epochMicros, nil
}

// ParseDate reads a date as date_in does in this session (any spelling
// ParseTimestamp reads; a time of day is dropped, as PostgreSQL drops
// it) and returns days since 1970-01-01 (InfinityDays and NegInfinityDays
// for the infinities).
func (z *Zones) ParseDate(text []byte) (days int32, err error) {
	d, reason := z.parsePGDate(text)
	if reason != "" {
		return 0, valueError("date", text, reason)
	}
	switch d {
	case math.MaxInt32:
		return InfinityDays, nil
	case math.MinInt32:
		return NegInfinityDays, nil
	}
	return d + epochDays, nil
}

// parsePGTimestamp is timestamp_in / timestamptz_in: PostgreSQL micros
// (from 2000-01-01), MaxInt64 and MinInt64 for the infinities.
func (z *Zones) parsePGTimestamp(text []byte, withTZ bool) (int64, string) {
	if t, ok := z.fastTimestamp(text, withTZ); ok {
		return t, ""
	}
	return z.slowTimestamp(text, withTZ)
}

// slowTimestamp is parsePGTimestamp without the fast path.
func (z *Zones) slowTimestamp(text []byte, withTZ bool) (int64, string) {
	var f dtFields
	if !f.tokenize(text) {
		return 0, reasonSyntax
	}
	d, reason := z.decode(&f)
	if reason != "" {
		return 0, reason
	}
	switch d.dtype {
	case dtkEpoch:
		return -epochMicros, ""
	case dtkLate:
		return math.MaxInt64, ""
	case dtkEarly:
		return math.MinInt64, ""
	}
	tz := 0
	if withTZ {
		tz = d.tz
	}
	return tm2timestamp(&d.tm, tz)
}

// tm2timestamp is PostgreSQL's tm2timestamp; tz is seconds west of UTC.
func tm2timestamp(tm *pgTm, tz int) (int64, string) {
	if !isValidJulian(tm.year, tm.mon) {
		return 0, reasonOutOfRange
	}
	date := int64(date2j(int32(tm.year), int32(tm.mon), int32(tm.mday))) - postgresEpochJDate
	tod := (int64(tm.hour*60+tm.min)*60+int64(tm.sec))*1000000 + tm.fsec
	t := date*microsPerDay + tod
	if (t-tod)/microsPerDay != date || t < 0 && date > 0 || t > 0 && date < -1 {
		return 0, reasonOutOfRange
	}
	t += int64(tz) * 1000000
	if t < minPGMicros || t >= endPGMicros {
		return 0, reasonOutOfRange
	}
	return t, ""
}

// parsePGDate is date_in: PostgreSQL days (from 2000-01-01), MaxInt32 and
// MinInt32 for the infinities.
func (z *Zones) parsePGDate(text []byte) (int32, string) {
	var f dtFields
	if !f.tokenize(text) {
		return 0, reasonSyntax
	}
	d, reason := z.decode(&f)
	if reason != "" {
		return 0, reason
	}
	switch d.dtype {
	case dtkEpoch:
		return -epochDays, ""
	case dtkLate:
		return math.MaxInt32, ""
	case dtkEarly:
		return math.MinInt32, ""
	}
	if !isValidJulian(d.tm.year, d.tm.mon) {
		return 0, reasonOutOfRange
	}
	days := int64(date2j(int32(d.tm.year), int32(d.tm.mon), int32(d.tm.mday))) - postgresEpochJDate
	if days < minPGDays || days >= endPGDays {
		return 0, reasonOutOfRange
	}
	return int32(days), ""
}

// dateScanner reads fixed-shape fields.
type dateScanner struct {
	s []byte
	i int
}

// digits reads at least min and at most max decimal digits as an int.
func (p *dateScanner) digits(min, max int) (int, bool) {
	v, n := 0, 0
	for n < max && p.i < len(p.s) && isDigit(p.s[p.i]) {
		v = v*10 + int(p.s[p.i]-'0')
		p.i++
		n++
	}
	return v, n >= min
}

func (p *dateScanner) byte(c byte) bool {
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

// fastTimestamp reads the common machine spelling
//
//	YYYY-MM-DD[( |T)HH:MM[:SS[.ffffff]]][Z|±HH[[:]MM]]
//
// (no white space around, four-digit year from 0001, two-digit fields,
// hours below 24, seconds below 60, up to six fraction digits) directly,
// giving what the general reader gives; ok is false for anything else,
// which the general reader then decides. It only ever accepts.
func (z *Zones) fastTimestamp(s []byte, withTZ bool) (int64, bool) {
	if t, ok := z.fixedTimestamp(s, withTZ); ok {
		return t, true
	}
	return z.scanTimestamp(s, withTZ)
}

// scanTimestamp is fastTimestamp without fixedTimestamp.
func (z *Zones) scanTimestamp(s []byte, withTZ bool) (int64, bool) {
	p := dateScanner{s: s}
	y, ok1 := p.digits(4, 4)
	ok2 := p.byte('-')
	m, ok3 := p.digits(2, 2)
	ok4 := p.byte('-')
	d, ok5 := p.digits(2, 2)
	if !(ok1 && ok2 && ok3 && ok4 && ok5) || y == 0 || m < 1 || m > 12 || d < 1 || d > daysIn(int64(y), m) {
		return 0, false
	}
	tm := pgTm{year: y, mon: m, mday: d}
	timed := false
	if p.i < len(s) && (s[p.i] == ' ' || s[p.i] == 'T') {
		p.i++
		timed = true
		h, ok1 := p.digits(2, 2)
		ok2 := p.byte(':')
		mi, ok3 := p.digits(2, 2)
		if !(ok1 && ok2 && ok3) || h > 23 || mi > 59 {
			return 0, false
		}
		tm.hour, tm.min = h, mi
		if p.byte(':') {
			sec, ok := p.digits(2, 2)
			if !ok || sec > 59 {
				return 0, false
			}
			tm.sec = sec
			if p.byte('.') {
				start := p.i
				us, ok := p.digits(1, 6)
				if !ok || p.i < len(s) && isDigit(s[p.i]) {
					return 0, false
				}
				for range 6 - (p.i - start) {
					us *= 10
				}
				tm.fsec = int64(us)
			}
		}
	}
	tz, haveZone := 0, false
	if p.i < len(s) {
		if !timed {
			return 0, false // "2024-01-02-05" is one date field to PostgreSQL
		}
		var ok bool
		if tz, ok = z.zoneSuffix(s[p.i:]); !ok {
			return 0, false
		}
		haveZone = true
	}
	if !withTZ {
		tz = 0
	} else if !haveZone {
		tz = -z.session.offsetFor(&tm)
	}
	t, reason := tm2timestamp(&tm, tz)
	return t, reason == ""
}

// fixedTimestamp reads the commonest spellings of all at fixed offsets,
//
//	YYYY-MM-DD( |T)HH:MM:SS[.f{1,6}][Z|±HH[[:]MM]]
//
// (without a zone, in the session's zone; "+00" is how the server writes
// timestamptz in UTC), giving what fastTimestamp's scanner gives; ok is
// false for anything else, which the scanner then reads. It only ever
// accepts.
func (z *Zones) fixedTimestamp(s []byte, withTZ bool) (int64, bool) {
	if len(s) < 19 || s[4] != '-' || s[7] != '-' || s[10] != ' ' && s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return 0, false
	}
	y1, ok1 := two(s[0:2])
	y2, ok2 := two(s[2:4])
	m, ok3 := two(s[5:7])
	d, ok4 := two(s[8:10])
	h, ok5 := two(s[11:13])
	mi, ok6 := two(s[14:16])
	sec, ok7 := two(s[17:19])
	y := y1*100 + y2
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7) || y == 0 || m < 1 || m > 12 || d < 1 || d > daysIn(int64(y), m) ||
		h > 23 || mi > 59 || sec > 59 {
		return 0, false
	}
	tm := pgTm{year: y, mon: m, mday: d, hour: h, min: mi, sec: sec}
	i := 19
	if i < len(s) && s[i] == '.' {
		i++
		start := i
		var us int64
		for i < len(s) && i-start <= 6 {
			v := s[i] - '0'
			if v > 9 {
				break
			}
			us = us*10 + int64(v)
			i++
		}
		n := i - start
		if n == 0 || n > 6 {
			return 0, false
		}
		for range 6 - n {
			us *= 10
		}
		tm.fsec = us
	}
	tz, zoned := 0, i < len(s)
	if zoned {
		var ok bool
		if tz, ok = z.zoneSuffix(s[i:]); !ok {
			return 0, false
		}
	}
	switch {
	case !withTZ:
		tz = 0
	case !zoned:
		tz = -z.session.offsetFor(&tm)
	}
	t, reason := tm2timestamp(&tm, tz)
	return t, reason == ""
}

// zoneSuffix reads the zone that ends a timestamp's text: Z (when the
// abbreviation means UTC), ±HH, ±HH:MM or ±HHMM (hours to 15). tz is in
// seconds, as tm2timestamp takes it (east of Greenwich negative).
func (z *Zones) zoneSuffix(b []byte) (tz int, ok bool) {
	if len(b) == 1 && b[0] == 'Z' {
		return 0, z.zIsUTC
	}
	if len(b) < 3 || b[0] != '+' && b[0] != '-' {
		return 0, false
	}
	h, hok := two(b[1:3])
	mi, mok := 0, true
	switch {
	case len(b) == 3:
	case len(b) == 6 && b[3] == ':':
		mi, mok = two(b[4:6])
	case len(b) == 5:
		mi, mok = two(b[3:5])
	default:
		return 0, false
	}
	if !hok || !mok || h > 15 || mi > 59 {
		return 0, false
	}
	tz = -(h*3600 + mi*60)
	if b[0] == '-' {
		tz = -tz
	}
	return tz, true
}

// two reads two decimal digits.
func two(b []byte) (int, bool) {
	hi, lo := b[0]-'0', b[1]-'0'
	return int(hi)*10 + int(lo), hi <= 9 && lo <= 9
}
