package copyenc

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

const (
	// maxFieldLen is the largest field PostgreSQL accepts (MaxAllocSize).
	maxFieldLen = 1<<30 - 1
	// nameDataLen is NAMEDATALEN: a name holds at most 63 bytes.
	nameDataLen = 64
)

// parseBool reads a boolean as boolin does: optional white space around
// any case of t, true, y, yes, on, 1 (true) or f, false, n, no, off, 0
// (false), or a unique prefix of the words ("tr", "of"; "o" is not unique).
func parseBool(text []byte) (bool, string) {
	s := trimSpace(text)
	if len(s) == 0 {
		return false, "not a boolean"
	}
	switch lower(s[0]) {
	case 't':
		if prefixFold(s, "true") {
			return true, ""
		}
	case 'f':
		if prefixFold(s, "false") {
			return false, ""
		}
	case 'y':
		if prefixFold(s, "yes") {
			return true, ""
		}
	case 'n':
		if prefixFold(s, "no") {
			return false, ""
		}
	case 'o':
		if len(s) >= 2 && prefixFold(s, "on") {
			return true, ""
		}
		if len(s) >= 2 && prefixFold(s, "off") {
			return false, ""
		}
	case '1':
		if len(s) == 1 {
			return true, ""
		}
	case '0':
		if len(s) == 1 {
			return false, ""
		}
	}
	return false, "not a boolean"
}

// lower returns c in lower case if it is an ASCII letter.
func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// prefixFold reports whether s is a prefix of word, ignoring ASCII case.
func prefixFold(s []byte, word string) bool {
	return len(s) <= len(word) && equalFold(s, word[:len(s)])
}

// parseUUID reads a uuid as uuid_in does: 32 hex digits of either case,
// optionally inside braces, with an optional hyphen after any group of
// four digits but the last; no white space.
func parseUUID(s []byte) ([16]byte, string) {
	var u [16]byte
	i := 0
	braces := len(s) > 0 && s[0] == '{'
	if braces {
		i = 1
	}
	for b := range 16 {
		if i+2 > len(s) {
			return u, "not a uuid"
		}
		hi, ok1 := unhex(s[i])
		lo, ok2 := unhex(s[i+1])
		if !ok1 || !ok2 {
			return u, "not a uuid"
		}
		u[b] = hi<<4 | lo
		i += 2
		if b%2 == 1 && b < 15 && i < len(s) && s[i] == '-' {
			i++
		}
	}
	if braces {
		if i >= len(s) || s[i] != '}' {
			return u, "not a uuid"
		}
		i++
	}
	if i != len(s) {
		return u, "not a uuid"
	}
	return u, ""
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// checkString validates the text of a text-like value: PostgreSQL stores
// neither NUL bytes nor invalid UTF-8 (the loader's sessions use
// client_encoding UTF8).
func checkString(text []byte) string {
	switch {
	case len(text) > maxFieldLen:
		return "longer than 1 GB"
	case bytes.IndexByte(text, 0) >= 0:
		return "contains NUL"
	case !utf8.Valid(text):
		return "invalid UTF-8"
	}
	return ""
}

// checkJSON validates json (RFC 8259, as json_in) or, with jsonb, also
// what jsonb_in rejects beyond syntax: the escape \u0000 and unpaired
// UTF-16 surrogate escapes. (json keeps its text as is and accepts both.)
func checkJSON(text []byte, jsonb bool) string {
	if !json.Valid(text) {
		return "not valid JSON"
	}
	if !jsonb {
		return ""
	}
	in := false
	for i := 0; i < len(text); i++ {
		c := text[i]
		if !in {
			if c == '-' || isDigit(c) {
				// jsonb stores numbers as numeric: they must fit one
				j := i + 1
				for j < len(text) && (isDigit(text[j]) || text[j] == '.' || text[j] == 'e' || text[j] == 'E' || text[j] == '+' || text[j] == '-') {
					j++
				}
				if _, r := parseNumeric(text[i:j]); r != "" {
					return "number " + r
				}
				i = j - 1
				continue
			}
			in = c == '"'
			continue
		}
		switch c {
		case '"':
			in = false
		case '\\':
			i++ // valid JSON: an escape is complete
			if text[i] != 'u' {
				continue
			}
			r := hex4(text[i+1 : i+5])
			i += 4
			switch {
			case r == 0:
				return `\u0000 is not allowed in jsonb`
			case 0xDC00 <= r && r <= 0xDFFF:
				return "unpaired Unicode surrogate escape"
			case 0xD800 <= r && r <= 0xDBFF:
				if i+6 >= len(text) || text[i+1] != '\\' || text[i+2] != 'u' {
					return "unpaired Unicode surrogate escape"
				}
				if lo := hex4(text[i+3 : i+7]); lo < 0xDC00 || lo > 0xDFFF {
					return "unpaired Unicode surrogate escape"
				}
				i += 6
			}
		}
	}
	return ""
}

// hex4 decodes four hex digits (already validated as JSON).
func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		d, _ := unhex(c)
		r = r<<4 | rune(d)
	}
	return r
}
