package copyenc

// Generators of the differential test's corpus: mostly well-formed values
// in every spelling the input functions know, near their limits, plus
// mutations (a byte inserted, dropped or replaced) that make most of them
// invalid in interesting ways.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

// mutate edits s at random positions with bytes from alphabet.
func mutate(r *rand.Rand, s, alphabet string) string {
	b := []byte(s)
	for range 1 + r.IntN(2) {
		i := 0
		if len(b) > 0 {
			i = r.IntN(len(b) + 1)
		}
		c := alphabet[r.IntN(len(alphabet))]
		switch op := r.IntN(3); {
		case op == 0 || len(b) == 0:
			b = append(b[:i], append([]byte{c}, b[i:]...)...)
		case op == 1 && i < len(b):
			b = append(b[:i], b[i+1:]...)
		case i < len(b):
			b[i] = c
		}
	}
	return string(b)
}

func spaces(r *rand.Rand) string {
	switch r.IntN(12) {
	case 0:
		return " "
	case 1:
		return "\t "
	case 2:
		return "\n"
	}
	return ""
}

// randCase changes the case of letters at random.
func randCase(r *rand.Rand, s string) string {
	switch r.IntN(3) {
	case 0:
		return strings.ToLower(s)
	case 1:
		return strings.ToUpper(s)
	}
	return s
}

func digitsN(v int64, n int) string {
	s := strconv.FormatInt(v, 10)
	for len(s) < n {
		s = "0" + s
	}
	return s
}

var monthSpellings = [12][]string{{"Jan", "January"}, {"Feb", "February"}, {"Mar", "March"}, {"Apr", "April"},
	{"May"}, {"Jun", "June"}, {"Jul", "July"}, {"Aug", "August"}, {"Sep", "Sept", "September"}, {"Oct", "October"},
	{"Nov", "November"}, {"Dec", "December"}}
var monthNames = []string{"Jan", "January", "Feb", "February", "Mar", "March", "Apr", "April", "May", "Jun", "June",
	"Jul", "July", "Aug", "August", "Sep", "Sept", "September", "Oct", "October", "Nov", "November", "Dec", "December"}
var dowNames = []string{"Mon", "Monday", "Tue", "Tues", "Wednesday", "Thu", "Thurs", "Fri", "Sat", "Sun"}

// wall is a wall-clock date and time.
type wall struct {
	y          int64
	mo, d      int
	h, mi, s   int
	frac       string // "" or the digits after the point
	transition bool
}

// genWall picks a wall-clock time: anywhere in PostgreSQL's range, around
// today, or near one of the session zone's transitions (its DST gaps and
// overlaps, where the reading of a zone-less value is decided).
func genWall(r *rand.Rand, g *genCtx) wall {
	var w wall
	switch k := r.IntN(10); {
	case k < 3 && g.loc != nil && g.loc.loc != nil:
		// a transition between 1850 and 2060, ±3 hours in either offset
		t := time.Unix(r.Int64N(int64(210*365.25*86400))-int64(120*365.25*86400), 0).In(g.loc.loc)
		start, _ := t.ZoneBounds()
		if start.IsZero() {
			start = t
		}
		_, offAfter := start.Zone()
		_, offBefore := start.Add(-time.Second).Zone()
		off := pick(r, offAfter, offBefore)
		lt := start.Add(time.Duration(r.IntN(361)-180)*time.Minute + time.Duration(pick(r, 0, 0, 30, 59))*time.Second).UTC().Add(time.Duration(off) * time.Second)
		w = wall{y: int64(lt.Year()), mo: int(lt.Month()), d: lt.Day(), h: lt.Hour(), mi: lt.Minute(), s: lt.Second(), transition: true}
	case k < 6:
		t := time.Unix(r.Int64N(100*365*86400)+int64(1950-1970)*365*86400, 0).UTC()
		w = wall{y: int64(t.Year()), mo: int(t.Month()), d: t.Day(), h: t.Hour(), mi: t.Minute(), s: t.Second()}
	case k < 8:
		w = wall{y: 1 + r.Int64N(9999), mo: 1 + r.IntN(12), d: 1 + r.IntN(31), h: r.IntN(24), mi: r.IntN(60), s: r.IntN(60)}
	default:
		w = wall{y: pick[int64](r, 1, 4713, 4714, 4715, 294276, 294277, 5874897, 5874898, 99999, 100000, 1000000),
			mo: pick(r, 1, 2, 6, 11, 12, 13), d: pick(r, 1, 23, 24, 28, 29, 30, 31, 32), h: pick(r, 0, 12, 23, 24, 25), mi: pick(r, 0, 59, 60), s: pick(r, 0, 59, 60, 61)}
	}
	switch r.IntN(4) {
	case 0:
		w.frac = strconv.Itoa(r.IntN(10))
	case 1:
		n := 1 + r.IntN(12)
		var sb strings.Builder
		for range n {
			sb.WriteByte(byte('0' + r.IntN(10)))
		}
		w.frac = sb.String()
	}
	return w
}

