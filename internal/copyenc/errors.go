package copyenc

import (
	"errors"
	"strconv"
	"unicode/utf8"
)

// maxQuoted is how many bytes of a rejected value a ValueError keeps.
const maxQuoted = 64

// ValueError reports a field whose text is not a valid value of its
// column's type. The row it belongs to can be rejected on its own; the
// rest of the input is unaffected.
type ValueError struct {
	Type   string // the column type, as format_type() spells it
	Value  string // the rejected text, cut to about 64 bytes ("..." marks a cut)
	Reason string // why, e.g. "out of range for type integer"
}

func (e *ValueError) Error() string {
	return "invalid input for type " + e.Type + ": " + strconv.Quote(e.Value) + " (" + e.Reason + ")"
}

// IsValueError reports whether err is, or wraps, a *ValueError: the input
// value was bad, as opposed to a failure of the loader or the server.
func IsValueError(err error) bool {
	var ve *ValueError
	return errors.As(err, &ve)
}

// ErrNoBinaryCodec is returned by the AppendBinary of TextPassthrough: the
// column's type has no binary encoder here, so the table must be loaded
// with text COPY.
var ErrNoBinaryCodec = errors.New("copyenc: column type has no binary COPY codec; use text COPY")

// valueError builds the error for text; it copies (a prefix of) text, so
// the caller's buffer is not retained.
func valueError(typ string, text []byte, reason string) *ValueError {
	return &ValueError{Type: typ, Value: quotePrefix(text), Reason: reason}
}

// quotePrefix returns text cut to at most maxQuoted bytes, on a UTF-8
// boundary where the text is UTF-8.
func quotePrefix(text []byte) string {
	if len(text) <= maxQuoted {
		return string(text)
	}
	n := maxQuoted
	for n > maxQuoted-utf8.UTFMax && !utf8.RuneStart(text[n]) {
		n--
	}
	return string(text[:n]) + "..."
}
