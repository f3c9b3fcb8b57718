package tsstore

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Limits of a Graphite glob pattern.
const (
	maxGlobBytes = 4096
	maxGlobNest  = 8
)

// ErrPattern is wrapped by the errors of malformed Find patterns.
var ErrPattern = errors.New("invalid pattern")

// glob is a compiled Graphite path pattern: dot-separated nodes, each a
// literal with wildcards:
//
//   - any run of characters within a node
//     ?      one character within a node
//     [a-z]  one character of a class ([!a-z] or [^a-z]: not of it)
//     {a,b}  one of the alternatives, themselves patterns within a node
//
// Wildcards never match a dot, so a pattern of N nodes matches paths of N
// nodes.
type glob struct {
	re    *regexp.Regexp
	nodes int // the number of dot-separated nodes
}

// compileGlob compiles a Graphite pattern.
func compileGlob(pattern string) (*glob, error) {
	if pattern == "" {
		return nil, fmt.Errorf("%w: empty", ErrPattern)
	}
	if len(pattern) > maxGlobBytes {
		return nil, fmt.Errorf("%w: %d bytes, more than %d", ErrPattern, len(pattern), maxGlobBytes)
	}
	var b strings.Builder
	b.WriteString(`^`)
	c := globCompiler{src: pattern}
	if err := c.node(&b, 0); err != nil {
		return nil, fmt.Errorf("%w %q: %v", ErrPattern, clip(pattern), err)
	}
	b.WriteString(`$`)
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, fmt.Errorf("%w %q: %v", ErrPattern, clip(pattern), err)
	}
	return &glob{re: re, nodes: strings.Count(pattern, ".") + 1}, nil
}

// nodeMatcher matches one node of a pattern: literal when re is nil.
type nodeMatcher struct {
	literal string
	re      *regexp.Regexp
}

// compileNodes compiles a Graphite pattern into one matcher per node, for
// walking the tree of names: a node without wildcards is a literal.
// Errors are compileGlob's.
func compileNodes(pattern string) ([]nodeMatcher, error) {
	if _, err := compileGlob(pattern); err != nil {
		return nil, err
	}
	// A valid pattern has no dot inside braces or brackets: it splits
	// into nodes at every dot.
	parts := strings.Split(pattern, ".")
	out := make([]nodeMatcher, len(parts))
	for i, part := range parts {
		if !strings.ContainsAny(part, "*?[{") {
			out[i].literal = part
			continue
		}
		g, err := compileGlob(part)
		if err != nil {
			return nil, err
		}
		out[i].re = g.re
	}
	return out, nil
}

// match reports whether path (of g.nodes nodes) matches.
func (g *glob) match(path string) bool { return g.re.MatchString(path) }

type globCompiler struct {
	src string
	i   int
}

// node translates from c.i until the end of the pattern, or, inside
// braces (depth > 0), until the ',' or '}' ending the alternative.
func (c *globCompiler) node(b *strings.Builder, depth int) error {
	for c.i < len(c.src) {
		ch := c.src[c.i]
		switch ch {
		case '*':
			b.WriteString(`[^.]*`)
		case '?':
			b.WriteString(`[^.]`)
		case '.':
			if depth > 0 {
				return errors.New("a dot inside braces")
			}
			b.WriteString(`\.`)
		case '[':
			if err := c.class(b); err != nil {
				return err
			}
			continue
		case '{':
			if depth+1 > maxGlobNest {
				return fmt.Errorf("braces nested more than %d deep", maxGlobNest)
			}
			c.i++
			b.WriteString(`(?:`)
			for {
				if err := c.node(b, depth+1); err != nil {
					return err
				}
				if c.i >= len(c.src) {
					return errors.New("unterminated {")
				}
				if c.src[c.i] == '}' {
					break
				}
				b.WriteByte('|') // a ','
				c.i++
			}
			b.WriteByte(')')
		case ',', '}':
			if depth > 0 {
				return nil
			}
			b.WriteString(regexp.QuoteMeta(string(ch)))
		default:
			j := c.i
			for j < len(c.src) && !strings.ContainsRune("*?.[{},", rune(c.src[j])) {
				j++
			}
			b.WriteString(regexp.QuoteMeta(c.src[c.i:j]))
			c.i = j
			continue
		}
		c.i++
	}
	return nil
}

// class translates a character class starting at c.i ('[').
func (c *globCompiler) class(b *strings.Builder) error {
	j := c.i + 1
	neg := j < len(c.src) && (c.src[j] == '!' || c.src[j] == '^')
	if neg {
		j++
	}
	start := j
	// A ']' right after the opening (or the negation) is a member.
	if j < len(c.src) && c.src[j] == ']' {
		j++
	}
	for j < len(c.src) && c.src[j] != ']' {
		j++
	}
	if j >= len(c.src) {
		return errors.New("unterminated [")
	}
	body := c.src[start:j]
	if strings.Contains(body, ".") {
		return errors.New("a dot inside [ ]")
	}
	b.WriteByte('[')
	if neg {
		b.WriteString(`^.`)
	}
	for k := 0; k < len(body); k++ {
		ch := body[k]
		switch {
		case ch == '-' && k > 0 && k < len(body)-1:
			if body[k-1] > body[k+1] {
				return fmt.Errorf("range %c-%c is reversed", body[k-1], body[k+1])
			}
			b.WriteByte('-')
		case ch < 0x80 && strings.IndexByte(`\[]^-&~|`, ch) >= 0:
			b.WriteByte('\\')
			b.WriteByte(ch)
		default:
			b.WriteByte(ch)
		}
	}
	b.WriteByte(']')
	c.i = j + 1
	return nil
}

// clip cuts long patterns in messages.
func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}