// dateText spells a date in one of the forms DecodeDateTime reads.
func dateText(r *rand.Rand, w wall) string {
	y4 := digitsN(w.y, 4)
	mo, d := digitsN(int64(w.mo), 2), digitsN(int64(w.d), 2)
	if r.IntN(4) == 0 {
		mo, d = strconv.Itoa(w.mo), strconv.Itoa(w.d)
	}
	mon := func() string {
		if w.mo < 1 || w.mo > 12 {
			return randCase(r, pick(r, monthNames...))
		}
		return randCase(r, pick(r, monthSpellings[w.mo-1]...))
	}
	y2 := digitsN(w.y%100, 2)
	switch r.IntN(20) {
	case 0, 1, 2, 3, 4, 5, 6, 7:
		return y4 + "-" + mo + "-" + d
	case 8:
		return mo + "/" + d + "/" + y4
	case 9:
		return d + "." + mo + "." + y4
	case 10:
		return mon() + " " + d + " " + y4
	case 11:
		return d + " " + mon() + " " + y4
	case 12:
		return y4 + "-" + mon() + "-" + d
	case 13:
		return y4 + mo + d
	case 14:
		return y2 + mo + d
	case 15:
		return mo + "/" + d + "/" + y2
	case 16:
		return y4 + "." + digitsN(int64(1+r.IntN(367)), 3)
	case 17:
		return pick(r, "J", "j", "J ", "julian ") + strconv.FormatInt(int64(date2j(int32(w.y), int32(w.mo), int32(w.d))), 10)
	case 18:
		return mon() + "-" + d + "-" + y4
	default:
		return y4 + "/" + mo + "/" + d
	}
}

func timeText(r *rand.Rand, w wall) string {
	h, mi, s := digitsN(int64(w.h), 2), digitsN(int64(w.mi), 2), digitsN(int64(w.s), 2)
	switch r.IntN(12) {
	case 0:
		return h + ":" + mi
	case 1:
		return h + mi + s
	case 2:
		hh := w.h % 12
		if hh == 0 {
			hh = 12
		}
		return strconv.Itoa(hh) + ":" + mi + ":" + s + pick(r, " ", "") + randCase(r, pick(r, "am", "pm"))
	case 3:
		return strconv.Itoa(w.h) + ":" + strconv.Itoa(w.mi)
	}
	t := h + ":" + mi + ":" + s
	if w.frac != "" {
		t += "." + w.frac
	}
	return t
}

