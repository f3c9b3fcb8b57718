package tsstore

import (
	"context"
	"slices"
)

// TaggedKeys returns the keys of the tagged series, Graphite's
// "name;k1=v1;k2=v2" with the keys sorted, for which keep reports true
// (nil keeps all), sorted. The Graphite render API selects them with
// seriesByTag and the /tags endpoints; a glob never does.
//
// keep runs without any lock held. Safe for concurrent use with Add, Fetch
// and Find. It visits every tagged key; TaggedKeysWhere narrows by tag
// values first.
func (s *Store) TaggedKeys(ctx context.Context, keep func(key string) bool) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	all := s.idx.taggedWhere(nil)
	out := all[:0]
	for _, k := range all {
		if keep == nil || keep(k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out, nil
}

// TaggedKeysWhere returns the keys of the tagged series satisfying every
// condition (all tagged keys when there is none), sorted, looked up in
// the registry's inverted index of tag values (see TagCond): the cost is
// that of the posting lists involved, not of the registry's size. Safe
// for concurrent use with Add, Fetch and Find.
func (s *Store) TaggedKeysWhere(ctx context.Context, conds []TagCond) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := s.idx.taggedWhere(conds)
	slices.Sort(out)
	return out, nil
}

// TagNames returns the tags of the tagged series ("name" included),
// sorted, from the registry's index. Safe for concurrent use.
func (s *Store) TagNames(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return s.idx.tagNames(), nil
}

// TagValues returns the values tag takes among the tagged series that
// begin with prefix, sorted, at most limit of them (0: all), from the
// registry's index without visiting the series. Safe for concurrent use.
func (s *Store) TagValues(ctx context.Context, tag, prefix string, limit int) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return s.idx.tagValues(tag, prefix, limit), nil
}
