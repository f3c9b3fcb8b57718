package serve

import (
	"bytes"
	"fmt"
	"strings"
)

// keyLines maps the keys of a TOML document to the 1-based line where
// each is set, spelt as Validate names them: "max-memory",
// "statsd.flush-interval", "ds[1]" (the header of the second [[ds]]),
// "ds[1].step". It is a light scan, not a TOML parser: it knows table
// headers, arrays of tables, "key = value" lines and values spanning
// lines inside brackets or triple quotes, which is all a configuration
// file holds; the decoder has already refused anything malformed.
func keyLines(data []byte) map[string]int {
	lines := map[string]int{}
	arrays := map[string]int{} // array-of-tables name → count so far
	prefix := ""
	depth := 0  // open brackets of a value spanning lines
	multi := "" // the open triple quote of a multi-line string
	for i, raw := range bytes.Split(data, []byte("\n")) {
		n := i + 1
		line := string(raw)
		if multi != "" {
			if strings.Contains(line, multi) {
				multi = ""
			}
			continue
		}
		if depth > 0 {
			depth += bracketDepth(line)
			continue
		}
		t := strings.TrimSpace(line)
		switch {
		case t == "" || t[0] == '#':
		case strings.HasPrefix(t, "[["):
			name := tableName(t[2:], "]]")
			key := fmt.Sprintf("%s[%d]", name, arrays[name])
			arrays[name]++
			prefix = key + "."
			setLine(lines, key, n)
		case t[0] == '[':
			name := tableName(t[1:], "]")
			prefix = name + "."
			setLine(lines, name, n)
		default:
			k, v, ok := strings.Cut(t, "=")
			if !ok {
				continue
			}
			setLine(lines, prefix+unquoteKey(strings.TrimSpace(k)), n)
			v = strings.TrimSpace(v)
			for _, q := range []string{`"""`, `'''`} {
				if strings.HasPrefix(v, q) && !strings.Contains(v[3:], q) {
					multi = q
				}
			}
			if multi == "" {
				depth = bracketDepth(v)
			}
		}
	}
	return lines
}

func setLine(lines map[string]int, key string, n int) {
	if _, ok := lines[key]; !ok {
		lines[key] = n
	}
}

func tableName(s, end string) string {
	if i := strings.Index(s, end); i >= 0 {
		s = s[:i]
	}
	parts := strings.Split(s, ".")
	for i, p := range parts {
		parts[i] = unquoteKey(strings.TrimSpace(p))
	}
	return strings.Join(parts, ".")
}

func unquoteKey(k string) string {
	if len(k) >= 2 && (k[0] == '"' || k[0] == '\'') && k[len(k)-1] == k[0] {
		return k[1 : len(k)-1]
	}
	return k
}

// bracketDepth returns how many more brackets s opens than it closes,
// outside strings and comments.
func bracketDepth(s string) int {
	d := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' && quote == '"' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '#':
			return d
		case c == '[' || c == '{':
			d++
		case c == ']' || c == '}':
			d--
		}
	}
	return d
}
