package copyenc

import "bytes"

// decoded is DecodeDateTime's result.
type decoded struct {
	dtype int // dtkDate, dtkEpoch, dtkLate or dtkEarly
	tm    pgTm
	tz    int // the zone, seconds west of UTC as PostgreSQL keeps it
}

// Reasons a value is refused; the ones that are not PostgreSQL's own
// verdict say so.
const (
	reasonSyntax      = "invalid input syntax"
	reasonRange       = "field value out of range"
	reasonZone        = "time zone displacement out of range"
	reasonOutOfRange  = "out of range"
	reasonNow         = "refers to the current time (now, today, tomorrow, yesterday), which differs between client and server: load such values through SQL"
	reasonDynamicZone = "uses a time zone abbreviation whose offset depends on the date in PostgreSQL's table; write the offset or the zone name instead"
)

// decode is DecodeDateTime for the date, timestamp and timestamptz input
// functions (which all pass a zone pointer, so zones are read and checked
// for all three).
func (z *Zones) decode(f *dtFields) (d decoded, reason string) {
	tm := &d.tm
	d.dtype = dtkDate
	fmask, tmask, ptype := 0, 0, 0
	mer := hr24
	var haveTextMonth, isjulian, is2digits, bc, haveNamed bool
	var named zone
	for i := 0; i < f.nf; i++ {
		fld := f.field(i)
		switch f.typ[i] {
		case ftDate:
			switch {
			case ptype == dtkUnitJulian:
				val, n, rerr := strtoint(fld)
				if rerr || val < 0 {
					return d, reasonRange
				}
				tm.year, tm.mon, tm.mday = j2date(int32(val))
				isjulian = true
				tz, r := decodeTimezone(fld[n:])
				if r != "" {
					return d, r
				}
				d.tz = tz
				tmask = mDate | mTime | 1<<fTZ
				ptype = 0
			case ptype != 0 || fmask&(1<<fMonth|1<<fDay) == 1<<fMonth|1<<fDay:
				if isDigit(fld[0]) || ptype != 0 {
					if ptype != 0 {
						if ptype != dtkUnitTime {
							return d, reasonSyntax
						}
						ptype = 0
					}
					if fmask&mTime == mTime {
						return d, reasonSyntax
					}
					cp := bytes.IndexByte(fld, '-')
					if cp < 0 {
						return d, reasonSyntax
					}
					tz, r := decodeTimezone(fld[cp:])
					if r != "" {
						return d, r
					}
					d.tz = tz
					var ok bool
					if tmask, ok = decodeNumberField(fld[:cp], fmask, tm, &is2digits); !ok {
						return d, reasonSyntax
					}
					tmask |= 1 << fTZ
				} else {
					zn, r := z.named(fld)
					if r == reasonPosixDST {
						return d, "time zone " + quoteShort(fld) + " " + r
					} else if r != "" {
						return d, "time zone " + quoteShort(fld) + " not recognized"
					}
					named, haveNamed = zn, true
					tmask = 1 << fTZ
				}
			default:
				var r string
				if tmask, r = decodeDate(fld, fmask, &is2digits, tm, z.order); r != "" {
					return d, r
				}
			}
		case ftTime:
			if ptype != 0 {
				if ptype != dtkUnitTime {
					return d, reasonSyntax
				}
				ptype = 0
			}
			tmask = mTime
			if r := decodeTime(fld, tm); r != "" {
				return d, r
			}
			if timeOverflows(tm.hour, tm.min, tm.sec, tm.fsec) {
				return d, reasonRange
			}
		case ftTZ:
			tz, r := decodeTimezone(fld)
			if r != "" {
				return d, r
			}
			d.tz = tz
			tmask = 1 << fTZ
		case ftNumber:
			if ptype != 0 {
				var r string
				if tmask, r = decodeUnitNumber(fld, ptype, fmask, tm, &is2digits, &isjulian, &d.tz); r != "" {
					return d, r
				}
				ptype = 0
				d.dtype = dtkDate
				break
			}
			flen := len(fld)
			cp := bytes.IndexByte(fld, '.')
			switch {
			case cp >= 0 && fmask&mDate == 0:
				var r string
				if tmask, r = decodeDate(fld, fmask, &is2digits, tm, z.order); r != "" {
					return d, r
				}
			case cp > 2, flen >= 6 && (fmask&mDate == 0 || fmask&mTime == 0):
				var ok bool
				if tmask, ok = decodeNumberField(fld, fmask, tm, &is2digits); !ok {
					return d, reasonSyntax
				}
			default:
				var r string
				if tmask, r = decodeNumber(fld, haveTextMonth, fmask, tm, &is2digits, z.order); r != "" {
					return d, r
				}
			}
		case ftString, ftSpecial:
			typ, val := fUnknown, 0
			if a, ok := z.abbrevs[string(fld)]; ok {
				switch {
				case a.Dynamic:
					typ = fDynTZ
				case a.IsDST:
					typ, val = fDTZ, a.Offset
				default:
					typ, val = fTZ, a.Offset
				}
			} else if k, ok := keywords[string(fld)]; ok {
				typ, val = k.typ, k.val
			}
			if typ == fIgnore {
				continue
			}
			tmask = 1 << typ
			switch typ {
			case fReserv:
				switch val {
				case dtkNow, dtkToday, dtkTomorrow, dtkYesterday:
					return d, reasonNow
				case dtkZulu:
					tmask = mTime | 1<<fTZ
					d.dtype = dtkDate
					tm.hour, tm.min, tm.sec = 0, 0, 0
					d.tz = 0
				default:
					d.dtype = val
				}
			case fMonth:
				if fmask&(1<<fMonth) != 0 && !haveTextMonth && fmask&(1<<fDay) == 0 && tm.mon >= 1 && tm.mon <= 31 {
					tm.mday = tm.mon
					tmask = 1 << fDay
				}
				haveTextMonth = true
				tm.mon = val
			case fDTZMod:
				tmask |= 1 << fDTZ
				d.tz -= val
			case fDTZ:
				tmask |= 1 << fTZ
				d.tz = -val
			case fTZ:
				d.tz = -val
			case fDynTZ:
				return d, reasonDynamicZone
			case fAMPM:
				mer = val
			case fADBC:
				bc = val == 1
			case fDOW:
			case fUnits:
				tmask = 0
				ptype = val
			case fISOTime:
				tmask = 0
				if fmask&mDate != mDate {
					return d, reasonSyntax
				}
				if i >= f.nf-1 || f.typ[i+1] != ftNumber && f.typ[i+1] != ftTime && f.typ[i+1] != ftDate {
					return d, reasonSyntax
				}
				ptype = val
			case fUnknown:
				zn, r := z.named(fld)
				if r == reasonPosixDST {
					return d, "time zone " + quoteShort(fld) + " " + r
				} else if r != "" {
					return d, reasonSyntax
				}
				named, haveNamed = zn, true
				tmask = 1 << fTZ
			default:
				return d, reasonSyntax
			}
		default:
			return d, reasonSyntax
		}
		if tmask&fmask != 0 {
			return d, reasonSyntax
		}
		fmask |= tmask
	}
	if r := validateDate(fmask, isjulian, is2digits, bc, tm); r != "" {
		return d, r
	}
	if mer != hr24 && tm.hour > 12 {
		return d, reasonRange
	}
	if mer == amAM && tm.hour == 12 {
		tm.hour = 0
	} else if mer == amPM && tm.hour != 12 {
		tm.hour += 12
	}
	if d.dtype == dtkDate {
		if fmask&mDate != mDate {
			return d, reasonSyntax
		}
		if haveNamed {
			if fmask&(1<<fDTZMod) != 0 {
				return d, reasonSyntax
			}
			d.tz = -named.offsetFor(tm)
		}
		if fmask&(1<<fTZ) == 0 {
			if fmask&(1<<fDTZMod) != 0 {
				return d, reasonSyntax
			}
			d.tz = -z.session.offsetFor(tm)
		}
	}
	return d, ""
}

