package render

import (
	"context"
	"fmt"
	"regexp"
	"regexp/syntax"
	"sort"
	"strings"
)

// Graphite 1.1 tags. A tagged series is named "name;k1=v1;k2=v2" with
// the keys sorted; its tags object is {k1: v1, k2: v2, "name": name}.
// Untagged series have only {"name": path}.

// TagTerm is one seriesByTag expression: Tag Op Value with Op one of
// "=", "!=", "=~", "!=~". Regular expressions are anchored at the start.
type TagTerm struct {
	Tag, Op, Value string
}

// TagSource is a [Source] that indexes tagged series. Sources without it
// have no tagged series: seriesByTag finds nothing, as graphite-web's
// DummyTagDB.
type TagSource interface {
	// FindTagged returns the names ("name;k=v;...") of tagged series that
	// may match terms: a superset is allowed (the caller filters), so an
	// implementation may use only the terms that need a non-empty value.
	FindTagged(ctx context.Context, terms []TagTerm) ([]string, error)
}

// TagLister is a [TagSource] that lists tags and tag values from an index
// of them, so that /tags/autoComplete without expressions answers without
// reading every tagged name. Implementations must be safe for concurrent
// use.
type TagLister interface {
	TagSource
	// TagNames returns every tag of the tagged series, "name" included,
	// sorted.
	TagNames(ctx context.Context) ([]string, error)
	// TagValues returns the distinct values of tag beginning with prefix,
	// sorted, at most limit of them (0: all).
	TagValues(ctx context.Context, tag, prefix string, limit int) ([]string, error)
}

var tagSpec = regexp.MustCompile(`^([^;!=]+)(!?=~?)([^;]*)$`)

// ParseTagTerm parses "tag=value", "tag!=value", "tag=~re", "tag!=~re".
func ParseTagTerm(s string) (TagTerm, error) {
	m := tagSpec.FindStringSubmatch(s)
	if m == nil {
		return TagTerm{}, fmt.Errorf("invalid tagspec %q", s)
	}
	return TagTerm{Tag: m[1], Op: m[2], Value: m[3]}, nil
}

// tagFilter is a compiled list of terms.
type tagFilter struct {
	terms []TagTerm
	res   []*regexp.Regexp // per term, for =~ and !=~
}

// compileTagFilter checks terms as graphite-web does: at least one term
// must not match the empty value (a term matching empty also selects
// series without the tag).
func compileTagFilter(terms []TagTerm) (*tagFilter, error) {
	f := &tagFilter{terms: terms, res: make([]*regexp.Regexp, len(terms))}
	allEmpty := true
	for i, t := range terms {
		re, err := t.regexp()
		if err != nil {
			return nil, err
		}
		f.res[i] = re
		if !f.matchValue(i, "") {
			allEmpty = false
		}
	}
	if allEmpty {
		return nil, inputErrorf("At least one tagspec must not match the empty string")
	}
	return f, nil
}

// regexp compiles the expression of a "=~" or "!=~" term, anchored at
// the start as graphite-web anchors it; nil for "=" and "!=".
func (t TagTerm) regexp() (*regexp.Regexp, error) {
	switch t.Op {
	case "=", "!=":
		return nil, nil
	case "=~", "!=~":
	default:
		return nil, inputErrorf("seriesByTag: invalid operator %q", t.Op)
	}
	spec := t.Value
	if !strings.HasPrefix(spec, "^") {
		spec = "^(" + spec + ")"
	}
	if len(spec) > maxRegexpLen {
		return nil, inputErrorf("seriesByTag: expression longer than %d bytes", maxRegexpLen)
	}
	re, err := regexp.Compile(spec)
	if err != nil {
		return nil, inputErrorf("seriesByTag: invalid regular expression %q: %v", t.Value, err)
	}
	return re, nil
}

