package rra

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Limits of a duration (a step, span or heartbeat).
const (
	// Year is the year of ParseDuration's "y": 365 days, no leap days.
	Year = 365 * 24 * time.Hour
	// MaxDuration is the longest duration accepted: 100 years of 365
	// days.
	MaxDuration = 100 * Year
	// maxDurationText bounds the text ParseDuration reads.
	maxDurationText = 64
)

// durationUnits are ParseDuration's units, longest name first where one
// is a prefix of another ("min" before "m").
var durationUnits = [...]struct {
	name string
	d    time.Duration
}{
	{"min", time.Minute},
	{"s", time.Second},
	{"m", time.Minute},
	{"h", time.Hour},
	{"d", 24 * time.Hour},
	{"w", 7 * 24 * time.Hour},
	{"y", Year},
}

// ParseDuration parses a step, span or heartbeat: a plain number of
// seconds ("3600"), or one or more terms of a whole number and a unit
// ("10s", "1h30m", "2w"). The units are s, m or min (minutes, never
// months), h, d, w and y (365 days). The result is positive, a whole
// number of seconds and at most MaxDuration.
func ParseDuration(s string) (time.Duration, error) {
	d, err := parseDuration(s)
	if err != nil {
		if len(s) > maxDurationText {
			s = s[:maxDurationText] + "..."
		}
		return 0, fmt.Errorf("parsing duration %q: %w", s, err)
	}
	return d, nil
}

func parseDuration(s string) (time.Duration, error) {
	switch {
	case s == "":
		return 0, errors.New("empty")
	case len(s) > maxDurationText:
		return 0, fmt.Errorf("longer than %d bytes", maxDurationText)
	}
	var total time.Duration
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j == i {
			return 0, fmt.Errorf("unexpected %q: want whole numbers, each followed by a unit (s, m, min, h, d, w, y)", s[i:])
		}
		n, err := strconv.ParseInt(s[i:j], 10, 64)
		if err != nil || n > int64(MaxDuration/time.Second) {
			return 0, errors.New("over 100 years")
		}
		unit := time.Second
		if j == len(s) {
			if i != 0 {
				return 0, fmt.Errorf("number %q has no unit", s[i:j])
			}
		} else {
			k := -1
			for u := range durationUnits {
				name := durationUnits[u].name
				if len(s)-j >= len(name) && s[j:j+len(name)] == name {
					k = u
					break
				}
			}
			if k < 0 {
				return 0, fmt.Errorf("unknown unit at %q (want s, m, min, h, d, w or y)", s[j:])
			}
			unit = durationUnits[k].d
			j += len(durationUnits[k].name)
		}
		// Checked against the room left, n*unit cannot overflow.
		if time.Duration(n) > (MaxDuration-total)/unit {
			return 0, errors.New("over 100 years")
		}
		total += time.Duration(n) * unit
		i = j
	}
	if total == 0 {
		return 0, errors.New("zero")
	}
	return total, nil
}

// checkDuration reports what is wrong with d as a step, span or
// heartbeat, or nil.
func checkDuration(d time.Duration) error {
	switch {
	case d <= 0:
		return errors.New("not positive")
	case d%time.Second != 0:
		return errors.New("not a whole number of seconds")
	case d > MaxDuration:
		return errors.New("over 100 years")
	}
	return nil
}

// FormatDuration writes d in ParseDuration's syntax with the largest unit
// that divides it exactly ("90s", "6h", "30d", "1y"); durations that are
// not whole seconds fall back to time.Duration's String.
func FormatDuration(d time.Duration) string {
	if d <= 0 || d%time.Second != 0 {
		return d.String()
	}
	for _, u := range [...]struct {
		name string
		d    time.Duration
	}{{"y", Year}, {"w", 7 * 24 * time.Hour}, {"d", 24 * time.Hour}, {"h", time.Hour}, {"m", time.Minute}} {
		if d%u.d == 0 {
			return strconv.FormatInt(int64(d/u.d), 10) + u.name
		}
	}
	return strconv.FormatInt(int64(d/time.Second), 10) + "s"
}
