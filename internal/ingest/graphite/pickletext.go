package graphite

import (
	"bytes"
	"unicode/utf8"
)

// quotedString runs STRING: a quoted Python 2 string literal and a
// newline, with the backslash escapes of Python's escape_decode.
func (m *vm) quotedString(at int) error {
	line, err := m.line(at)
	if err != nil {
		return err
	}
	if len(line) < 2 || line[0] != line[len(line)-1] || (line[0] != '\'' && line[0] != '"') {
		return pickleErr(at, "STRING argument must be quoted")
	}
	start := m.pos - len(line) // offset of the body: after the newline and the line, past its quote
	body := line[1 : len(line)-1]
	if bytes.IndexByte(body, '\\') < 0 {
		m.push(value{kind: kStr, a: uint32(start), b: uint32(len(body))})
		return nil
	}
	from := len(m.strBuf)
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c != '\\' {
			m.strBuf = append(m.strBuf, c)
			continue
		}
		i++
		if i == len(body) {
			return pickleErr(at, "STRING ends with a lone backslash")
		}
		c = body[i]
		switch c {
		case '\\', '\'', '"':
			m.strBuf = append(m.strBuf, c)
		case 'a':
			m.strBuf = append(m.strBuf, 7)
		case 'b':
			m.strBuf = append(m.strBuf, 8)
		case 't':
			m.strBuf = append(m.strBuf, 9)
		case 'n':
			m.strBuf = append(m.strBuf, 10)
		case 'v':
			m.strBuf = append(m.strBuf, 11)
		case 'f':
			m.strBuf = append(m.strBuf, 12)
		case 'r':
			m.strBuf = append(m.strBuf, 13)
		case '0', '1', '2', '3', '4', '5', '6', '7':
			v := int(c - '0')
			for k := 0; k < 2 && i+1 < len(body) && body[i+1] >= '0' && body[i+1] <= '7'; k++ {
				i++
				v = v*8 + int(body[i]-'0')
			}
			m.strBuf = append(m.strBuf, byte(v))
		case 'x':
			if i+2 >= len(body) {
				return pickleErr(at, "STRING has a truncated \\x escape")
			}
			hi, ok1 := unhex(body[i+1])
			lo, ok2 := unhex(body[i+2])
			if !ok1 || !ok2 {
				return pickleErr(at, "STRING has an invalid \\x escape")
			}
			m.strBuf = append(m.strBuf, hi<<4|lo)
			i += 2
		default:
			// Python keeps unknown escapes as they are.
			m.strBuf = append(m.strBuf, '\\', c)
		}
	}
	m.push(value{kind: kStrBuf, a: uint32(from), b: uint32(len(m.strBuf) - from)})
	return nil
}

// rawUnicode runs UNICODE: text in Python's raw-unicode-escape codec and
// a newline. Bytes are Latin-1 code points; \uXXXX and \UXXXXXXXX
// escape others, and only when preceded by an odd run of backslashes.
func (m *vm) rawUnicode(at int) error {
	line, err := m.line(at)
	if err != nil {
		return err
	}
	ascii := bytes.IndexByte(line, '\\') < 0
	for _, c := range line {
		if c >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		m.push(value{kind: kStr, a: uint32(m.pos - 1 - len(line)), b: uint32(len(line))})
		return nil
	}
	from := len(m.strBuf)
	for i := 0; i < len(line); {
		c := line[i]
		if c != '\\' {
			m.strBuf = utf8.AppendRune(m.strBuf, rune(c))
			i++
			continue
		}
		run := i
		for i < len(line) && line[i] == '\\' {
			i++
		}
		m.strBuf = append(m.strBuf, line[run:i]...)
		if (i-run)%2 == 0 || i == len(line) || (line[i] != 'u' && line[i] != 'U') {
			continue
		}
		m.strBuf = m.strBuf[:len(m.strBuf)-1] // the escaping backslash
		n := 4
		if line[i] == 'U' {
			n = 8
		}
		i++
		if i+n > len(line) {
			return pickleErr(at, "UNICODE has a truncated \\u escape")
		}
		var r rune
		for _, h := range line[i : i+n] {
			d, ok := unhex(h)
			if !ok {
				return pickleErr(at, "UNICODE has an invalid \\u escape")
			}
			r = r<<4 | rune(d)
		}
		i += n
		if !utf8.ValidRune(r) {
			return pickleErr(at, "UNICODE escape %#x is not a valid code point", r)
		}
		m.strBuf = utf8.AppendRune(m.strBuf, r)
	}
	m.push(value{kind: kStrBuf, a: uint32(from), b: uint32(len(m.strBuf) - from)})
	return nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
