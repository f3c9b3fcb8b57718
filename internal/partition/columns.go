package partition

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pgts/pgts/internal/pg"
)

// MaxColumnListBytes bounds a --columns list.
const MaxColumnListBytes = 64 << 10

// tableConstraintWords start a table constraint rather than a column.
var tableConstraintWords = map[string]bool{"constraint": true, "primary": true, "unique": true, "check": true, "foreign": true, "exclude": true}

// ColumnList parses a column list in CREATE TABLE syntax ("time timestamptz
// not null, device int, primary key (device, time)") and returns it
// rebuilt: one item per column (name quoted, then its type and
// constraints) or table constraint, joined by ", ". It refuses what could
// leave the column list or hide pgts' own clauses: comments, semicolons,
// unbalanced parentheses or quotes, backslashes and dollar quotes outside
// identifiers (and in string literals), empty items, a column without a type, and LIKE (use --like).
// It never touches a database.
func ColumnList(list string) (string, error) {
	if len(list) > MaxColumnListBytes {
		return "", fmt.Errorf("--columns is %d bytes; at most %d", len(list), MaxColumnListBytes)
	}
	items, err := splitColumns(list)
	if err != nil {
		return "", fmt.Errorf("--columns %q: %w", list, err)
	}
	out := make([]string, 0, len(items))
	for _, it := range items {
		def, err := columnItem(it)
		if err != nil {
			return "", fmt.Errorf("--columns %q: %w", list, err)
		}
		out = append(out, def)
	}
	return strings.Join(out, ", "), nil
}

// splitColumns splits at commas outside quotes and parentheses, checking
// the lexical rules ColumnList lists.
func splitColumns(s string) ([]string, error) {
	var items []string
	depth, start := 0, 0
	var quote byte // ' or " while inside one
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7f {
			return nil, errors.New("contains a control character")
		}
		if quote != 0 {
			if c == '\\' && quote == '\'' {
				// E'' strings (or standard_conforming_strings off) would
				// read it as an escape, and the list's end differently.
				return nil, errors.New("has a backslash in a string literal (not accepted: it could escape the quote)")
			}
			if c == quote {
				if i+1 < len(s) && s[i+1] == quote {
					i++ // a doubled quote stands for itself
					continue
				}
				quote = 0
			}
			continue
		}
		switch c {
		case '\'', '"':
			quote = c
		case '(':
			depth++
		case ')':
			if depth == 0 {
				return nil, errors.New("has a ')' without its '(' (a column list cannot close the table's parenthesis)")
			}
			depth--
		case ';':
			return nil, errors.New("has a ';': give column definitions only, not statements")
		case '\\':
			return nil, errors.New(`has a backslash outside a quoted name (E'' strings are not accepted)`)
		case '$':
			return nil, errors.New("has a '$' outside a quoted name (dollar quoting is not accepted)")
		case '-':
			if i+1 < len(s) && s[i+1] == '-' {
				return nil, errors.New("has a comment (--)")
			}
		case '/':
			if i+1 < len(s) && s[i+1] == '*' {
				return nil, errors.New("has a comment (/*)")
			}
		case ',':
			if depth == 0 {
				items = append(items, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("has an unclosed %c quote", quote)
	}
	if depth != 0 {
		return nil, errors.New("has a '(' without its ')'")
	}
	return append(items, strings.TrimSpace(s[start:])), nil
}

// columnItem checks one item and rebuilds it with its name quoted.
func columnItem(it string) (string, error) {
	if it == "" {
		return "", errors.New("has an empty item (one column per comma-separated item)")
	}
	name, rest, err := leadingName(it)
	if err != nil {
		return "", err
	}
	if !strings.HasPrefix(it, `"`) {
		switch w := strings.ToLower(name); {
		case tableConstraintWords[w]:
			return it, nil
		case w == "like":
			return "", errors.New("LIKE is not a column (use --like TABLE)")
		}
	}
	if rest == "" {
		return "", fmt.Errorf("column %q has no type", name)
	}
	if err := pg.CheckIdent("column", name); err != nil {
		return "", err
	}
	return pg.QuoteIdent(name) + " " + rest, nil
}

// leadingName splits an item into its first word (a double-quoted name
// with doubled quotes undone, or an unquoted name folded to lower case)
// and the rest.
func leadingName(it string) (name, rest string, err error) {
	if strings.HasPrefix(it, `"`) {
		for i := 1; i < len(it); i++ {
			if it[i] != '"' {
				continue
			}
			if i+1 < len(it) && it[i+1] == '"' {
				i++
				continue
			}
			name = strings.ReplaceAll(it[1:i], `""`, `"`)
			if i+1 < len(it) && !isSpace(it[i+1]) {
				return "", "", fmt.Errorf("%q: a quoted column name must be followed by a space and its type", it)
			}
			return name, strings.TrimSpace(it[i+1:]), nil
		}
		return "", "", fmt.Errorf("%q: unclosed quoted name", it)
	}
	end := 0
	for end < len(it) && isNameByte(it[end], end == 0) {
		end++
	}
	if end == 0 || end < len(it) && !isSpace(it[end]) {
		return "", "", fmt.Errorf("%q does not start with a column name (quote names with other characters: \"my col\")", it)
	}
	return strings.ToLower(it[:end]), strings.TrimSpace(it[end:]), nil
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isNameByte(c byte, first bool) bool {
	switch {
	case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80:
		return true
	case c >= '0' && c <= '9':
		return !first
	}
	return false
}