// decodeUnitNumber reads a number after a unit word (y2024, j2451545,
// T040506): DecodeDateTime's DTK_NUMBER case with a prefix type.
func decodeUnitNumber(fld []byte, ptype, fmask int, tm *pgTm, is2digits, isjulian *bool, tz *int) (int, string) {
	val, n, rerr := strtoint(fld)
	if rerr {
		return 0, reasonRange
	}
	rest := fld[n:]
	if len(rest) > 0 && rest[0] == '.' {
		switch ptype {
		case dtkUnitJulian, dtkUnitTime, dtkUnitSecond:
		default:
			return 0, reasonSyntax
		}
	} else if len(rest) > 0 {
		return 0, reasonSyntax
	}
	switch ptype {
	case dtkUnitYear:
		tm.year = val
		return 1 << fYear, ""
	case dtkUnitMonth:
		if fmask&(1<<fMonth) != 0 && fmask&(1<<fHour) != 0 {
			tm.min = val
			return 1 << fMinute, ""
		}
		tm.mon = val
		return 1 << fMonth, ""
	case dtkUnitDay:
		tm.mday = val
		return 1 << fDay, ""
	case dtkUnitHour:
		tm.hour = val
		return 1 << fHour, ""
	case dtkUnitMinute:
		tm.min = val
		return 1 << fMinute, ""
	case dtkUnitSecond:
		tm.sec = val
		if len(rest) > 0 {
			fs, ok := parseFraction(rest)
			if !ok {
				return 0, reasonSyntax
			}
			tm.fsec = fs
			return mAllSecs, ""
		}
		return 1 << fSecond, ""
	case dtkUnitJulian:
		if val < 0 {
			return 0, reasonRange
		}
		tm.year, tm.mon, tm.mday = j2date(int32(val))
		*isjulian = true
		if len(rest) > 0 {
			f, k := strtodFrac(rest)
			if k == 0 || k != len(rest) {
				return 0, reasonSyntax
			}
			us := int64(f * microsPerDay) // dt2time takes the double as an int64
			tm.hour = int(us / 3600_000000)
			us -= int64(tm.hour) * 3600_000000
			tm.min = int(us / 60_000000)
			us -= int64(tm.min) * 60_000000
			tm.sec = int(us / 1000000)
			tm.fsec = us - int64(tm.sec)*1000000
			return mDate | mTime, ""
		}
		return mDate, ""
	case dtkUnitTime:
		tmask, ok := decodeNumberField(fld, fmask|mDate, tm, is2digits)
		if !ok || tmask != mTime {
			return 0, reasonSyntax
		}
		return tmask, ""
	}
	return 0, reasonSyntax
}

