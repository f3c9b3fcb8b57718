package rollup

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/pgts/pgts/internal/pg"
)

// Func is one of the aggregate functions a rollup keeps.
type Func string

// The aggregates a rollup supports. Each is stored as partial states that
// combine exactly (see states).
const (
	Avg   Func = "avg"
	Min   Func = "min"
	Max   Func = "max"
	Sum   Func = "sum"
	Count Func = "count"
	First Func = "first"
	Last  Func = "last"
)

// arity is how many column arguments each function takes.
var arity = map[Func]int{Avg: 1, Min: 1, Max: 1, Sum: 1, Count: 1, First: 2, Last: 2}

// Agg is one aggregate of a rollup: Func over Column (Column is "" for
// count(*)); By is the ordering column of first and last. Name is the
// column the rollup's view shows it under.
type Agg struct {
	Func   Func   `json:"func"`
	Column string `json:"column,omitempty"`
	By     string `json:"by,omitempty"`
	Name   string `json:"name"`
}

// String spells the aggregate as --agg takes it, identifiers quoted.
func (a Agg) String() string {
	var b strings.Builder
	b.WriteString(string(a.Func))
	b.WriteByte('(')
	switch {
	case a.Column == "":
		b.WriteByte('*')
	case a.By != "":
		b.WriteString(pg.QuoteIdent(a.Column) + ", " + pg.QuoteIdent(a.By))
	default:
		b.WriteString(pg.QuoteIdent(a.Column))
	}
	b.WriteString(") AS ")
	b.WriteString(pg.QuoteIdent(a.Name))
	return b.String()
}

// MaxAggBytes bounds an --agg list.
const MaxAggBytes = 16 << 10

// ParseAggs parses an --agg list such as
//
//	avg(data1), min("Data 2") AS lo, count(*), first(data3, time)
//
// Functions are avg, min, max, sum, count (of * or of a column), first and
// last (of a column, ordered by a second column). Identifiers are unquoted
// (folded to lower case, as PostgreSQL does) or double-quoted (kept as
// written, "" for a quote). Each aggregate may be named with AS; the
// default name is FUNC_COLUMN (avg_data1), or count for count(*). Names
// must be distinct. Nothing else is accepted, so the list cannot carry SQL.
func ParseAggs(s string) ([]Agg, error) {
	if len(s) > MaxAggBytes {
		return nil, fmt.Errorf("--agg is %d bytes; at most %d", len(s), MaxAggBytes)
	}
	if !utf8.ValidString(s) {
		return nil, fmt.Errorf("--agg %q is not valid UTF-8", s)
	}
	p := &aggParser{s: s}
	var out []Agg
	seen := map[string]bool{}
	for {
		a, err := p.agg()
		if err != nil {
			return nil, fmt.Errorf("--agg %q: %w", s, err)
		}
		if seen[a.Name] {
			return nil, fmt.Errorf("--agg %q: two aggregates are named %q (name one with AS)", s, a.Name)
		}
		seen[a.Name] = true
		out = append(out, a)
		p.space()
		if p.eof() {
			return out, nil
		}
		if !p.punct(',') {
			return nil, fmt.Errorf("--agg %q: expected a comma or the end at byte %d", s, p.i)
		}
	}
}

type aggParser struct {
	s string
	i int
}

func (p *aggParser) eof() bool { return p.i >= len(p.s) }

func (p *aggParser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n' || p.s[p.i] == '\r') {
		p.i++
	}
}

func (p *aggParser) punct(c byte) bool {
	p.space()
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80
}

func isIdentByte(c byte) bool { return isIdentStart(c) || (c >= '0' && c <= '9') || c == '$' }

// ident reads an identifier: quoted, or unquoted and folded to lower case.
func (p *aggParser) ident(what string) (string, error) {
	p.space()
	if p.eof() {
		return "", fmt.Errorf("expected %s at the end", what)
	}
	var name string
	if p.s[p.i] == '"' {
		var b strings.Builder
		j := p.i + 1
		for {
			if j >= len(p.s) {
				return "", errors.New("unterminated quoted identifier")
			}
			if p.s[j] == '"' {
				if j+1 < len(p.s) && p.s[j+1] == '"' {
					b.WriteByte('"')
					j += 2
					continue
				}
				break
			}
			b.WriteByte(p.s[j])
			j++
		}
		p.i = j + 1
		name = b.String()
	} else {
		if !isIdentStart(p.s[p.i]) {
			return "", fmt.Errorf("expected %s at byte %d", what, p.i)
		}
		j := p.i
		for j < len(p.s) && isIdentByte(p.s[j]) {
			j++
		}
		name = strings.ToLower(p.s[p.i:j])
		p.i = j
	}
	if err := pg.CheckIdent(what, name); err != nil {
		return "", err
	}
	return name, nil
}

func (p *aggParser) agg() (Agg, error) {
	fn, err := p.ident("an aggregate function")
	if err != nil {
		return Agg{}, err
	}
	a := Agg{Func: Func(fn)}
	n, ok := arity[a.Func]
	if !ok {
		return Agg{}, fmt.Errorf("unknown aggregate %q (avg, min, max, sum, count, first, last)", fn)
	}
	if !p.punct('(') {
		return Agg{}, fmt.Errorf("expected ( after %s", fn)
	}
	if a.Func == Count && p.punct('*') {
		// count(*)
	} else {
		if a.Column, err = p.ident("a column"); err != nil {
			return Agg{}, err
		}
		if n == 2 {
			if !p.punct(',') {
				return Agg{}, fmt.Errorf("%s takes a value column and a time column: %s(value, time)", fn, fn)
			}
			if a.By, err = p.ident("a column"); err != nil {
				return Agg{}, err
			}
		}
	}
	if !p.punct(')') {
		return Agg{}, fmt.Errorf("expected ) to close %s( at byte %d", fn, p.i)
	}
	p.space()
	save := p.i
	if w, err := p.ident("AS"); err == nil && w == "as" && !strings.HasPrefix(p.s[save:], `"`) {
		if a.Name, err = p.ident("a name after AS"); err != nil {
			return Agg{}, err
		}
	} else {
		p.i = save
	}
	if a.Name == "" {
		a.Name = string(a.Func)
		if a.Column != "" {
			a.Name += "_" + a.Column
		}
		if err := pg.CheckIdent("aggregate", a.Name); err != nil {
			return Agg{}, fmt.Errorf("%w (name it with AS)", err)
		}
	}
	return a, nil
}

// ParseGroupBy parses a --group-by list of column names such as
// `device, "Site"` (unquoted names folded to lower case). An empty list
// means one group.
func ParseGroupBy(s string) ([]string, error) {
	p := &aggParser{s: s}
	p.space()
	if p.eof() {
		return nil, nil
	}
	var out []string
	for {
		c, err := p.ident("group-by column")
		if err != nil {
			return nil, fmt.Errorf("--group-by %q: %w", s, err)
		}
		if slices.Contains(out, c) {
			return nil, fmt.Errorf("--group-by %q: column %q is given twice", s, c)
		}
		out = append(out, c)
		p.space()
		if p.eof() {
			return out, nil
		}
		if !p.punct(',') {
			return nil, fmt.Errorf("--group-by %q: expected a comma or the end at byte %d", s, p.i)
		}
	}
}