func zoneText(r *rand.Rand, g *genCtx) string {
	switch r.IntN(16) {
	case 0:
		return pick(r, "Z", "z", "UTC", "utc", "GMT", "zulu")
	case 1:
		return pick(r, "+", "-") + digitsN(int64(r.IntN(17)), 2)
	case 2:
		return pick(r, "+", "-") + digitsN(int64(r.IntN(16)), 2) + ":" + digitsN(int64(pick(r, 0, 30, 45, r.IntN(61))), 2)
	case 3:
		return pick(r, "+", "-") + digitsN(int64(r.IntN(16)), 2) + digitsN(int64(pick(r, 0, 30, 45)), 2)
	case 4:
		return pick(r, "+", "-") + strconv.Itoa(r.IntN(16)) + pick(r, "", ":30:15", ":5")
	case 5, 6:
		if len(g.abbrevs) > 0 {
			return randCase(r, pick(r, g.abbrevs...))
		}
	case 7, 8:
		if len(g.names) > 0 {
			return randCase(r, pick(r, g.names...))
		}
	case 9:
		return pick(r, "America/New_York", "Europe/Paris", "Asia/Kolkata", "Australia/Lord_Howe", "America/Sao_Paulo",
			"Pacific/Chatham", "Europe/Moscow", "Africa/Casablanca", "Asia/Tehran", "EST5EDT", "Etc/GMT+3", "Nowhere/Atlantis")
	case 10:
		return randCase(r, pick(r, "utc+3", "UTC-5:30", "XYZ+2", "<+05>-05", "EST5EDT", "abc", "est dst", "PST DST"))
	}
	return ""
}

// genTimestamp builds a date/time text: date, optional time, zone, era,
// day of week, and the special words, with random spacing and mutations.
func genTimestamp(r *rand.Rand, g *genCtx) string {
	if r.IntN(40) == 0 {
		return spaces(r) + randCase(r, pick(r, "epoch", "infinity", "-infinity", "+infinity", "allballs", "now", "today",
			"tomorrow", "yesterday", "invalid", "current", "-epoch", "infinityx")) + spaces(r)
	}
	w := genWall(r, g)
	var sb strings.Builder
	sb.WriteString(spaces(r))
	if r.IntN(20) == 0 {
		sb.WriteString(randCase(r, pick(r, dowNames...)) + pick(r, " ", ", "))
	}
	sb.WriteString(dateText(r, w))
	if r.IntN(5) != 0 || w.transition {
		sb.WriteString(pick(r, " ", " ", " ", "T", "t", "  ", " at "))
		sb.WriteString(timeText(r, w))
		if r.IntN(30) == 0 {
			sb.WriteString(" allballs")
		}
	}
	if !w.transition || r.IntN(4) == 0 {
		if z := zoneText(r, g); z != "" {
			sb.WriteString(pick(r, "", " ", " ") + z)
		}
	}
	if r.IntN(12) == 0 {
		sb.WriteString(pick(r, " BC", " bc", " AD", "BC", " B.C."))
	}
	sb.WriteString(spaces(r))
	s := sb.String()
	if r.IntN(8) == 0 {
		s = mutate(r, s, "0123456789:-/.+ TZJabcz,_")
	}
	return s
}

func genBool(r *rand.Rand, _ *genCtx) string {
	s := randCase(r, pick(r, "t", "true", "tr", "tru", "y", "yes", "ye", "on", "o", "of", "off", "1", "0", "f", "fa",
		"false", "n", "no", "", "10", "yess", "truex", "nul"))
	s = spaces(r) + s + spaces(r)
	if r.IntN(6) == 0 {
		s = mutate(r, s, "tfyno01 eslrua")
	}
	return s
}

func genInt(r *rand.Rand, _ *genCtx) string {
	var v string
	switch r.IntN(6) {
	case 0:
		v = strconv.FormatInt(r.Int64N(100), 10)
	case 1:
		v = strconv.FormatInt(int64(int16(r.Uint32())), 10)
	case 2:
		v = strconv.FormatInt(int64(int32(r.Uint32())), 10)
	case 3:
		v = strconv.FormatInt(int64(r.Uint64()), 10)
	case 4:
		v = pick(r, "32767", "32768", "-32768", "-32769", "2147483647", "2147483648", "-2147483648", "-2147483649",
			"9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
			"00000000000000000000001", "-0", "+5", "99999999999999999999999")
	default:
		v = strconv.FormatUint(r.Uint64(), 10) + strconv.Itoa(r.IntN(10))
	}
	s := spaces(r) + pick(r, "", "", "", "+") + v + spaces(r)
	if r.IntN(5) == 0 {
		s = mutate(r, s, "0123456789+- x_.e")
	}
	return s
}