// decodeTimezone is DecodeTimezone: "+hh", "-hhmm", "+hh:mm[:ss]"; it
// returns seconds west of UTC.
func decodeTimezone(s []byte) (int, string) {
	if len(s) == 0 || s[0] != '+' && s[0] != '-' {
		return 0, reasonSyntax
	}
	hr, n, rerr := strtoint(s[1:])
	if rerr {
		return 0, reasonZone
	}
	cp := 1 + n
	min, sec := 0, 0
	switch {
	case cp < len(s) && s[cp] == ':':
		if min, n, rerr = strtoint(s[cp+1:]); rerr {
			return 0, reasonZone
		}
		cp += 1 + n
		if cp < len(s) && s[cp] == ':' {
			if sec, n, rerr = strtoint(s[cp+1:]); rerr {
				return 0, reasonZone
			}
			cp += 1 + n
		}
	case cp == len(s) && len(s) > 3:
		min = hr % 100
		hr /= 100
	}
	if hr < 0 || hr > 15 || min < 0 || min >= 60 || sec < 0 || sec >= 60 {
		return 0, reasonZone
	}
	tz := (hr*60+min)*60 + sec
	if s[0] == '-' {
		tz = -tz
	}
	if cp != len(s) {
		return 0, reasonSyntax
	}
	return -tz, ""
}

