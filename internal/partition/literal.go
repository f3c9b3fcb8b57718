package partition

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// TimeType is the SQL type of a series table's time column.
type TimeType int

// Time column types. The epoch types are bigint columns holding a count of
// seconds, milliseconds or microseconds since 1970-01-01T00:00:00Z.
const (
	Timestamptz TimeType = iota + 1
	Timestamp
	Date
	EpochSeconds
	EpochMillis
	EpochMicros
)

// String returns the type as pgts spells it in messages.
func (tt TimeType) String() string {
	switch tt {
	case Timestamptz:
		return "timestamptz"
	case Timestamp:
		return "timestamp"
	case Date:
		return "date"
	case EpochSeconds:
		return "bigint (epoch seconds)"
	case EpochMillis:
		return "bigint (epoch milliseconds)"
	case EpochMicros:
		return "bigint (epoch microseconds)"
	}
	return "TimeType(" + strconv.Itoa(int(tt)) + ")"
}

// Valid reports whether tt is one of the defined time types.
func (tt TimeType) Valid() bool { return tt >= Timestamptz && tt <= EpochMicros }

// unit returns how many micros one step of the column's integer value is:
// 1 for the timestamp types and EpochMicros, a day for Date (a count of
// days since 1970-01-01), a second or a millisecond for those epochs.
// Invalid types get 1.
func (tt TimeType) unit() int64 {
	switch tt {
	case Date:
		return dayMicros
	case EpochSeconds:
		return secondMicros
	case EpochMillis:
		return 1000
	}
	return 1
}

// ParseTimeType returns the TimeType of a column of SQL type sqlType, as
// format_type() spells it ("timestamp with time zone", "timestamp without
// time zone", "date", "bigint") or in short (timestamptz, timestamp, int8),
// case and spacing ignored. epochUnit ("s", "ms" or "us") is required for
// bigint, and refused for the other types. A timestamp precision below 6
// (timestamptz(3)) is refused: PostgreSQL rounds such values on input,
// which can move a row across a partition boundary after it was routed.
func ParseTimeType(sqlType, epochUnit string) (TimeType, error) {
	norm := strings.ToLower(strings.Join(strings.Fields(sqlType), " "))
	base, precision, hasPrecision := cutPrecision(norm)
	var tt TimeType
	switch base {
	case "timestamp with time zone", "timestamptz":
		tt = Timestamptz
	case "timestamp without time zone", "timestamp":
		tt = Timestamp
	case "date":
		tt = Date
	case "bigint", "int8":
		switch epochUnit {
		case "s":
			return EpochSeconds, nil
		case "ms":
			return EpochMillis, nil
		case "us":
			return EpochMicros, nil
		case "":
			return 0, fmt.Errorf("time column of type %q: a bigint time column holds Unix time, and needs its unit: give --epoch s, ms or us", sqlType)
		}
		return 0, fmt.Errorf("epoch unit %q: must be \"s\", \"ms\" or \"us\"", epochUnit)
	default:
		return 0, fmt.Errorf("time column of type %q: a series table's time column must be timestamptz, timestamp, date or bigint (epoch)", sqlType)
	}
	if hasPrecision && precision != 6 {
		return 0, fmt.Errorf("time column of type %q: PostgreSQL rounds its values to %d fractional digits, "+
			"which can move a row across a partition boundary; use %s without a precision", sqlType, precision, tt)
	}
	if epochUnit != "" {
		return 0, fmt.Errorf("epoch unit %q given for a time column of type %q: only bigint time columns have one", epochUnit, sqlType)
	}
	return tt, nil
}

// cutPrecision removes a typmod "(p)" that follows "timestamp" or
// "timestamptz", returning the type name without it and p.
func cutPrecision(t string) (base string, p int, ok bool) {
	open := strings.IndexByte(t, '(')
	if open < 0 {
		return t, 0, false
	}
	end := strings.IndexByte(t[open:], ')')
	if end < 0 {
		return t, 0, false
	}
	end += open
	name := strings.TrimSpace(t[:open])
	if name != "timestamp" && name != "timestamptz" {
		return t, 0, false
	}
	digits := strings.TrimSpace(t[open+1 : end])
	if len(digits) != 1 || digits[0] < '0' || digits[0] > '6' {
		return t, 0, false
	}
	return name + t[end+1:], int(digits[0] - '0'), true
}

