package pg

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxIdentifierBytes is PostgreSQL's NAMEDATALEN-1: longer names are
// silently truncated by the server, so pgts refuses them instead.
const MaxIdentifierBytes = 63

// QuoteIdent quotes an identifier for SQL, doubling embedded quotes. Every
// name pgts puts into SQL text goes through it (or through QuoteQualified).
func QuoteIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// QuoteQualified quotes schema.name; an empty schema yields just the name.
func QuoteQualified(schema, name string) string {
	if schema == "" {
		return QuoteIdent(name)
	}
	return QuoteIdent(schema) + "." + QuoteIdent(name)
}

// QuoteLiteral quotes a string literal, doubling quotes and using the E”
// form when backslashes are present.
func QuoteLiteral(s string) string {
	q := "'" + strings.ReplaceAll(s, "'", "''") + "'"
	if strings.Contains(s, `\`) {
		return "E" + strings.ReplaceAll(q, `\`, `\\`)
	}
	return q
}

// CheckIdent rejects names PostgreSQL could not store as given: empty,
// longer than 63 bytes (the server would truncate them), invalid UTF-8 or
// containing a NUL or other control character.
func CheckIdent(what, name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%s name is empty", what)
	case len(name) > MaxIdentifierBytes:
		return fmt.Errorf("%s name %q is %d bytes; PostgreSQL allows at most %d", what, name, len(name), MaxIdentifierBytes)
	case !utf8.ValidString(name):
		return fmt.Errorf("%s name %q is not valid UTF-8", what, name)
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("%s name %q contains a control character", what, name)
		}
	}
	return nil
}

// SplitQualified splits "schema.table" into its parts. Double-quoted parts
// may contain dots and doubled quotes ("my.schema"."t""x"); unquoted parts
// are folded to lower case as PostgreSQL does. A name without a schema
// returns schema "".
func SplitQualified(s string) (schema, name string, err error) {
	return splitQualified("table", s)
}

// ColumnName parses one column name: double-quoted (doubled quotes
// allowed) or unquoted, folded to lower case as PostgreSQL does.
func ColumnName(s string) (string, error) {
	if s == "" {
		return "", fmt.Errorf("column name is empty")
	}
	schema, name, err := splitQualified("column", s)
	if err != nil {
		return "", err
	}
	if schema != "" {
		return "", fmt.Errorf("column name %q has 2 parts; give the column alone (quote a name with a dot: \"a.b\")", s)
	}
	return name, nil
}

// splitQualified is SplitQualified with what (table, column) named in its
// errors.
func splitQualified(what, s string) (schema, name string, err error) {
	if s == "" {
		return "", "", fmt.Errorf("%s name is empty", what)
	}
	var parts []string
	for i := 0; i <= len(s); {
		if i == len(s) {
			return "", "", fmt.Errorf(what+" name %q ends with a dot", s)
		}
		var part string
		if s[i] == '"' {
			var b strings.Builder
			j := i + 1
			for {
				if j >= len(s) {
					return "", "", fmt.Errorf(what+" name %q has an unterminated quote", s)
				}
				if s[j] == '"' {
					if j+1 < len(s) && s[j+1] == '"' {
						b.WriteByte('"')
						j += 2
						continue
					}
					break
				}
				b.WriteByte(s[j])
				j++
			}
			part = b.String()
			i = j + 1
		} else {
			j := strings.IndexByte(s[i:], '.')
			if j < 0 {
				j = len(s) - i
			}
			part = s[i : i+j]
			if strings.ContainsRune(part, '"') {
				return "", "", fmt.Errorf(what+" name %q: a quote may only open a part", s)
			}
			part = strings.ToLower(part)
			i += j
		}
		if part == "" {
			return "", "", fmt.Errorf(what+" name %q has an empty part", s)
		}
		parts = append(parts, part)
		if i == len(s) {
			break
		}
		if s[i] != '.' {
			return "", "", fmt.Errorf(what+" name %q: unexpected %q after a quoted part", s, s[i])
		}
		i++
	}
	switch len(parts) {
	case 1:
		return "", parts[0], nil
	case 2:
		return parts[0], parts[1], nil
	default:
		return "", "", fmt.Errorf(what+" name %q has %d parts; use table or schema.table", s, len(parts))
	}
}
