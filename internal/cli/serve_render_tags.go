package cli

import (
	"context"
	"strings"

	"github.com/pgts/pgts/internal/render"
)

// FindTagged implements render.TagSource over the store's tagged series
// keys (name;k=v;..., keys sorted). It narrows the scan by the terms that
// need an exact name; the render API applies every term afterwards.
func (r renderSource) FindTagged(ctx context.Context, terms []render.TagTerm) ([]string, error) {
	name := ""
	for _, t := range terms {
		if t.Tag == "name" && t.Op == "=" && t.Value != "" {
			name = t.Value
		}
	}
	var keep func(string) bool
	if name != "" {
		prefix := name + ";"
		keep = func(k string) bool { return strings.HasPrefix(k, prefix) }
	}
	return r.s.TaggedKeys(ctx, keep)
}

// renderSource must offer tags to the render API.
var _ render.TagSource = renderSource{}
