package render

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// maxTimeSpecLen bounds a from/until value; real ones are under 30 bytes.
const maxTimeSpecLen = 64

// maxOffset bounds a relative offset so time arithmetic cannot overflow.
const maxOffset = 200 * 365 * 24 * time.Hour

var (
	monthNames   = []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}
	weekdayNames = []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}
)

// ParseTime parses a Graphite from/until value relative to now, reading
// wall-clock forms in loc. Accepted forms (case-insensitive; '_', ',' and
// spaces are ignored):
//
//	unix seconds     1700000000
//	now, relative    now  -1h  now-5min  +2d  -1mon (30 days)  -1y (365 days)
//	absolute         HH:MM_YYYYMMDD  YYYYMMDD  MM/DD/YY[YY]  jan15  monday
//	time of day      14:30  4pm  noon  midnight  teatime, optionally + a day
//	day              today  yesterday  tomorrow
//
// Offset units: s, min, h, d, w, mon, y (any word starting so: "5minutes").
func ParseTime(s string, now time.Time, loc *time.Location) (time.Time, error) {
	if loc == nil {
		loc = time.UTC
	}
	if len(s) > maxTimeSpecLen {
		return time.Time{}, fmt.Errorf("parsing time %.20q…: longer than %d bytes", s, maxTimeSpecLen)
	}
	raw := s
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.NewReplacer("_", "", ",", "", " ", "").Replace(s)
	if s != "" && isDigits(s) {
		if !(len(s) == 8 && atoi(s[:4]) > 1900 && atoi(s[4:6]) < 13 && atoi(s[6:]) < 32) {
			sec, err := strconv.ParseInt(s, 10, 64)
			if err != nil || sec > 1<<40 {
				return time.Time{}, fmt.Errorf("parsing time %q: unix seconds out of range", raw)
			}
			return time.Unix(sec, 0).In(loc), nil
		}
	}
	ref, off := s, ""
	if i := strings.IndexAny(s, "+-"); i >= 0 {
		if j := strings.IndexByte(s, '+'); j >= 0 {
			i = j // Graphite splits at the first '+' before looking for '-'
		}
		ref, off = s[:i], s[i:]
	}
	t, err := parseTimeReference(ref, now.In(loc), loc)
	if err != nil {
		return time.Time{}, fmt.Errorf("parsing time %q: %w", raw, err)
	}
	d, err := ParseOffset(off)
	if err != nil {
		return time.Time{}, fmt.Errorf("parsing time %q: %w", raw, err)
	}
	return t.Add(d), nil
}