// decodeTime is DecodeTime for the full range: hh:mm, hh:mm:ss[.f], and
// mm:ss.f.
func decodeTime(s []byte, tm *pgTm) string {
	h, n, rerr := strtoint(s)
	if rerr {
		return reasonRange
	}
	if n >= len(s) || s[n] != ':' {
		return reasonSyntax
	}
	cp := n + 1
	m, n, rerr := strtoint(s[cp:])
	if rerr {
		return reasonRange
	}
	cp += n
	tm.hour, tm.min, tm.sec, tm.fsec = h, m, 0, 0
	switch {
	case cp == len(s):
	case s[cp] == '.':
		fs, ok := parseFraction(s[cp:])
		if !ok {
			return reasonSyntax
		}
		tm.fsec = fs
		tm.sec, tm.min, tm.hour = m, h, 0
	case s[cp] == ':':
		sec, n, rerr := strtoint(s[cp+1:])
		if rerr {
			return reasonRange
		}
		tm.sec = sec
		cp += 1 + n
		if cp < len(s) {
			if s[cp] != '.' {
				return reasonSyntax
			}
			fs, ok := parseFraction(s[cp:])
			if !ok {
				return reasonSyntax
			}
			tm.fsec = fs
		}
	default:
		return reasonSyntax
	}
	if tm.hour < 0 || tm.min < 0 || tm.min > 59 || tm.sec < 0 || tm.sec > 60 || tm.fsec < 0 || tm.fsec > 1000000 {
		return reasonRange
	}
	return ""
}

// timeOverflows is time_overflows: 24:00:00 and a leap second :60 are
// accepted (the latter as the next minute), nothing past 24:00:00.
func timeOverflows(h, m, s int, fsec int64) bool {
	if h < 0 || h > 24 || m < 0 || m >= 60 || s < 0 || s > 60 || fsec < 0 || fsec > 1000000 {
		return true
	}
	return (int64(h*60+m)*60+int64(s))*1000000+fsec > microsPerDay
}

// decodeNumberField is DecodeNumberField: a run of digits (with an
// optional fraction) read as yyyymmdd / yymmdd, or hhmmss / hhmm. It
// returns the mask it filled.
func decodeNumberField(s []byte, fmask int, tm *pgTm, is2digits *bool) (int, bool) {
	if cp := bytes.IndexByte(s, '.'); cp >= 0 {
		f, _ := strtodFrac(s[cp:])
		tm.fsec = rintMicros(f)
		s = s[:cp]
	} else if fmask&mDate != mDate && len(s) >= 6 {
		n := len(s)
		tm.mday = atoi(s[n-2:])
		tm.mon = atoi(s[n-4 : n-2])
		tm.year = atoi(s[:n-4])
		if n-4 == 2 {
			*is2digits = true
		}
		return mDate, true
	}
	if fmask&mTime != mTime {
		switch len(s) {
		case 6:
			tm.sec = atoi(s[4:6])
			tm.min = atoi(s[2:4])
			tm.hour = atoi(s[:2])
			return mTime, true
		case 4:
			tm.sec = 0
			tm.min = atoi(s[2:4])
			tm.hour = atoi(s[:2])
			return mTime, true
		}
	}
	return 0, false
}

