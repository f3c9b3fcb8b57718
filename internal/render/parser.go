package render

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// ExprKind says what an [Expr] node is.
type ExprKind int

// Expression node kinds.
const (
	ExprPath   ExprKind = iota // a metric glob: Str
	ExprCall                   // a function call: Str (name), Args, Kwargs
	ExprNumber                 // Num, with IsInt for integer literals
	ExprString                 // Str, the raw text between the quotes
	ExprBool                   // Bool
	ExprNone                   // the keyword None
)

// Expr is a parsed target expression. Immutable after Parse returns.
type Expr struct {
	Kind   ExprKind
	Pos    int // byte offset of the node in the source
	Str    string
	Num    float64
	IsInt  bool
	Bool   bool
	Args   []*Expr
	Kwargs []Kwarg
	Raw    string // a call's source text from its name to ')', as written
}

// Kwarg is a keyword argument, name=value.
type Kwarg struct {
	Name  string
	Value *Expr
}

// String renders the expression in canonical form: no spaces, double
// quotes, calls and globs as written.
func (e *Expr) String() string {
	var b strings.Builder
	e.write(&b)
	return b.String()
}

func (e *Expr) write(b *strings.Builder) {
	switch e.Kind {
	case ExprPath:
		b.WriteString(e.Str)
	case ExprNumber:
		if e.IsInt {
			b.WriteString(strconv.FormatFloat(e.Num, 'f', -1, 64))
		} else {
			b.WriteString(pyRepr(e.Num))
		}
	case ExprString:
		b.WriteString(`"` + e.Str + `"`)
	case ExprBool:
		b.WriteString(strconv.FormatBool(e.Bool))
	case ExprNone:
		b.WriteString("None")
	case ExprCall:
		b.WriteString(e.Str)
		b.WriteByte('(')
		for i, a := range e.Args {
			if i > 0 {
				b.WriteByte(',')
			}
			a.write(b)
		}
		for i, kw := range e.Kwargs {
			if i > 0 || len(e.Args) > 0 {
				b.WriteByte(',')
			}
			b.WriteString(kw.Name + "=")
			kw.Value.write(b)
		}
		b.WriteByte(')')
	}
}