// CheckInterval reports whether the time column type can hold the bounds
// of iv's partitions exactly: every valid interval for the timestamp and
// epoch types (partition bounds are whole seconds), and only whole days,
// weeks or months for Date. It also validates iv.
func (tt TimeType) CheckInterval(iv Interval) error {
	if !tt.Valid() {
		return fmt.Errorf("invalid time type %v", tt)
	}
	if err := iv.Validate(); err != nil {
		return err
	}
	if tt.unit() <= secondMicros || iv.calendar() {
		return nil
	}
	if d, _ := iv.duration(); d%tt.unit() == 0 {
		return nil
	}
	return fmt.Errorf("a %s column holds whole days, so its partition interval must be whole days, weeks or months, not %q", tt, iv.String())
}

// ToMicros converts v, a value of a column of type tt in its own unit, to
// micros: seconds, milliseconds or microseconds for the epoch types, days
// since 1970-01-01 for Date, micros (unchanged) for the timestamp types.
// Results beyond int64 saturate at math.MinInt64 or math.MaxInt64, which
// Bounds then reports out of range.
func ToMicros(tt TimeType, v int64) int64 {
	u := tt.unit()
	switch {
	case v > math.MaxInt64/u:
		return math.MaxInt64
	case v < math.MinInt64/u:
		return math.MinInt64
	}
	return v * u
}

// FromMicros converts micros to a value of a column of type tt in its own
// unit (see ToMicros), rounding down: the result lies in the same
// partition as micros, since partition bounds are whole units.
func FromMicros(tt TimeType, micros int64) int64 {
	return floorDiv(micros, tt.unit())
}

// BoundLiteral returns the SQL literal for the partition bound micros in a
// column of type tt, for FOR VALUES FROM (...) TO (...) and for CHECK
// constraints: timestamptz '2019-01-07 00:00:00+00', timestamp
// '2019-01-07 00:00:00', date '2019-01-07', or a plain integer for the
// epoch types. A date or epoch bound that is not a whole unit is rounded
// up, which keeps [lo, hi) holding the same column values. Years before 1
// get PostgreSQL's " BC" suffix (Bounds never produces them). An invalid
// tt gives "", which no statement accepts.
func BoundLiteral(tt TimeType, micros int64) string {
	var buf [64]byte
	b, bc := buf[:0], false
	switch tt {
	case Timestamptz, Timestamp:
		b = append(b, tt.String()...)
		b = append(b, " '"...)
		days := floorDiv(micros, dayMicros)
		b, bc = appendDate(b, days)
		b = append(b, ' ')
		b = appendTimeOfDay(b, micros-days*dayMicros)
		if tt == Timestamptz {
			b = append(b, "+00"...)
		}
		if bc {
			b = append(b, " BC"...)
		}
		b = append(b, '\'')
	case Date:
		b = append(b, "date '"...)
		b, bc = appendDate(b, ceilDiv(micros, dayMicros))
		if bc {
			b = append(b, " BC"...)
		}
		b = append(b, '\'')
	case EpochSeconds, EpochMillis, EpochMicros:
		b = strconv.AppendInt(b, ceilDiv(micros, tt.unit()), 10)
	}
	return string(b)
}

// appendDate appends the date that is days days after 1970-01-01 as
// YYYY-MM-DD, with the year counted as PostgreSQL prints it: it reports
// bc when the year is 1 BC or earlier, printed as 0001 for 1 BC.
func appendDate(b []byte, days int64) ([]byte, bool) {
	y, m, d := civilDate(days)
	if y <= 0 {
		return appendYMD(b, 1-y, m, d, true), true
	}
	return appendYMD(b, y, m, d, true), false
}

// appendTimeOfDay appends tod (0 <= tod < a day, micros) as
// HH:MM:SS[.ffffff], without trailing zeros in the fraction.
func appendTimeOfDay(b []byte, tod int64) []byte {
	b = append2(b, int(tod/hourMicros))
	b = append(b, ':')
	b = append2(b, int(tod/minuteMicros%60))
	b = append(b, ':')
	b = append2(b, int(tod/secondMicros%60))
	return appendFraction(b, tod%secondMicros)
}

// ErrUnsupportedBound is wrapped by ParseBound's errors for partition
// bounds that are valid PostgreSQL but not a pgts time partition: DEFAULT,
// MINVALUE or MAXVALUE, infinity, hash or list bounds, multi-column keys.
var ErrUnsupportedBound = errors.New("not a time range partition bound")