// decodeNumber is DecodeNumber: one number whose meaning depends on the
// fields seen so far and on DateStyle.
func decodeNumber(s []byte, haveTextMonth bool, fmask int, tm *pgTm, is2digits *bool, order DateOrder) (int, string) {
	flen := len(s)
	val, n, rerr := strtoint(s)
	if rerr {
		return 0, reasonRange
	}
	if n == 0 {
		return 0, reasonSyntax
	}
	if n < len(s) && s[n] == '.' {
		if n > 2 {
			tmask, ok := decodeNumberField(s, fmask|mDate, tm, is2digits)
			if !ok {
				return 0, reasonSyntax
			}
			return tmask, ""
		}
		fs, ok := parseFraction(s[n:])
		if !ok {
			return 0, reasonSyntax
		}
		tm.fsec = fs
	} else if n != len(s) {
		return 0, reasonSyntax
	}
	if flen == 3 && fmask&mDate == 1<<fYear && val >= 1 && val <= 366 {
		tm.yday = val
		return 1<<fDOY | 1<<fMonth | 1<<fDay, ""
	}
	tmask := 0
	switch fmask & mDate {
	case 0:
		switch {
		case flen >= 3 || order == YMD:
			tmask, tm.year = 1<<fYear, val
		case order == DMY:
			tmask, tm.mday = 1<<fDay, val
		default:
			tmask, tm.mon = 1<<fMonth, val
		}
	case 1 << fYear:
		tmask, tm.mon = 1<<fMonth, val
	case 1 << fMonth:
		if haveTextMonth && (flen >= 3 || order == YMD) {
			tmask, tm.year = 1<<fYear, val
		} else {
			tmask, tm.mday = 1<<fDay, val
		}
	case 1<<fYear | 1<<fMonth:
		if haveTextMonth && flen >= 3 && *is2digits {
			tmask = 1 << fDay
			tm.mday = tm.year
			tm.year = val
			*is2digits = false
		} else {
			tmask, tm.mday = 1<<fDay, val
		}
	case 1 << fDay:
		tmask, tm.mon = 1<<fMonth, val
	case 1<<fMonth | 1<<fDay:
		tmask, tm.year = 1<<fYear, val
	case mDate:
		tmask, ok := decodeNumberField(s, fmask, tm, is2digits)
		if !ok {
			return 0, reasonSyntax
		}
		return tmask, ""
	default:
		return 0, reasonSyntax
	}
	if tmask == 1<<fYear {
		*is2digits = flen <= 2
	}
	return tmask, ""
}

// decodeDate is DecodeDate: a date field with separators ("2024-01-02",
// "1/2/2024", "jan-02-2024"), whose parts are read as by decodeNumber.
func decodeDate(s []byte, fmask int, is2digits *bool, tm *pgTm, order DateOrder) (int, string) {
	var start, end [maxDateFlds]int
	nf := 0
	i := 0
	for i < len(s) && nf < maxDateFlds {
		for i < len(s) && !isAlnum(s[i]) {
			i++
		}
		if i == len(s) {
			return 0, reasonSyntax
		}
		start[nf] = i
		if isDigit(s[i]) {
			for i < len(s) && isDigit(s[i]) {
				i++
			}
		} else {
			for i < len(s) && isAlpha(s[i]) {
				i++
			}
		}
		end[nf] = i
		if i < len(s) {
			i++ // the C code ends the field by overwriting the byte after it
		}
		nf++
	}
	tmask := 0
	haveTextMonth := false
	var done [maxDateFlds]bool
	for k := range nf {
		fld := s[start[k]:end[k]]
		if !isAlpha(fld[0]) {
			continue
		}
		kw, ok := keywords[string(fld)]
		if ok && kw.typ == fIgnore {
			continue
		}
		if !ok || kw.typ != fMonth {
			return 0, reasonSyntax
		}
		tm.mon = kw.val
		haveTextMonth = true
		if fmask&(1<<fMonth) != 0 {
			return 0, reasonSyntax
		}
		fmask |= 1 << fMonth
		tmask |= 1 << fMonth
		done[k] = true
	}
	for k := range nf {
		if done[k] {
			continue
		}
		dmask, r := decodeNumber(s[start[k]:end[k]], haveTextMonth, fmask, tm, is2digits, order)
		if r != "" {
			return 0, r
		}
		if fmask&dmask != 0 {
			return 0, reasonSyntax
		}
		fmask |= dmask
		tmask |= dmask
	}
	if fmask&^(1<<fDOY|1<<fTZ) != mDate {
		return 0, reasonSyntax
	}
	return tmask, ""
}

