package tsstore

import (
	"context"
	"slices"
	"strings"
)

// TaggedKeys returns the keys of the tagged series, Graphite's
// "name;k1=v1;k2=v2" with the keys sorted, for which keep reports true
// (nil keeps all), sorted. The Graphite render API selects them with
// seriesByTag and the /tags endpoints; a glob never does.
//
// keep runs with a shard lock held: it must be quick and must not call
// the Store. Safe for concurrent use with Add, Fetch and Find. The scan
// is over the series registry in memory (every registered series is
// there from Open on), about a microsecond per thousand keys.
func (s *Store) TaggedKeys(ctx context.Context, keep func(key string) bool) ([]string, error) {
	var out []string
	for i := range s.shard {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		sh := &s.shard[i]
		sh.mu.Lock()
		for key := range sh.m {
			if strings.IndexByte(key, ';') >= 0 && (keep == nil || keep(key)) {
				out = append(out, key)
			}
		}
		sh.mu.Unlock()
	}
	slices.Sort(out)
	return out, nil
}
