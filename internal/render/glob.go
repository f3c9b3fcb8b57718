package render

import (
	"fmt"
	"regexp"
	"strings"
)

// Glob is a compiled Graphite path pattern. Each dot-separated node of the
// pattern matches exactly one node of a path:
//
//   - any run of characters      ?      one character
//     [a-z]  one character in the set  [!a]   one character not in it
//     {a,b}  one of the alternatives (each may itself hold * ? [..])
//
// A Glob is immutable and safe for concurrent use.
type Glob struct {
	nodes []*regexp.Regexp // nil entry: literal node, compared in lits
	lits  []string
}

// maxGlobLen bounds a pattern; metric paths are far shorter.
const maxGlobLen = 4096

// CompileGlob compiles a dot-separated Graphite glob.
func CompileGlob(pattern string) (*Glob, error) {
	if pattern == "" || len(pattern) > maxGlobLen {
		return nil, fmt.Errorf("compiling glob %.40q: empty or longer than %d bytes", pattern, maxGlobLen)
	}
	parts := strings.Split(pattern, ".")
	g := &Glob{nodes: make([]*regexp.Regexp, len(parts)), lits: make([]string, len(parts))}
	for i, p := range parts {
		if p == "" {
			return nil, fmt.Errorf("compiling glob %q: empty node %d", pattern, i)
		}
		if !strings.ContainsAny(p, "*?[{") {
			g.lits[i] = p
			continue
		}
		re, err := nodeRegexp(p)
		if err != nil {
			return nil, fmt.Errorf("compiling glob %q: %w", pattern, err)
		}
		g.nodes[i] = re
	}
	return g, nil
}

// Nodes returns how many dot-separated nodes the pattern has.
func (g *Glob) Nodes() int { return len(g.lits) }

// MatchNode reports whether node i of the pattern matches one path node.
func (g *Glob) MatchNode(i int, node string) bool {
	if re := g.nodes[i]; re != nil {
		return re.MatchString(node)
	}
	return g.lits[i] == node
}

// Match reports whether path matches the whole pattern.
func (g *Glob) Match(path string) bool {
	i := 0
	for {
		node, rest, more := strings.Cut(path, ".")
		if i >= len(g.lits) || !g.MatchNode(i, node) {
			return false
		}
		i++
		if !more {
			return i == len(g.lits)
		}
		path = rest
	}
}

// nodeRegexp translates one glob node to an anchored regular expression.
func nodeRegexp(p string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("^(?:")
	if err := globToRegexp(&b, p, false); err != nil {
		return nil, err
	}
	b.WriteString(")$")
	return regexp.Compile(b.String())
}

func globToRegexp(b *strings.Builder, p string, inBraces bool) error {
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		case '[':
			j := strings.IndexByte(p[i+1:], ']')
			if j < 0 {
				return fmt.Errorf("unterminated '[' in %q", p)
			}
			set := p[i+1 : i+1+j]
			neg := strings.HasPrefix(set, "!") || strings.HasPrefix(set, "^")
			if neg {
				set = set[1:]
			}
			if set == "" {
				return fmt.Errorf("empty '[]' in %q", p)
			}
			b.WriteByte('[')
			if neg {
				b.WriteByte('^')
			}
			for k := 0; k < len(set); k++ {
				if set[k] == '-' && k > 0 && k < len(set)-1 {
					b.WriteByte('-')
					continue
				}
				b.WriteString(regexp.QuoteMeta(set[k : k+1]))
			}
			b.WriteByte(']')
			i += j + 1
		case '{':
			if inBraces {
				return fmt.Errorf("nested '{' in %q", p)
			}
			j := strings.IndexByte(p[i+1:], '}')
			if j < 0 {
				return fmt.Errorf("unterminated '{' in %q", p)
			}
			b.WriteString("(?:")
			for k, alt := range strings.Split(p[i+1:i+1+j], ",") {
				if k > 0 {
					b.WriteByte('|')
				}
				if err := globToRegexp(b, alt, true); err != nil {
					return err
				}
			}
			b.WriteByte(')')
			i += j + 1
		default:
			b.WriteString(regexp.QuoteMeta(p[i : i+1]))
		}
	}
	return nil
}