// ValuePrefix returns a literal that every value an "=~" term matches
// begins with (graphite-web anchors the expression at the start), so that
// a [TagSource] can look at the values in that range of its sorted values
// only; "" when there is none to be sure of (other operators, an
// alternation or a class first, case folding, an invalid expression).
func (t TagTerm) ValuePrefix() string {
	if t.Op != "=~" {
		return ""
	}
	spec := t.Value
	if !strings.HasPrefix(spec, "^") {
		spec = "^(" + spec + ")"
	}
	if len(spec) > maxRegexpLen {
		return ""
	}
	re, err := syntax.Parse(spec, syntax.Perl) // the flags regexp.Compile uses
	if err != nil {
		return ""
	}
	p, _ := literalPrefix(re)
	return p
}

// literalPrefix returns the literal every match of re begins with, and
// whether re matches exactly that literal (so what follows re extends it).
func literalPrefix(re *syntax.Regexp) (prefix string, complete bool) {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return "", false
		}
		return string(re.Rune), true
	case syntax.OpEmptyMatch, syntax.OpBeginText:
		return "", true
	case syntax.OpCapture:
		return literalPrefix(re.Sub[0])
	case syntax.OpConcat:
		var b strings.Builder
		for _, sub := range re.Sub {
			p, c := literalPrefix(sub)
			b.WriteString(p)
			if !c {
				return b.String(), false
			}
		}
		return b.String(), true
	}
	return "", false
}

// Matcher returns the test seriesByTag applies to the value of t.Tag
// ("" for a series without the tag), for a [TagSource] narrowing its
// candidates: a term whose test passes "" is not a positive one and
// cannot narrow by itself. The test is safe for concurrent use.
func (t TagTerm) Matcher() (func(value string) bool, error) {
	re, err := t.regexp()
	if err != nil {
		return nil, err
	}
	f := &tagFilter{terms: []TagTerm{t}, res: []*regexp.Regexp{re}}
	return func(v string) bool { return f.matchValue(0, v) }, nil
}

func (f *tagFilter) matchValue(i int, v string) bool {
	t := f.terms[i]
	switch t.Op {
	case "=":
		return v == t.Value
	case "!=":
		return v != t.Value
	case "=~":
		return f.res[i].MatchString(v)
	default:
		return !f.res[i].MatchString(v)
	}
}

// match reports whether a tagged name satisfies every term; a missing
// tag has the empty value. Values are read from the name without
// allocating; only a name that passes every term is fully validated.
func (f *tagFilter) match(name string) bool {
	for i, t := range f.terms {
		if !f.matchValue(i, tagValue(name, t.Tag)) {
			return false
		}
	}
	_, err := ParseTaggedName(name)
	return err == nil
}

// tagValue returns the value of tag in a tagged name ("" if absent); the
// name tag is the part before the first ';' without leading '~'. A tag
// given twice has its last value, as graphite-web's parser keeps it.
func tagValue(name, tag string) string {
	metric, rest, _ := strings.Cut(name, ";")
	if tag == "name" {
		return strings.TrimLeft(metric, "~")
	}
	v := ""
	for rest != "" {
		var seg string
		seg, rest, _ = strings.Cut(rest, ";")
		if len(seg) > len(tag) && seg[len(tag)] == '=' && seg[:len(tag)] == tag {
			v = seg[len(tag)+1:]
		}
	}
	return v
}

// ParseTaggedName splits "name;k=v;..." into tags as graphite-web's
// TaggedSeries.parse does: the tags in order, then "name" (leading '~'
// stripped). Tag keys may not hold ";!^=", values may not hold ';' or
// start with '~', neither may be empty.
func ParseTaggedName(path string) (tagSet, error) {
	segs := strings.Split(path, ";")
	if segs[0] == "" {
		return nil, fmt.Errorf("cannot parse path %q, no metric found", path)
	}
	var tags tagSet
	for _, seg := range segs[1:] {
		k, v, ok := strings.Cut(seg, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("cannot parse path %q, invalid segment %q", path, seg)
		}
		if err := ValidateTag(k, v); err != nil {
			return nil, err
		}
		tags = tags.with(k, v)
	}
	name := strings.TrimLeft(segs[0], "~")
	if name == "" {
		return nil, fmt.Errorf("cannot use metric name %q as tag value", segs[0])
	}
	return tags.with("name", name), nil
}