func genFloat(r *rand.Rand, _ *genCtx) string {
	var v string
	switch r.IntN(10) {
	case 0:
		v = strconv.FormatFloat(r.NormFloat64()*100, 'f', r.IntN(12), 64)
	case 1:
		v = strconv.FormatFloat(math.Float64frombits(r.Uint64()), pick[byte](r, 'e', 'g', 'f'), -1, 64)
	case 2:
		v = strconv.FormatFloat(float64(math.Float32frombits(r.Uint32())), 'g', -1, 32)
	case 3:
		v = randCase(r, pick(r, "NaN", "nan", "-NaN", "+nan", "Infinity", "-Infinity", "+inf", "-inf", "inf", "infinit",
			"nan(123)", "infinityx", "1e400", "-1e400", "1e-400", "4.9e-324", "2e-324", "1e-320", "3.4028235e38",
			"3.4028236e38", "1.4e-45", "7e-46", "1e-40", "1e39", "0x1p3", "0x10", "0X1.8p1", "-0x1p-1074", "0x", "1e", "."))
	case 4:
		v = strconv.Itoa(r.IntN(1000)) + "e" + strconv.Itoa(r.IntN(700)-350)
	case 5:
		v = "0." + strings.Repeat("0", r.IntN(50)) + strconv.FormatUint(r.Uint64(), 10)
	case 6:
		v = strconv.FormatUint(r.Uint64(), 10) + strconv.FormatUint(r.Uint64(), 10) + "." + strconv.Itoa(r.IntN(1000))
	default:
		v = strconv.FormatFloat(r.Float64()*math.Pow(10, float64(r.IntN(40)-20)), 'g', r.IntN(20), 64)
	}
	s := spaces(r) + v + spaces(r)
	if r.IntN(5) == 0 {
		s = mutate(r, s, "0123456789+-.eEx pnaif")
	}
	return s
}

func genNumeric(r *rand.Rand, _ *genCtx) string {
	var v string
	switch r.IntN(8) {
	case 0:
		v = strconv.FormatInt(r.Int64N(1e9)-5e8, 10)
	case 1:
		v = strconv.FormatFloat(r.NormFloat64()*1e6, 'f', r.IntN(20), 64)
	case 2:
		v = randCase(r, pick(r, "NaN", "-NaN", "Infinity", "-Infinity", "+Infinity", "inf", "-inf", "+inf", "infinit",
			"1e1000", "1e-1000", "1e1001", "1e-1001", "9e131071", ".", "-.", "+.5", "5.", "1e", "1e+", "0.0000", "-0",
			"1e-16383", "1e-16384", "0e-20000", "0e20000"))
	case 3:
		v = strconv.Itoa(r.IntN(1000)) + pick(r, "e", "E") + pick(r, "", "+", "-") + strconv.Itoa(r.IntN(1100))
	case 4:
		v = strings.Repeat("9", 1+r.IntN(200)) + "." + strings.Repeat("9", r.IntN(200))
	case 5:
		v = "0." + strings.Repeat("0", r.IntN(300)) + strconv.FormatUint(r.Uint64(), 10)
	default:
		v = strconv.FormatFloat(r.Float64()*math.Pow(10, float64(r.IntN(60)-30)), 'g', r.IntN(25), 64)
	}
	s := spaces(r) + v + spaces(r)
	if r.IntN(5) == 0 {
		s = mutate(r, s, "0123456789+-.eE nNaIif_")
	}
	return s
}