func parseTimeReference(ref string, now time.Time, loc *time.Location) (time.Time, error) {
	if ref == "" || ref == "now" {
		return now, nil
	}
	raw := ref
	hour, minute := 0, 0
	if i := strings.IndexByte(ref, ':'); i > 0 && i < 3 {
		if len(ref) < i+3 || !isDigits(ref[:i]) || !isDigits(ref[i+1:i+3]) {
			return time.Time{}, fmt.Errorf("bad time of day %q", raw)
		}
		hour, minute = atoi(ref[:i]), atoi(ref[i+1:i+3])
		ref = ref[i+3:]
		if strings.HasPrefix(ref, "am") {
			ref = ref[2:]
		} else if strings.HasPrefix(ref, "pm") {
			hour = (hour + 12) % 24
			ref = ref[2:]
		}
	}
	if i := strings.Index(ref, "am"); i > 0 && i < 3 {
		if !isDigits(ref[:i]) {
			return time.Time{}, fmt.Errorf("bad hour %q", raw)
		}
		hour = atoi(ref[:i])
		ref = ref[i+2:]
	}
	if i := strings.Index(ref, "pm"); i > 0 && i < 3 {
		if !isDigits(ref[:i]) {
			return time.Time{}, fmt.Errorf("bad hour %q", raw)
		}
		hour = (atoi(ref[:i]) + 12) % 24
		ref = ref[i+2:]
	}
	switch {
	case strings.HasPrefix(ref, "noon"):
		hour, minute, ref = 12, 0, ref[4:]
	case strings.HasPrefix(ref, "midnight"):
		hour, minute, ref = 0, 0, ref[8:]
	case strings.HasPrefix(ref, "teatime"):
		hour, minute, ref = 16, 0, ref[7:]
	}
	if hour > 23 || minute > 59 {
		return time.Time{}, fmt.Errorf("bad time of day %q", raw)
	}
	y, mo, d := now.Date()
	date := func(y int, mo time.Month, d int) (time.Time, error) {
		t := time.Date(y, mo, d, hour, minute, 0, 0, loc)
		if t.Day() != d || t.Month() != mo {
			return time.Time{}, fmt.Errorf("no such date %q", raw)
		}
		return t, nil
	}
	switch {
	case ref == "" || ref == "today":
		return date(y, mo, d)
	case ref == "yesterday":
		return time.Date(y, mo, d-1, hour, minute, 0, 0, loc), nil
	case ref == "tomorrow":
		return time.Date(y, mo, d+1, hour, minute, 0, 0, loc), nil
	case strings.Count(ref, "/") == 2:
		p := strings.Split(ref, "/")
		if !isDigits(p[0]) || !isDigits(p[1]) || !isDigits(p[2]) || len(p[2]) > 4 {
			return time.Time{}, fmt.Errorf("bad date %q", raw)
		}
		yy := atoi(p[2])
		if yy < 1900 {
			yy += 1900
		}
		if yy < 1970 {
			yy += 100
		}
		return date(yy, time.Month(atoi(p[0])), atoi(p[1]))
	case len(ref) == 8 && isDigits(ref):
		return date(atoi(ref[:4]), time.Month(atoi(ref[4:6])), atoi(ref[6:8]))
	case len(ref) >= 3 && indexOf(monthNames, ref[:3]) >= 0:
		var day int
		switch {
		case len(ref) >= 2 && isDigits(ref[len(ref)-2:]):
			day = atoi(ref[len(ref)-2:])
		case isDigits(ref[len(ref)-1:]):
			day = atoi(ref[len(ref)-1:])
		default:
			return time.Time{}, fmt.Errorf("day of month required after month name in %q", raw)
		}
		return date(y, time.Month(indexOf(monthNames, ref[:3])+1), day)
	case len(ref) >= 3 && indexOf(weekdayNames, ref[:3]) >= 0:
		back := int(now.Weekday()) - indexOf(weekdayNames, ref[:3])
		if back < 0 {
			back += 7
		}
		return time.Date(y, mo, d-back, hour, minute, 0, 0, loc), nil
	}
	return time.Time{}, fmt.Errorf("unknown day reference %q", raw)
}

// ParseOffset parses a Graphite relative offset such as "-1h", "+2d",
// "5min" (no sign means +) or "-1h30min". Months are 30 days and years 365,
// as in Graphite.
func ParseOffset(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	raw := s
	sign := time.Duration(1)
	switch s[0] {
	case '+':
		s = s[1:]
	case '-':
		sign, s = -1, s[1:]
	default:
		if s[0] < '0' || s[0] > '9' {
			return 0, fmt.Errorf("invalid offset %q", raw)
		}
	}
	if s == "" {
		return 0, fmt.Errorf("invalid offset %q", raw)
	}
	var total time.Duration
	for s != "" {
		i := 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == 0 || i > 12 {
			return 0, fmt.Errorf("invalid offset %q", raw)
		}
		n := time.Duration(atoi(s[:i]))
		s = s[i:]
		j := 0
		for j < len(s) && s[j] >= 'a' && s[j] <= 'z' {
			j++
		}
		unit, err := offsetUnit(s[:j])
		if err != nil {
			return 0, fmt.Errorf("invalid offset %q: %w", raw, err)
		}
		s = s[j:]
		if n > maxOffset/unit {
			return 0, fmt.Errorf("offset %q too large", raw)
		}
		total += n * unit
		if total > maxOffset {
			return 0, fmt.Errorf("offset %q too large", raw)
		}
	}
	return sign * total, nil
}

func offsetUnit(u string) (time.Duration, error) {
	const day = 24 * time.Hour
	switch {
	case strings.HasPrefix(u, "s"):
		return time.Second, nil
	case strings.HasPrefix(u, "min"):
		return time.Minute, nil
	case strings.HasPrefix(u, "h"):
		return time.Hour, nil
	case strings.HasPrefix(u, "d"):
		return day, nil
	case strings.HasPrefix(u, "w"):
		return 7 * day, nil
	case strings.HasPrefix(u, "mon"):
		return 30 * day, nil
	case strings.HasPrefix(u, "y"):
		return 365 * day, nil
	}
	return 0, fmt.Errorf("unknown unit %q", u)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// atoi parses a short string of ASCII digits; callers check isDigits.
func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}
