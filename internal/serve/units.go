package serve

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Duration is a time.Duration written in the configuration file as a Go
// duration string: "10s", "1m30s", "2h".
type Duration time.Duration

// UnmarshalText parses a Go duration string.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("duration %q: want a number and a unit, as in \"10s\" or \"5m\"", b)
	}
	*d = Duration(v)
	return nil
}

// MarshalText writes d as time.Duration's String.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// Size is a number of bytes, written in the configuration file as an
// integer or a string with a binary unit: 65536, "64KiB", "32MB" (units
// are powers of 1024: B, kB/KB/KiB, MB/MiB, GB/GiB).
type Size int64

// UnmarshalTOML accepts an integer or a size string.
func (s *Size) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case int64:
		if x < 0 {
			return fmt.Errorf("size %d: negative", x)
		}
		*s = Size(x)
		return nil
	case string:
		n, err := parseSize(x)
		if err != nil {
			return err
		}
		*s = Size(n)
		return nil
	default:
		return fmt.Errorf("size %v: want an integer or a string such as \"64KiB\"", v)
	}
}

// MarshalText writes s in bytes.
func (s Size) MarshalText() ([]byte, error) { return []byte(strconv.FormatInt(int64(s), 10)), nil }

// String writes s with the largest binary unit dividing it.
func (s Size) String() string {
	for _, u := range []struct {
		name string
		n    int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if s != 0 && int64(s)%u.n == 0 {
			return fmt.Sprintf("%d%s", int64(s)/u.n, u.name)
		}
	}
	return fmt.Sprintf("%dB", int64(s))
}

func parseSize(text string) (int64, error) {
	t := strings.TrimSpace(text)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: want a number of bytes and an optional unit (B, KiB, MiB, GiB)", text)
	}
	var mul int64
	switch strings.ToLower(strings.TrimSpace(t[i:])) {
	case "", "b":
		mul = 1
	case "k", "kb", "kib":
		mul = 1 << 10
	case "m", "mb", "mib":
		mul = 1 << 20
	case "g", "gb", "gib":
		mul = 1 << 30
	default:
		return 0, fmt.Errorf("size %q: unknown unit %q (use B, KiB, MiB or GiB)", text, t[i:])
	}
	if n > math.MaxInt64/mul {
		return 0, fmt.Errorf("size %q: too large", text)
	}
	return n * mul, nil
}