var (
	numberRe = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?([eE]-?[0-9]+)?$`)
	identRe  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	kwargRe  = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)
)

// Parse parses one target expression with Graphite's grammar: a glob,
// a call name(arg, ..., key=value, ...) whose arguments are expressions,
// numbers, strings in either quote, true/false, None or inf, and pipes
// "a.b | scale(2)" meaning scale(a.b, 2). maxDepth bounds call nesting
// (0 means 64). Errors are *ParseError.
func Parse(s string, maxDepth int) (*Expr, error) {
	if maxDepth <= 0 {
		maxDepth = 64
	}
	p := &parser{lex: lexer{src: s}, maxDepth: maxDepth}
	if err := p.advance(); err != nil {
		return nil, err
	}
	e, err := p.expr(0)
	if err != nil {
		return nil, err
	}
	if p.tok.Kind != tokEOF {
		return nil, &ParseError{Pos: p.tok.Pos, Msg: fmt.Sprintf("unexpected %s after expression", p.describe())}
	}
	if e.Kind != ExprPath && e.Kind != ExprCall {
		return nil, &ParseError{Pos: e.Pos, Msg: "a target must be a metric path or a function call"}
	}
	return e, nil
}

// parser is a recursive-descent parser with one token of lookahead.
type parser struct {
	lex      lexer
	tok      token
	maxDepth int
}

func (p *parser) advance() error {
	t, err := p.lex.next()
	if err != nil {
		return err
	}
	p.tok = t
	return nil
}

func (p *parser) describe() string {
	switch p.tok.Kind {
	case tokEOF:
		return "end of input"
	case tokString:
		return "string"
	case tokWord:
		return strconv.Quote(p.tok.Text)
	}
	return p.tok.Kind.String()
}

// expr := primary { '|' call }
func (p *parser) expr(depth int) (*Expr, error) {
	if depth > p.maxDepth {
		return nil, &ParseError{Pos: p.tok.Pos, Msg: fmt.Sprintf("expression nested deeper than %d", p.maxDepth)}
	}
	e, err := p.primary(depth)
	if err != nil {
		return nil, err
	}
	for p.tok.Kind == tokPipe {
		if err := p.advance(); err != nil {
			return nil, err
		}
		if p.tok.Kind != tokWord || !identRe.MatchString(p.tok.Text) {
			return nil, &ParseError{Pos: p.tok.Pos, Msg: fmt.Sprintf("expected a function call after '|', found %s", p.describe())}
		}
		depth++
		if depth > p.maxDepth {
			return nil, &ParseError{Pos: p.tok.Pos, Msg: fmt.Sprintf("expression nested deeper than %d", p.maxDepth)}
		}
		c, err := p.primary(depth)
		if err != nil {
			return nil, err
		}
		if c.Kind != ExprCall {
			return nil, &ParseError{Pos: c.Pos, Msg: "expected a function call after '|'"}
		}
		c.Args = append([]*Expr{e}, c.Args...)
		e = c
	}
	return e, nil
}

// primary := string | word | name '(' args ')'
func (p *parser) primary(depth int) (*Expr, error) {
	t := p.tok
	switch t.Kind {
	case tokString:
		if err := p.advance(); err != nil {
			return nil, err
		}
		return &Expr{Kind: ExprString, Pos: t.Pos, Str: t.Text}, nil
	case tokWord:
	default:
		return nil, &ParseError{Pos: t.Pos, Msg: fmt.Sprintf("expected an expression, found %s", p.describe())}
	}
	if err := p.advance(); err != nil {
		return nil, err
	}
	if p.tok.Kind == tokLParen && identRe.MatchString(t.Text) {
		return p.call(t, depth)
	}
	afterNumber := p.tok.Kind == tokComma || p.tok.Kind == tokRParen || p.tok.Kind == tokEOF
	if afterNumber && numberRe.MatchString(t.Text) {
		f, err := strconv.ParseFloat(t.Text, 64)
		if err != nil {
			return nil, &ParseError{Pos: t.Pos, Msg: fmt.Sprintf("bad number %q", t.Text)}
		}
		isInt := !strings.ContainsAny(t.Text, ".eE")
		return &Expr{Kind: ExprNumber, Pos: t.Pos, Num: f, IsInt: isInt}, nil
	}
	switch strings.ToLower(t.Text) {
	case "true", "false":
		return &Expr{Kind: ExprBool, Pos: t.Pos, Bool: strings.EqualFold(t.Text, "true")}, nil
	case "none":
		return &Expr{Kind: ExprNone, Pos: t.Pos}, nil
	case "inf":
		return &Expr{Kind: ExprNumber, Pos: t.Pos, Num: posInf}, nil
	}
	if err := checkPath(t.Text); err != nil {
		return nil, &ParseError{Pos: t.Pos, Msg: err.Error()}
	}
	return &Expr{Kind: ExprPath, Pos: t.Pos, Str: t.Text}, nil
}

// call parses the argument list after name; p.tok is '('.
func (p *parser) call(name token, depth int) (*Expr, error) {
	e := &Expr{Kind: ExprCall, Pos: name.Pos, Str: name.Text}
	if err := p.advance(); err != nil {
		return nil, err
	}
	if p.tok.Kind == tokRParen {
		e.Raw = p.lex.src[name.Pos : p.tok.Pos+1]
		return e, p.advance()
	}
	for {
		if p.tok.Kind == tokWord && kwargRe.MatchString(p.tok.Text) {
			k := strings.IndexByte(p.tok.Text, '=')
			kwName := p.tok.Text[:k]
			// Re-lex from just after '=': the value may be any expression.
			p.lex.pos = p.tok.Pos + k + 1
			if err := p.advance(); err != nil {
				return nil, err
			}
			v, err := p.expr(depth + 1)
			if err != nil {
				return nil, err
			}
			e.Kwargs = append(e.Kwargs, Kwarg{Name: kwName, Value: v})
		} else {
			if len(e.Kwargs) > 0 {
				return nil, &ParseError{Pos: p.tok.Pos, Msg: "positional argument after keyword argument"}
			}
			a, err := p.expr(depth + 1)
			if err != nil {
				return nil, err
			}
			e.Args = append(e.Args, a)
		}
		switch p.tok.Kind {
		case tokComma:
			if err := p.advance(); err != nil {
				return nil, err
			}
		case tokRParen:
			e.Raw = p.lex.src[name.Pos : p.tok.Pos+1]
			return e, p.advance()
		default:
			return nil, &ParseError{Pos: p.tok.Pos, Msg: fmt.Sprintf("expected ',' or ')' in call to %s, found %s", e.Str, p.describe())}
		}
	}
}

// checkPath rejects globs Graphite's grammar rejects: empty nodes.
func checkPath(s string) error {
	for i, n := range strings.Split(s, ".") {
		if n == "" {
			return fmt.Errorf("empty node %d in path %q", i, s)
		}
	}
	return nil
}
