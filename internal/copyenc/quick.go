package copyenc

import (
	"encoding/binary"
	"math"
)

// Quick names the one-pass reader a binary load may use for a column's
// plain spellings before its codec's general reader: an integer of a few
// digits, a decimal whose digits are exact in the type. A loader looks it
// up once per column (QuickOf) and writes each field with
// BinaryWriter.AppendQuick, which calls the codec only for what the quick
// reader leaves undecided; the bytes written are those Field writes.
type Quick uint8

const (
	QuickNone Quick = iota // the codec reads every value
	QuickInt2
	QuickInt4
	QuickInt8
	QuickFloat4
	QuickFloat8
)

// QuickOf returns the quick reader of codec c, QuickNone when it has none.
func QuickOf(c Codec) Quick {
	sc, ok := c.(*scalarCodec)
	if !ok {
		return QuickNone
	}
	switch sc.kind {
	case kindInt2:
		return QuickInt2
	case kindInt4:
		return QuickInt4
	case kindInt8:
		return QuickInt8
	case kindFloat4:
		return QuickFloat4
	case kindFloat8:
		return QuickFloat8
	}
	return QuickNone
}

// AppendQuick appends the field for text when q's one-pass reader decides
// it, and reports whether it did; false appends nothing, and the caller
// writes the field with Field (which then reads it, or refuses it).
func (w *BinaryWriter) AppendQuick(q Quick, text []byte) bool {
	switch q {
	case QuickInt2, QuickInt4, QuickInt8:
		// Digits few enough that no value overflows the type.
		k, digits := kindInt8, 18
		switch q {
		case QuickInt2:
			k, digits = kindInt2, 4
		case QuickInt4:
			k, digits = kindInt4, 9
		}
		v, ok := quickInt(text, digits)
		if !ok {
			return false
		}
		w.buf = appendIntField(w.buf, v, k)
	case QuickFloat4:
		v, ok := fastFloat(text, true)
		if !ok {
			return false
		}
		w.buf = append(w.buf, 0, 0, 0, 4)
		w.buf = binary.BigEndian.AppendUint32(w.buf, math.Float32bits(float32(v)))
	case QuickFloat8:
		v, ok := fastFloat(text, false)
		if !ok {
			return false
		}
		w.buf = append(w.buf, 0, 0, 0, 8)
		w.buf = binary.BigEndian.AppendUint64(w.buf, math.Float64bits(v))
	default:
		return false
	}
	return true
}

// quickInt reads [+-]digits of 1 to maxDigits digits, which cannot
// overflow the type the caller picked maxDigits for (no division, unlike
// parseInt's range check); false for anything else, spaces included,
// which parseInt then decides.
func quickInt(s []byte, maxDigits int) (int64, bool) {
	neg := false
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		neg, s = s[0] == '-', s[1:]
	}
	if len(s) == 0 || len(s) > maxDigits {
		return 0, false
	}
	var v int64
	for _, c := range s {
		d := c - '0'
		if d > 9 {
			return 0, false
		}
		v = v*10 + int64(d)
	}
	if neg {
		v = -v
	}
	return v, true
}