// ValidateTag applies graphite-web's rules to one tag and value.
func ValidateTag(k, v string) error {
	switch {
	case k == "":
		return fmt.Errorf("tag may not be empty")
	case v == "":
		return fmt.Errorf("value for tag %q may not be empty", k)
	case strings.ContainsAny(k, ";!^="):
		return fmt.Errorf("tag %q holds one of the characters ;!^=", k)
	case strings.Contains(v, ";"):
		return fmt.Errorf("value %q of tag %q holds ';'", v, k)
	case v[0] == '~':
		return fmt.Errorf("value %q of tag %q starts with '~'", v, k)
	}
	return nil
}

// FormatTaggedName is graphite-web's TaggedSeries.format: the name, then
// ";k=v" for every other tag sorted as strings.
func FormatTaggedName(name string, tags map[string]string) string {
	parts := make([]string, 0, len(tags))
	for k, v := range tags {
		if k != "name" {
			parts = append(parts, ";"+k+"="+v)
		}
	}
	sort.Strings(parts)
	return name + strings.Join(parts, "")
}

// seriesTags is the tags object of a fetched series: parsed from a tagged
// name, else {"name": name}.
func seriesTags(name string) tagSet {
	if strings.Contains(name, ";") {
		if t, err := ParseTaggedName(name); err == nil {
			return t
		}
	}
	return tagSet{{"name", name}}
}

// seriesByTag finds the tagged series matching the expressions and
// fetches them; each carries the call as written as its path expression.
func seriesByTag(ev *evaluator, a *args) ([]*series, error) {
	if a.call == nil {
		return nil, inputErrorf("seriesByTag must be called in a target")
	}
	var terms []TagTerm
	for _, v := range a.multi {
		t, err := ParseTagTerm(v.pyStr())
		if err != nil {
			return nil, inputErrorf("seriesByTag: %v", err)
		}
		terms = append(terms, t)
	}
	f, err := compileTagFilter(terms)
	if err != nil {
		return nil, err
	}
	ts, ok := ev.req.src.(TagSource)
	if !ok {
		return nil, nil
	}
	cands, err := ts.FindTagged(ev.req.ctx, terms)
	if err != nil {
		return nil, fmt.Errorf("finding tagged series: %w", err)
	}
	var names []string
	for _, c := range cands {
		if f.match(c) {
			names = append(names, c)
		}
	}
	// graphite-web fetches with the call's text as the path expression
	return ev.fetchNames(names, a.call.Raw)
}

func groupByTags(ev *evaluator, a *args) ([]*series, error) {
	list := a.seriesList("seriesList")
	callback := a.str("callback", "")
	var tags []string
	byName := false
	for _, v := range a.multi {
		tags = append(tags, v.pyStr())
		if v.pyStr() == "name" {
			byName = true
		}
	}
	if len(tags) == 0 {
		return nil, inputErrorf("groupByTags(): no tags specified")
	}
	name := callback
	if !byName {
		set := map[string]bool{}
		for _, s := range list {
			n, _ := s.tags.get("name")
			set[n] = true
		}
		if len(set) == 1 {
			for n := range set {
				name = n
			}
		}
	}
	key := func(s *series) string {
		base := name
		if byName {
			base, _ = s.tags.get("name")
		}
		var parts []string
		for _, t := range tags {
			if t == "name" {
				continue
			}
			v, _ := s.tags.get(t)
			parts = append(parts, t+"="+v)
		}
		sort.Strings(parts)
		return strings.Join(append([]string{base}, parts...), ";")
	}
	res, err := ev.groupByKey(list, callback, key)
	if err != nil {
		return nil, err
	}
	for _, r := range res {
		r.pathExpr = r.name
		r.tags = seriesTagsLoose(r.name)
	}
	return res, nil
}

// seriesTagsLoose parses a key groupByTags built, where a missing tag
// has an empty value graphite-web's parser would refuse: such a series
// keeps only its name tag.
func seriesTagsLoose(name string) tagSet {
	t, err := ParseTaggedName(name)
	if err != nil {
		return tagSet{{"name", name}}
	}
	return t
}

// FindTagged implements [TagSource] for the in-memory source.
func (m *MemSource) FindTagged(ctx context.Context, terms []TagTerm) ([]string, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []string
	for name := range m.metrics {
		if strings.Contains(name, ";") {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out, nil
}