// maxBoundExprBytes bounds ParseBound's input; a time range bound as
// PostgreSQL prints it is under 100 bytes.
const maxBoundExprBytes = 256

// ParseBound parses a range partition bound as pg_get_expr(relpartbound,
// oid) prints it for a column of type tt, with DateStyle ISO:
//
//	FOR VALUES FROM ('2019-01-07 00:00:00+00') TO ('2019-01-14 00:00:00+00')
//	FOR VALUES FROM ('2019-01-07') TO ('2019-01-14')
//	FOR VALUES FROM ('1547424000') TO ('1547510400')
//
// and returns the bounds [lo, hi) in micros. Timestamptz values may carry
// any UTC offset (+05:30, +05:53:28, as other TimeZone settings print
// them), fractional seconds, and " BC"; keywords are case-insensitive. The
// typed literals of BoundLiteral and unquoted integers are accepted too.
// Bounds outside [MinMicros, MaxMicros] are an error wrapping
// ErrOutOfRange; DEFAULT, MINVALUE, MAXVALUE, infinity, hash and list
// bounds an error wrapping ErrUnsupportedBound. ParseBound does not
// allocate unless it fails.
func ParseBound(tt TimeType, expr string) (lo, hi int64, err error) {
	if !tt.Valid() {
		return 0, 0, fmt.Errorf("parsing partition bound %q: invalid time type %v", expr, tt)
	}
	if len(expr) > maxBoundExprBytes {
		return 0, 0, fmt.Errorf("partition bound of %d bytes starting %q is too long to be a time range", len(expr), expr[:32])
	}
	p := boundScanner{s: expr}
	if p.keyword("DEFAULT") && p.atEnd() {
		return 0, 0, unsupportedBound(expr, "the default partition")
	}
	p.i = 0
	if !p.keyword("FOR") || !p.keyword("VALUES") {
		return 0, 0, p.syntaxError("FOR VALUES")
	}
	switch {
	case p.keyword("WITH"):
		return 0, 0, unsupportedBound(expr, "a hash partition bound")
	case p.keyword("IN"):
		return 0, 0, unsupportedBound(expr, "a list partition bound")
	case !p.keyword("FROM"):
		return 0, 0, p.syntaxError("FROM")
	}
	if lo, err = p.datum(tt); err != nil {
		return 0, 0, err
	}
	if !p.keyword("TO") {
		return 0, 0, p.syntaxError("TO")
	}
	if hi, err = p.datum(tt); err != nil {
		return 0, 0, err
	}
	if !p.atEnd() {
		return 0, 0, p.syntaxError("the end")
	}
	if lo >= hi {
		return 0, 0, fmt.Errorf("partition bound %q: empty range", expr)
	}
	return lo, hi, nil
}

func unsupportedBound(expr, what string) error {
	return fmt.Errorf("partition bound %q is %s (%w)", expr, what, ErrUnsupportedBound)
}

// boundScanner reads a partition bound expression.
type boundScanner struct {
	s string
	i int
}

func (p *boundScanner) skipSpace() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n' || p.s[p.i] == '\r') {
		p.i++
	}
}

func (p *boundScanner) atEnd() bool {
	p.skipSpace()
	return p.i == len(p.s)
}

// keyword consumes the word k (any case) when it comes next.
func (p *boundScanner) keyword(k string) bool {
	p.skipSpace()
	j := p.i + len(k)
	if j > len(p.s) || !strings.EqualFold(p.s[p.i:j], k) {
		return false
	}
	if j < len(p.s) && isWordByte(p.s[j]) {
		return false
	}
	p.i = j
	return true
}