// validateDate is ValidateDate: BC and two-digit years, day of year,
// month and day ranges.
func validateDate(fmask int, isjulian, is2digits, bc bool, tm *pgTm) string {
	if fmask&(1<<fYear) != 0 {
		switch {
		case isjulian:
		case bc:
			if tm.year <= 0 {
				return reasonRange
			}
			tm.year = -(tm.year - 1)
		case is2digits:
			if tm.year < 0 {
				return reasonRange
			}
			if tm.year < 70 {
				tm.year += 2000
			} else if tm.year < 100 {
				tm.year += 1900
			}
		default:
			if tm.year <= 0 {
				return reasonRange
			}
		}
	}
	if fmask&(1<<fDOY) != 0 {
		tm.year, tm.mon, tm.mday = j2date(date2j(int32(tm.year), 1, 1) + int32(tm.yday) - 1)
	}
	if fmask&(1<<fMonth) != 0 && (tm.mon < 1 || tm.mon > 12) {
		return reasonRange
	}
	if fmask&(1<<fDay) != 0 && (tm.mday < 1 || tm.mday > 31) {
		return reasonRange
	}
	if fmask&mDate == mDate && tm.mday > daysIn(int64(tm.year), tm.mon) {
		return reasonRange
	}
	return ""
}

// date2j and j2date are PostgreSQL's Julian day conversions, in its
// 32-bit arithmetic (which wraps for years far out of range; callers
// check the range first, as PostgreSQL does).
func date2j(y, m, d int32) int32 {
	if m > 2 {
		m++
		y += 4800
	} else {
		m += 13
		y += 4799
	}
	century := y / 100
	julian := y*365 - 32167
	julian += y/4 - century + century/4
	julian += 7834*m/256 + d
	return julian
}

func j2date(jd int32) (year, month, day int) {
	julian := uint32(jd)
	julian += 32044
	quad := julian / 146097
	extra := (julian-quad*146097)*4 + 3
	julian += 60 + quad*3 + extra/146097
	quad = julian / 1461
	julian -= quad * 1461
	y := int32(julian * 4 / 1461)
	if y != 0 {
		julian = (julian+305)%365 + 123
	} else {
		julian = (julian+306)%366 + 123
	}
	y += int32(quad * 4)
	year = int(y - 4800)
	quad = julian * 2141 / 65536
	day = int(julian - 7834*quad/256)
	month = int((quad+10)%12 + 1)
	return year, month, day
}

// isValidJulian is IS_VALID_JULIAN.
func isValidJulian(y, m int) bool {
	return (y > -4713 || y == -4713 && m >= 11) && (y < 5874898 || y == 5874898 && m < 6)
}

// offsetFor is DetermineTimeZoneOffset: the zone's offset east of UTC
// for a wall-clock time; UTC for a date out of the Julian range.
func (zn zone) offsetFor(tm *pgTm) int {
	if zn.loc == nil {
		return zn.fixed
	}
	if !isValidJulian(tm.year, tm.mon) {
		return 0
	}
	return zn.offsetAt(localSeconds(tm))
}

// localSeconds is the wall-clock time as seconds since 1970-01-01 00:00
// local, as DetermineTimeZoneOffset computes it (no fraction).
func localSeconds(tm *pgTm) int64 {
	date := int64(date2j(int32(tm.year), int32(tm.mon), int32(tm.mday))) - unixEpochJDate
	return date*86400 + int64(tm.sec+(tm.min+tm.hour*60)*60)
}

const (
	unixEpochJDate     = 2440588
	postgresEpochJDate = 2451545
)

func quoteShort(b []byte) string {
	if len(b) > 64 {
		b = b[:64]
	}
	return `"` + string(b) + `"`
}
