package partition

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxNameBytes is PostgreSQL's limit on an identifier's length in bytes
// (NAMEDATALEN - 1). A longer name is silently truncated by the server,
// which would make two partitions collide, so names are refused instead.
const maxNameBytes = 63

// nameResolution is how much of a partition's start its name spells.
type nameResolution int

const (
	byDay    nameResolution = iota // _pYYYYMMDD
	byHour                         // _pYYYYMMDD_HH
	byMinute                       // _pYYYYMMDD_HHMM
	bySecond                       // _pYYYYMMDD_HHMMSS
)

// suffixBytes is the length of "_pYYYYMMDD" plus the time of day.
func (r nameResolution) suffixBytes() int {
	return len("_pYYYYMMDD") + [...]int{0, len("_HH"), len("_HHMM"), len("_HHMMSS")}[r]
}

// resolution returns the coarsest resolution that tells iv's partition
// starts apart: days for calendar, weekly and whole-day intervals, else
// hours, minutes or seconds, whichever divides the duration. Invalid
// intervals get seconds, the longest.
func resolution(iv Interval) nameResolution {
	if iv.calendar() {
		return byDay
	}
	d, ok := iv.duration()
	switch {
	case !ok:
		return bySecond
	case d%dayMicros == 0:
		return byDay
	case d%hourMicros == 0:
		return byHour
	case d%minuteMicros == 0:
		return byMinute
	}
	return bySecond
}

// MaxTableNameBytes returns the longest series table name, in bytes, whose
// partition names (and, with hashPartitions > 0, hash sub-partition names
// up to HashName(leaf, hashPartitions-1)) fit in PostgreSQL's 63 bytes
// with the interval iv. An invalid iv is assumed to need the longest
// suffix.
func MaxTableNameBytes(iv Interval, hashPartitions int) int {
	n := maxNameBytes - resolution(iv).suffixBytes()
	if hashPartitions > 0 {
		n -= len("_h") + len(strconv.Itoa(hashPartitions-1))
	}
	return max(n, 0)
}

// Name returns the name of the partition of table that starts at lo:
// table + "_p" + YYYYMMDD, then "_HH", "_HHMM" or "_HHMMSS" when the
// interval is a whole number of hours, minutes or seconds but not of days
// (conditions_p20190107, metrics_p20190107_13). For one table and
// interval, names sort as their start times do. lo must be the start of a
// partition (as returned by Bounds or Next) in the supported range. table
// is any non-empty UTF-8 identifier without NUL, unquoted: the caller
// quotes the result. A name over PostgreSQL's 63 bytes is an error, never
// truncated.
func Name(table string, iv Interval, lo int64) (string, error) {
	if err := checkTableName(table); err != nil {
		return "", err
	}
	start, _, err := Bounds(iv, lo)
	if err != nil {
		return "", fmt.Errorf("naming a partition of %q: %w", table, err)
	}
	if start != lo {
		return "", fmt.Errorf("naming a partition of %q: %d is not the start of a partition of %s intervals (%d is)",
			table, lo, iv, start)
	}
	res := resolution(iv)
	if n := len(table) + res.suffixBytes(); n > maxNameBytes {
		return "", fmt.Errorf("partition names of table %q would be %d bytes; PostgreSQL allows %d, so with interval %q the table name must be at most %d bytes",
			table, n, maxNameBytes, iv.String(), maxNameBytes-res.suffixBytes())
	}
	var buf [maxNameBytes]byte
	b := append(buf[:0], table...)
	b = append(b, "_p"...)
	days := floorDiv(lo, dayMicros)
	y, m, d := civilDate(days)
	b = appendYMD(b, y, m, d, false)
	if res == byDay {
		return string(b), nil
	}
	tod := lo - days*dayMicros
	b = append(b, '_')
	b = append2(b, int(tod/hourMicros))
	if res >= byMinute {
		b = append2(b, int(tod/minuteMicros%60))
	}
	if res == bySecond {
		b = append2(b, int(tod/secondMicros%60))
	}
	return string(b), nil
}

// HashName returns the name of hash sub-partition i of the leaf partition
// named leaf: leaf + "_h" + i. MaxTableNameBytes accounts for the suffix.
func HashName(leaf string, i int) string {
	return leaf + "_h" + strconv.Itoa(i)
}

// checkTableName refuses names PostgreSQL cannot store as identifiers.
func checkTableName(table string) error {
	switch {
	case table == "":
		return errors.New("table name is empty")
	case strings.IndexByte(table, 0) >= 0:
		return fmt.Errorf("table name %q contains a NUL byte", table)
	case !utf8.ValidString(table):
		return fmt.Errorf("table name %q is not valid UTF-8", table)
	}
	return nil
}

// appendYMD appends the date y-m-d as YYYYMMDD, or YYYY-MM-DD when dashes
// is set, with the year (y >= 0) zero-padded to at least four digits.
func appendYMD(b []byte, y, m, d int64, dashes bool) []byte {
	for p := int64(1000); p > 1 && y < p; p /= 10 {
		b = append(b, '0')
	}
	b = strconv.AppendInt(b, y, 10)
	if dashes {
		b = append(b, '-')
	}
	b = append2(b, int(m))
	if dashes {
		b = append(b, '-')
	}
	return append2(b, int(d))
}