// punct consumes the byte c when it comes next.
func (p *boundScanner) punct(c byte) bool {
	p.skipSpace()
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func (p *boundScanner) syntaxError(want string) error {
	return fmt.Errorf("partition bound %q: expected %s at byte %d", p.s, want, p.i)
}

// datum reads "(" value ")" and returns the value in micros.
func (p *boundScanner) datum(tt TimeType) (int64, error) {
	if !p.punct('(') {
		return 0, p.syntaxError("(")
	}
	if p.keyword("MINVALUE") || p.keyword("MAXVALUE") {
		return 0, unsupportedBound(p.s, "an unbounded range (MINVALUE or MAXVALUE)")
	}
	v, err := p.value(tt)
	if err != nil {
		return 0, err
	}
	if p.punct(',') {
		return 0, unsupportedBound(p.s, "on more than one column")
	}
	if !p.punct(')') {
		return 0, p.syntaxError(")")
	}
	return v, nil
}

// value reads one literal: a quoted date or timestamp, optionally typed
// as BoundLiteral writes it, or an integer, quoted or not.
func (p *boundScanner) value(tt TimeType) (int64, error) {
	switch tt {
	case Timestamptz, Timestamp, Date:
		p.keyword(tt.String())
	}
	p.skipSpace()
	quoted := p.i < len(p.s) && p.s[p.i] == '\''
	start, end := p.i, p.i
	if quoted {
		start++
		n := strings.IndexByte(p.s[start:], '\'')
		if n < 0 {
			return 0, p.syntaxError("a closing quote")
		}
		end = start + n
		p.i = end + 1
		if p.i < len(p.s) && p.s[p.i] == '\'' {
			return 0, p.valueError(p.s[start:], errQuote)
		}
	} else {
		for end < len(p.s) && (isWordByte(p.s[end]) || p.s[end] == '-' && end == start) {
			end++
		}
		p.i = end
	}
	text := p.s[start:end]
	var (
		v   int64
		err error
	)
	switch tt {
	case Timestamptz, Timestamp:
		if !quoted {
			return 0, p.syntaxError("a quoted timestamp")
		}
		v, err = parseTimestamp(text, tt == Timestamptz)
	case Date:
		if !quoted {
			return 0, p.syntaxError("a quoted date")
		}
		v, err = parseDate(text)
	default:
		v, err = parseEpoch(text, tt.unit())
	}
	if err != nil {
		return 0, p.valueError(text, err)
	}
	if v < MinMicros || v > MaxMicros {
		return 0, fmt.Errorf("partition bound %q: %q is %w", p.s, text, ErrOutOfRange)
	}
	return v, nil
}

// valueError reports a bad literal text, given the static error of a
// value parser (static so that parsing allocates nothing until it fails).
func (p *boundScanner) valueError(text string, err error) error {
	switch err {
	case errValueRange:
		return fmt.Errorf("partition bound %q: %q is %w", p.s, text, ErrOutOfRange)
	case errValueInfinity:
		return unsupportedBound(p.s, "infinite")
	}
	return fmt.Errorf("partition bound %q: %q %v", p.s, text, err)
}

// Static errors of the value parsers, completed by valueError.
var (
	errValueRange    = errors.New("is out of range")
	errValueInfinity = errors.New("is infinite")
	errQuote         = errors.New("has a quote inside")
	errNotTimestamp  = errors.New("is not a timestamp in ISO format (YYYY-MM-DD HH:MM:SS[.ffffff][+HH[:MM[:SS]]][ BC], DateStyle ISO)")
	errNotDate       = errors.New("is not a date in ISO format (YYYY-MM-DD[ BC], DateStyle ISO)")
	errNoOffset      = errors.New("has no UTC offset (+00), which a timestamptz bound always has")
	errOffset        = errors.New("has a UTC offset, which a timestamp without time zone bound never has")
	errNotInteger    = errors.New("is not an integer")
)

// isoReader reads the fields of a date or timestamp text.
type isoReader struct {
	s string
	i int
}

// digits reads between min and max decimal digits, and their count.
func (r *isoReader) digits(min, max int) (v int64, n int, ok bool) {
	for n < max && r.i < len(r.s) && r.s[r.i] >= '0' && r.s[r.i] <= '9' {
		v = v*10 + int64(r.s[r.i]-'0')
		r.i++
		n++
	}
	return v, n, n >= min
}

func (r *isoReader) byte(c byte) bool {
	if r.i < len(r.s) && r.s[r.i] == c {
		r.i++
		return true
	}
	return false
}

// maxYearDigits keeps the day count of any parsed date far from overflow
// (years up to 99999, well past PostgreSQL's 294276 AD for dates being out
// of range anyway).
const maxYearDigits = 5

// date reads YYYY-MM-DD. The day is checked against the month by era,
// once the year is known to be AD or BC.
func (r *isoReader) date() (y, m, d int64, err error) {
	y, n, ok := r.digits(4, maxYearDigits+1)
	if !ok || !r.byte('-') {
		return 0, 0, 0, errNotTimestamp
	}
	if n > maxYearDigits {
		return 0, 0, 0, errValueRange
	}
	var ok1, ok2 bool
	m, _, ok1 = r.digits(2, 2)
	if !r.byte('-') {
		return 0, 0, 0, errNotTimestamp
	}
	d, _, ok2 = r.digits(2, 2)
	if !ok1 || !ok2 || y == 0 || m < 1 || m > 12 || d < 1 || d > 31 {
		return 0, 0, 0, errNotTimestamp
	}
	return y, m, d, nil
}

// era reads the rest of the text, an optional " BC", and returns the
// astronomical year of y (1 BC is year 0, a leap year), and whether the
// day d exists in month m of that year.
func (r *isoReader) era(y, m, d int64) (int64, bool) {
	switch r.s[r.i:] {
	case "":
	case " BC":
		r.i = len(r.s)
		y = 1 - y
	default:
		return 0, false
	}
	return y, d <= daysIn(y, m)
}

// parseDate parses PostgreSQL's ISO date output (2019-01-07, 0044-03-15
// BC) to micros.
func parseDate(s string) (int64, error) {
	if s == "infinity" || s == "-infinity" {
		return 0, errValueInfinity
	}
	r := isoReader{s: s}
	y, m, d, err := r.date()
	if err == errNotTimestamp {
		return 0, errNotDate
	} else if err != nil {
		return 0, err
	}
	y, ok := r.era(y, m, d)
	if !ok {
		return 0, errNotDate
	}
	return unixDays(y, m, d) * dayMicros, nil
}

// parseTimestamp parses PostgreSQL's ISO timestamp output
// (2019-01-07 00:00:00.5+00, 0001-12-01 05:53:28+05:53:28 BC) to micros
// in UTC; zone says whether a UTC offset is required (timestamptz) or
// refused (timestamp).
func parseTimestamp(s string, zone bool) (int64, error) {
	if s == "infinity" || s == "-infinity" {
		return 0, errValueInfinity
	}
	r := isoReader{s: s}
	y, m, d, err := r.date()
	if err != nil {
		return 0, err
	}
	if !r.byte(' ') {
		return 0, errNotTimestamp
	}
	hh, _, ok1 := r.digits(2, 2)
	ok2 := r.byte(':')
	mm, _, ok3 := r.digits(2, 2)
	ok4 := r.byte(':')
	ss, _, ok5 := r.digits(2, 2)
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || hh > 23 || mm > 59 || ss > 59 {
		return 0, errNotTimestamp
	}
	tod := hh*hourMicros + mm*minuteMicros + ss*secondMicros
	if r.byte('.') {
		f, n, ok := r.digits(1, 6)
		if !ok {
			return 0, errNotTimestamp
		}
		for ; n < 6; n++ {
			f *= 10
		}
		tod += f
	}
	var offset int64
	if r.i < len(r.s) && (r.s[r.i] == '+' || r.s[r.i] == '-') {
		if !zone {
			return 0, errOffset
		}
		sign := int64(1)
		if r.s[r.i] == '-' {
			sign = -1
		}
		r.i++
		oh, _, ok := r.digits(2, 2)
		var om, os int64
		if ok && r.byte(':') {
			om, _, ok = r.digits(2, 2)
			if ok && r.byte(':') {
				os, _, ok = r.digits(2, 2)
			}
		}
		// PostgreSQL's UTC offsets are under 16 hours.
		if !ok || oh > 15 || om > 59 || os > 59 {
			return 0, errNotTimestamp
		}
		offset = sign * (oh*hourMicros + om*minuteMicros + os*secondMicros)
	} else if zone {
		if r.i < len(r.s) && r.s[r.i:] != " BC" {
			return 0, errNotTimestamp
		}
		return 0, errNoOffset
	}
	y, ok := r.era(y, m, d)
	if !ok {
		return 0, errNotTimestamp
	}
	// Local time minus its offset is UTC.
	return unixDays(y, m, d)*dayMicros + tod - offset, nil
}

// parseEpoch parses a decimal integer in the given unit to micros.
func parseEpoch(s string, unit int64) (int64, error) {
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, errValueRange
		}
		return 0, errNotInteger
	}
	if v > MaxMicros/unit || v < MinMicros/unit {
		return 0, errValueRange
	}
	return v * unit, nil
}
