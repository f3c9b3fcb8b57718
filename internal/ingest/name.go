package ingest

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ValidName reports whether name may be a metric name under l: 1 to
// l.MaxNameBytes bytes of printable ASCII without spaces (0x21 to 0x7e),
// plus, when l.AllowUTF8 is set, UTF-8 encoded letters, marks, numbers,
// punctuation and symbols. The error wraps ErrName and names the first
// bad byte and its offset.
func ValidName(name string, l Limits) error {
	if name == "" {
		return fmt.Errorf("%w: empty", ErrName)
	}
	if len(name) > l.MaxNameBytes {
		return fmt.Errorf("%w %s: %d bytes, over the limit of %d", ErrName, Clip(name), len(name), l.MaxNameBytes)
	}
	if i, c := badNameByte(name, l.AllowUTF8); i >= 0 {
		return fmt.Errorf("%w %s: %s at offset %d is not allowed", ErrName, Clip(name), describeByte(name, i, c), i)
	}
	return nil
}

// ValidTag reports whether key=value may be a tag under l. The key
// follows the rules of ValidName with l.MaxTagBytes as its bound. The
// value is 1 to l.MaxTagBytes bytes of valid UTF-8 without control
// characters; spaces are allowed. The error wraps ErrTag.
func ValidTag(key, value string, l Limits) error {
	switch {
	case key == "":
		return fmt.Errorf("%w: empty key", ErrTag)
	case len(key) > l.MaxTagBytes:
		return fmt.Errorf("%w: key %s: %d bytes, over the limit of %d", ErrTag, Clip(key), len(key), l.MaxTagBytes)
	case value == "":
		return fmt.Errorf("%w %s: empty value", ErrTag, Clip(key))
	case len(value) > l.MaxTagBytes:
		return fmt.Errorf("%w %s: value %s: %d bytes, over the limit of %d", ErrTag, Clip(key), Clip(value), len(value), l.MaxTagBytes)
	}
	if i, c := badNameByte(key, l.AllowUTF8); i >= 0 {
		return fmt.Errorf("%w: key %s: %s at offset %d is not allowed", ErrTag, Clip(key), describeByte(key, i, c), i)
	}
	if i, c := badValueByte(value); i >= 0 {
		return fmt.Errorf("%w %s: value %s: %s at offset %d is not allowed", ErrTag, Clip(key), Clip(value), describeByte(value, i, c), i)
	}
	return nil
}

// SortTags sorts tags by key in place and refuses duplicate keys with an
// error wrapping ErrTag. It does not allocate.
func SortTags(tags []Tag) error {
	if len(tags) < 2 {
		return nil
	}
	if len(tags) <= 12 {
		// Insertion sort: tags usually arrive sorted or nearly so.
		for i := 1; i < len(tags); i++ {
			for j := i; j > 0 && tags[j].Key < tags[j-1].Key; j-- {
				tags[j], tags[j-1] = tags[j-1], tags[j]
			}
		}
	} else {
		slices.SortFunc(tags, func(a, b Tag) int { return strings.Compare(a.Key, b.Key) })
	}
	for i := 1; i < len(tags); i++ {
		if tags[i].Key == tags[i-1].Key {
			return fmt.Errorf("%w: duplicate key %s", ErrTag, Clip(tags[i].Key))
		}
	}
	return nil
}

// badNameByte returns the offset and first byte of the first character
// of s not allowed in a name, or -1.
func badNameByte(s string, allowUTF8 bool) (int, byte) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c > ' ' && c < 0x7f {
			continue
		}
		if c < utf8.RuneSelf || !allowUTF8 {
			return i, c
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || !unicode.IsGraphic(r) || unicode.IsSpace(r) {
			return i, c
		}
		i += size - 1
	}
	return -1, 0
}

// badValueByte returns the offset and first byte of the first character
// of s not allowed in a tag value, or -1: control characters and invalid
// UTF-8.
func badValueByte(s string) (int, byte) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= ' ' && c < 0x7f {
			continue
		}
		if c < utf8.RuneSelf {
			return i, c
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || unicode.IsControl(r) {
			return i, c
		}
		i += size - 1
	}
	return -1, 0
}

// describeByte names the character starting at s[i] (whose first byte
// is c) for an error message: 'x' (0x78), or the byte alone when it does
// not start a valid UTF-8 sequence.
func describeByte(s string, i int, c byte) string {
	if c < utf8.RuneSelf {
		return fmt.Sprintf("byte %q (%#02x)", rune(c), c)
	}
	if r, _ := utf8.DecodeRuneInString(s[i:]); r != utf8.RuneError {
		return fmt.Sprintf("character %q (%U)", r, r)
	}
	return fmt.Sprintf("byte %#02x (invalid UTF-8)", c)
}

// ValidNameBytes is ValidName for a name held in a byte slice; it does
// not copy b unless it returns an error.
func ValidNameBytes(b []byte, l Limits) error {
	return ValidName(bytesString(b), l)
}

// ValidTagBytes is ValidTag for a tag held in byte slices; it does not
// copy them unless it returns an error.
func ValidTagBytes(key, value []byte, l Limits) error {
	return ValidTag(bytesString(key), bytesString(value), l)
}

// ValidPoint reports whether p satisfies everything a parser guarantees
// under l: a valid name, at most l.MaxTags valid tags sorted by unique
// key, a finite value and a time within [MinTime, MaxTime).
func ValidPoint(p Point, l Limits) error {
	if err := ValidName(p.Name, l); err != nil {
		return err
	}
	if len(p.Tags) > l.MaxTags {
		return fmt.Errorf("%w: %d tags, over the limit of %d", ErrTag, len(p.Tags), l.MaxTags)
	}
	for i, t := range p.Tags {
		if err := ValidTag(t.Key, t.Value, l); err != nil {
			return err
		}
		if i > 0 && p.Tags[i-1].Key >= t.Key {
			return fmt.Errorf("%w: keys %s and %s are not sorted and unique", ErrTag, Clip(p.Tags[i-1].Key), Clip(t.Key))
		}
	}
	if err := CheckValue(p.Value); err != nil {
		return err
	}
	if !InRange(p.Time) {
		return fmt.Errorf("%w %d: outside years 0001 to 9999", ErrTimestamp, p.Time)
	}
	return nil
}
