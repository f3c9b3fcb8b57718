package cli

import (
	"context"

	"github.com/pgts/pgts/internal/render"
	"github.com/pgts/pgts/internal/tsstore"
)

// FindTagged implements render.TagSource over the store's tagged series
// keys (name;k=v;..., keys sorted). The positive terms (those the empty
// value fails: "=" with a value, "=~" not matching "") are looked up in
// the store's inverted index of tag values; the render API applies every
// term to what they select. Without a positive term (only the /tags
// endpoints ask so) every tagged key is returned.
func (r renderSource) FindTagged(ctx context.Context, terms []render.TagTerm) ([]string, error) {
	var conds []tsstore.TagCond
	for _, t := range terms {
		match, err := t.Matcher()
		if err != nil {
			return nil, err
		}
		switch {
		case match(""):
			// Also selects series without the tag: not a narrowing term.
		case t.Op == "=":
			conds = append(conds, tsstore.TagCond{Tag: t.Tag, Value: t.Value})
		default:
			conds = append(conds, tsstore.TagCond{Tag: t.Tag, Match: match, Prefix: t.ValuePrefix()})
		}
	}
	return r.s.TaggedKeysWhere(ctx, conds)
}

// TagNames implements render.TagLister from the store's index.
func (r renderSource) TagNames(ctx context.Context) ([]string, error) {
	return r.s.TagNames(ctx)
}

// TagValues implements render.TagLister from the store's index.
func (r renderSource) TagValues(ctx context.Context, tag, prefix string, limit int) ([]string, error) {
	return r.s.TagValues(ctx, tag, prefix, limit)
}

// renderSource must offer tags to the render API.
var (
	_ render.TagSource = renderSource{}
	_ render.TagLister = renderSource{}
)
