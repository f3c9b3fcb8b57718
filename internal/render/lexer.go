package render

import (
	"fmt"
	"unicode/utf8"
)

// tokenKind classifies a lexical token of a target expression.
type tokenKind int

const (
	tokEOF    tokenKind = iota
	tokLParen           // (
	tokRParen           // )
	tokComma            // ,
	tokPipe             // |
	tokString           // '...' or "..."; Text holds the raw inner text
	tokWord             // a path expression, name, number or keyword
)

func (k tokenKind) String() string {
	return [...]string{"end of input", "'('", "')'", "','", "'|'", "string", "name"}[k]
}

// token is one lexical unit; Pos is its byte offset in the expression.
type token struct {
	Kind tokenKind
	Pos  int
	Text string
}

// lexer splits a target expression into tokens on demand. Words are runs
// of metric characters: everything printable except ( ) , ' " \ | and
// whitespace, with a comma allowed inside {a,b} and \x escaping one symbol.
// Not safe for concurrent use.
type lexer struct {
	src string
	pos int
}

// ParseError reports a malformed expression and the byte offset where it
// went wrong; HTTP clients receive it verbatim with status 400.
type ParseError struct {
	Pos int    // byte offset into the expression
	Msg string // what was expected or found
}

func (e *ParseError) Error() string {
	return fmt.Sprintf("syntax error at position %d: %s", e.Pos, e.Msg)
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// isWordByte reports whether c may appear unescaped in a word outside braces.
func isWordByte(c byte) bool {
	switch c {
	case '(', ')', ',', '\'', '"', '\\', '|', '{', '}':
		return false
	}
	return c > ' ' && c != 0x7f
}

// next returns the next token, or a *ParseError.
func (l *lexer) next() (token, error) {
	for l.pos < len(l.src) && isSpace(l.src[l.pos]) {
		l.pos++
	}
	start := l.pos
	if l.pos >= len(l.src) {
		return token{Kind: tokEOF, Pos: start}, nil
	}
	switch c := l.src[l.pos]; c {
	case '(':
		l.pos++
		return token{Kind: tokLParen, Pos: start, Text: "("}, nil
	case ')':
		l.pos++
		return token{Kind: tokRParen, Pos: start, Text: ")"}, nil
	case ',':
		l.pos++
		return token{Kind: tokComma, Pos: start, Text: ","}, nil
	case '|':
		l.pos++
		return token{Kind: tokPipe, Pos: start, Text: "|"}, nil
	case '\'', '"':
		return l.str(c)
	}
	return l.word()
}

// str scans a quoted string. Like Graphite, the value is the raw text
// between the quotes: a backslash keeps the next character from closing
// the string but stays in the value (so regex escapes such as "\1" and
// "\d" reach the function unchanged).
func (l *lexer) str(q byte) (token, error) {
	start := l.pos
	l.pos++
	for l.pos < len(l.src) {
		switch c := l.src[l.pos]; {
		case c == q:
			l.pos++
			return token{Kind: tokString, Pos: start, Text: l.src[start+1 : l.pos-1]}, nil
		case c == '\\':
			l.pos += 2
		case c == '\n' || c == '\r':
			return token{}, &ParseError{Pos: l.pos, Msg: "newline in string"}
		default:
			l.pos++
		}
	}
	return token{}, &ParseError{Pos: start, Msg: "unterminated string"}
}

// word scans a path expression or name. Escapes are resolved in Text.
func (l *lexer) word() (token, error) {
	start := l.pos
	var buf []byte
	depth := 0
	for l.pos < len(l.src) {
		c := l.src[l.pos]
		switch {
		case c == '\\':
			if l.pos+1 >= len(l.src) {
				return token{}, &ParseError{Pos: l.pos, Msg: "backslash at end of input"}
			}
			_, size := utf8.DecodeRuneInString(l.src[l.pos+1:])
			buf = append(buf, l.src[l.pos+1:l.pos+1+size]...)
			l.pos += 1 + size
			continue
		case c == '{':
			if depth > 0 {
				return token{}, &ParseError{Pos: l.pos, Msg: "nested '{'"}
			}
			depth++
		case c == '}':
			if depth == 0 {
				return token{}, &ParseError{Pos: l.pos, Msg: "unbalanced '}'"}
			}
			depth--
		case c == ',' && depth > 0:
		case !isWordByte(c):
			if depth > 0 {
				return token{}, &ParseError{Pos: l.pos, Msg: fmt.Sprintf("unexpected %q inside '{...}'", c)}
			}
			if l.pos == start {
				return token{}, &ParseError{Pos: l.pos, Msg: fmt.Sprintf("unexpected %q", c)}
			}
			return token{Kind: tokWord, Pos: start, Text: string(buf)}, nil
		}
		buf = append(buf, c)
		l.pos++
	}
	if depth > 0 {
		return token{}, &ParseError{Pos: len(l.src), Msg: "unterminated '{'"}
	}
	return token{Kind: tokWord, Pos: start, Text: string(buf)}, nil
}