func genUUID(r *rand.Rand, _ *genCtx) string {
	h := fmt.Sprintf("%016x%016x", r.Uint64(), r.Uint64())
	if r.IntN(2) == 0 {
		h = strings.ToUpper(h)
	}
	var s string
	switch r.IntN(5) {
	case 0:
		s = h
	case 1:
		s = "{" + h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:] + "}"
	case 2:
		var sb strings.Builder
		for i := 0; i < 32; i += 4 {
			sb.WriteString(h[i : i+4])
			if i < 28 && r.IntN(2) == 0 {
				sb.WriteByte('-')
			}
		}
		s = sb.String()
	default:
		s = h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
	}
	if r.IntN(4) == 0 {
		s = mutate(r, s, "0123456789abcdefABCDEFg-{} ")
	}
	return s
}

func genJSONValue(r *rand.Rand, depth int) string {
	switch k := r.IntN(10); {
	case k < 2 && depth < 6:
		n := r.IntN(4)
		parts := make([]string, n)
		for i := range parts {
			parts[i] = genJSONValue(r, depth+1)
		}
		return "[" + strings.Join(parts, pick(r, ",", ", ", " ,\n")) + "]"
	case k < 4 && depth < 6:
		n := r.IntN(4)
		parts := make([]string, n)
		for i := range parts {
			parts[i] = genJSONString(r) + pick(r, ":", " : ") + genJSONValue(r, depth+1)
		}
		return "{" + strings.Join(parts, ",") + "}"
	case k < 6:
		return genJSONString(r)
	case k < 8:
		return pick(r, "0", "-0", "1", "-1.5", "1e5", "1E+400", "1e-400", "1e1000000", "-1e-1000000", "01", "1.", ".5",
			"123456789012345678901234567890", "0.000001", "2e-16383", "1e131072", strconv.FormatFloat(r.NormFloat64(), 'g', -1, 64))
	default:
		return pick(r, "true", "false", "null", "True", "nul")
	}
}

func genJSONString(r *rand.Rand) string {
	return `"` + pick(r, "a", "", "key", `\n`, `\u0000`, `\ud83d\ude00`, `\ud83d`, `\ude00`, `\u00e9`, "é", `\x`, "\t", `\/`,
		`\"`, "日本") + `"`
}

func genJSON(r *rand.Rand, _ *genCtx) string {
	s := spaces(r) + genJSONValue(r, 0) + spaces(r)
	if r.IntN(5) == 0 {
		s = mutate(r, s, "{}[],:\"\\ 0123456789eE.-tfnu")
	}
	return s
}

func genText(r *rand.Rand, _ *genCtx) string {
	switch r.IntN(6) {
	case 0:
		return strings.Repeat("n", 60+r.IntN(8))
	case 1:
		return strings.Repeat("é", 30+r.IntN(4))
	case 2:
		return string([]byte{byte(r.IntN(256)), byte(r.IntN(256)), 'a'})
	}
	return pick(r, "", "a", "device 1", " spaced ", "tab\there", "quote\"s", "back\\slash", "{}", "NULL", "日本語")
}

// genArrayOf builds array texts whose elements come from elem.
func genArrayOf(elem func(*rand.Rand, *genCtx) string) func(*rand.Rand, *genCtx) string {
	return func(r *rand.Rand, g *genCtx) string {
		n := r.IntN(5)
		parts := make([]string, n)
		for i := range parts {
			e := elem(r, g)
			switch r.IntN(6) {
			case 0:
				e = `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(e) + `"`
			case 1:
				e = pick(r, "NULL", "null", `"NULL"`, "")
			}
			parts[i] = e
		}
		s := "{" + strings.Join(parts, pick(r, ",", ", ", " , ")) + "}"
		switch r.IntN(12) {
		case 0:
			s = "{" + s + "," + s + "}"
		case 1:
			s = "[1:" + strconv.Itoa(n) + "]=" + s
		case 2:
			s = spaces(r) + s + spaces(r)
		}
		if r.IntN(6) == 0 {
			s = mutate(r, s, `{}",\ 0123456789[]:=`)
		}
		return s
	}
}
